// The program of a compute task whose stage has mixture-of-experts layers run with expert
// parallelism (StageCosts::moe, ep > 1): computation, and all-to-alls in which each GPU of the
// rank sends `bytes` to every other member of its expert-parallel group (node-limited: of its node,
// and `node_bytes` to its peer of the same index on each other node), and, folded, receives as
// much from each (see AllToAllFlows in sim/engine.h). Compute parts run one at a time in their
// order on the GPU; all-to-alls one at a time in their order on its communication stream; and
// each part starts only after the part before it of its chunk (a single action is chunk 0; an
// OVERLAP_F_B pair's forward is chunk 0, its backward chunk 1). So a single action's parts run in
// sequence, and a pair's all-to-alls run while the other chunk computes. Each part is timed in the
// timeline's part records (sim/engine.h Timeline).
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

enum class PartKind : uint8_t { kCompute, kAllToAll };

// What a part is, for traces: the layer's attention part, its dispatch all-to-all, its MLP part,
// its combine all-to-all, or the rest of the op (dense layers, embedding, head, what the per-op
// model does not split); backward parts name what they are the backward of.
enum class PartName : uint8_t { kRest, kAttention, kDispatch, kMlp, kCombine };

struct TaskPart {
  PartKind kind = PartKind::kCompute;
  PartName name = PartName::kRest;
  uint8_t chunk = 0;
  bool backward = false;  // part of a backward (I or B), recomputed forwards excluded
  int32_t layer = 0;      // the stage's MoE layer (0-based) the part belongs to
  double duration_s = 0;  // compute parts
  int64_t bytes = 0;  // all-to-alls: to each other member of the group (node-limited: of its node)
  int64_t node_bytes = 0;  // node-limited all-to-alls: to the same GPU of each other node
  friend bool operator==(const TaskPart&, const TaskPart&) = default;
};
using TaskProgram = std::vector<TaskPart>;

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
// For each part of `program`, the index of the part before it in its chunk (-1: the first).
std::vector<int32_t> ChunkPredecessors(const TaskProgram& program);

// The distinct programs of a graph's compute tasks, built as the compiler meets them: tasks
// whose actions have the same ops' kinds and stages (not microbatches) share one, so that the
// table grows with the stages, not with the tasks.
class ProgramTable {
 public:
  // `ep` and `compute_slowdown` as ProgramOf takes them.
  ProgramTable(const StageCosts& costs, int32_t ep, double compute_slowdown)
      : costs_(costs), ep_(ep), compute_slowdown_(compute_slowdown) {}

  // The program of `action`'s task (ProgramOf), or kNoProgram when that is empty.
  uint32_t Of(const Action& action);
  // The programs, indexed by what Of returned. Leaves the table empty.
  std::vector<TaskProgram> Take() { return std::move(programs_); }

 private:
  using Key = std::tuple<int, int, int32_t, int32_t>;
  const StageCosts& costs_;
  int32_t ep_;
  double compute_slowdown_;
  std::map<Key, uint32_t> index_;
  std::vector<TaskProgram> programs_;
};

}  // namespace ppsim

#endif  // PPSIM_SIM_TASK_PROGRAM_H_
