// The program of a compute task: the sub-activities it runs besides (or instead of) one block of
// compute, each timed on its own in the timeline's part records (sim/engine.h Timeline).
//
// Mixture-of-experts layers run with expert parallelism (StageCosts::moe, ep > 1) split the
// task into computation and all-to-alls, in which each GPU of the rank sends `bytes` to every
// other member of its expert-parallel group (node-limited: of its node, and `node_bytes` to its
// peer of the same index on each other node), and, folded, receives as much from each (see
// AllToAllFlows in sim/engine.h). Compute parts run one at a time in their order on the GPU;
// all-to-alls one at a time in their order on its communication stream; and each part starts
// only after the part before it of its chunk (a single action is chunk 0; an OVERLAP_F_B pair's
// forward is chunk 0, its backward chunk 1). So a single action's parts run in sequence, and a
// pair's all-to-alls run while the other chunk computes. A task without these parts computes for
// its Task::duration_s.
//
// With StageCosts::delay_wgrad a full backward's weight-gradient parts are chunk kWeightChunk:
// they wait for no all-to-all and none waits for them, and run on the compute stream in their
// order (each right after its I part).
//
// Rings: with tensor parallelism (tp > 1) each GPU of the rank sends `bytes` to the next GPU of
// its tensor-parallel slice for the action's collectives (kTpRing: all its ring steps as one
// transfer per GPU, whose latencies but one are in the compute's duration, ComputeLoadOf); with
// context parallelism (cp > 1) each GPU sends `bytes` of K and V to its peer in the next slice
// (kCpRing: ring attention; serial, the all-gather or all-to-all exchanges of the other
// --cp-comm-types, which the compute waits for). Hierarchical context parallelism (--cp-comm-type
// a2a+p2p) adds a kCpA2a part before: each GPU sends `bytes` to its successor in its inner group
// of A slices (TaskGraph::cp_a2a_size), and the compute and the kCpRing (slice j to slice j + A)
// start once it has ended. Ring attention starts with the task, alongside its compute; the
// tensor-parallel rings start once the compute has ended (after all the MoE parts, when there
// are some) or, with Parallelism::tp_comm_overlap, with the task. A ring ends when all its GPUs'
// transfers have; the task ends when its compute and its rings have ended.
//
// A program lists its MoE parts first, then its rings (kTpRing, kCpA2a, kCpRing), each at most
// once.
#ifndef PPSIM_SIM_TASK_PROGRAM_H_
#define PPSIM_SIM_TASK_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "models/stage_costs.h"
#include "schedules/schedule.h"

namespace ppsim {

enum class PartKind : uint8_t { kCompute, kAllToAll, kTpRing, kCpRing, kCpA2a };
inline bool IsRing(PartKind kind) {
  return kind == PartKind::kTpRing || kind == PartKind::kCpRing || kind == PartKind::kCpA2a;
}

// What a MoE part is, for traces: the layer's attention part, its dispatch all-to-all, its MLP
// part, its combine all-to-all, or the rest of the op (dense layers, embedding, head, what the
// per-op model does not split); backward parts name what they are the backward of. Rings: kRest.
enum class PartName : uint8_t { kRest, kAttention, kDispatch, kMlp, kCombine };

struct TaskPart {
  PartKind kind = PartKind::kCompute;
  PartName name = PartName::kRest;
  uint8_t chunk = 0;      // MoE parts
  bool backward = false;  // MoE parts of a backward (I or B), recomputed forwards excluded
  int32_t layer = 0;      // the stage's MoE layer (0-based) the part belongs to
  double duration_s = 0;  // compute parts
  // All-to-alls: to each other member of the group (node-limited: of its node). Rings: what each
  // GPU of the rank sends to the next one of its ring.
  int64_t bytes = 0;
  int64_t node_bytes = 0;  // node-limited all-to-alls: to the same GPU of each other node
  // kCpRing: the exchange runs before the task's compute, which waits for it (StageCosts::
  // cp_serial), instead of alongside it.
  bool serial = false;
  friend bool operator==(const TaskPart&, const TaskPart&) = default;
};
using TaskProgram = std::vector<TaskPart>;

// The chunk of a backward's W parts split off by StageCosts::delay_wgrad.
inline constexpr uint8_t kWeightChunk = 2;

// No program (TaskGraph::program_of).
inline constexpr uint32_t kNoProgram = ~uint32_t{0};

// The MoE parts of `action` (empty when it has no all-to-all: no MoE layer, a W, ep 1, or a pair
// whose duration --overlap gives). A layer's parts as StageCosts::MoeStage describes; the rest
// of the op's duration (its total minus its MoE layers' parts) runs first in a forward and last
// in a backward. An OVERLAP_F_B pair interleaves its chunks as DeepSeek-V3's Figure 4 (arXiv
// 2412.19437, Sec. 3.2.1): layer i of the forward beside layer i of the backward, computing
// F attention, B MLP, F MLP, B attention while the communication stream runs B combine, F
// dispatch, B dispatch, F combine; a chunk's layers beyond the other's follow in order. The
// pair's compute parts take `compute_slowdown` times their duration (SMs left to the
// all-to-alls).
TaskProgram ProgramOf(const StageCosts& costs, const Action& action, int32_t ep,
                      double compute_slowdown);
// For each part of `program`, the index of the part before it in its chunk (-1: the first, and
// for rings, which belong to no chunk).
std::vector<int32_t> ChunkPredecessors(const TaskProgram& program);

// How many of `program`'s parts are MoE parts (they come before its rings).
inline size_t MoePartCount(const TaskProgram& program) {
  size_t n = program.size();
  while (n > 0 && IsRing(program[n - 1].kind)) --n;
  return n;
}
inline bool HasMoeParts(const TaskProgram& program) {
  return !program.empty() && !IsRing(program.front().kind);
}
// The index of `program`'s ring of kind `ring` (kTpRing or kCpRing), or -1 when it has none.
inline int32_t RingPartOf(const TaskProgram& program, PartKind ring) {
  for (size_t i = program.size(); i > 0 && IsRing(program[i - 1].kind); --i) {
    if (program[i - 1].kind == ring) return static_cast<int32_t>(i - 1);
  }
  return -1;
}

// The distinct programs of a graph's compute tasks, built as the compiler meets them: tasks
// whose actions have the same ops' kinds and stages (not microbatches) and the same ring bytes
// share one, so that the table grows with the stages, not with the tasks.
class ProgramTable {
 public:
  // `ep` and `compute_slowdown` as ProgramOf takes them.
  ProgramTable(const StageCosts& costs, int32_t ep, double compute_slowdown)
      : costs_(costs), ep_(ep), compute_slowdown_(compute_slowdown) {}

  // The program of `action`'s task: its MoE parts, then a kTpRing of `tp_ring_bytes`, a kCpA2a
  // of `cp_a2a_bytes` and a kCpRing of `cp_ring_bytes` (each when > 0). kNoProgram when that is
  // empty.
  uint32_t Of(const Action& action, int64_t tp_ring_bytes, int64_t cp_ring_bytes,
              int64_t cp_a2a_bytes = 0);
  // The programs, indexed by what Of returned. Leaves the table empty.
  std::vector<TaskProgram> Take() { return std::move(programs_); }

 private:
  using Key = std::tuple<int, int, int32_t, int32_t, int64_t, int64_t, int64_t>;
  const StageCosts& costs_;
  int32_t ep_;
  double compute_slowdown_;
  std::map<Key, uint32_t> index_;
  std::vector<TaskProgram> programs_;
};

}  // namespace ppsim

#endif  // PPSIM_SIM_TASK_PROGRAM_H_
