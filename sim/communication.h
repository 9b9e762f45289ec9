// Where the time goes: each kind of communication's total and exposed time, per rank and per run,
// from an executed timeline (sim/engine.h).
//
// Kinds (CommKindName gives the stable keys the outputs use):
//   pp_p2p       pipeline stage-boundary transfers (TaskKind::kTransfer)
//   tp           tensor-parallel rings (PartKind::kTpRing parts, sim/task_program.h)
//   cp           ring attention (PartKind::kCpRing parts)
//   dp           data-parallel gradient collectives (all-reduce, ZeRO-1's and 2's reduce-scatter
//                and all-gather, FSDP's (ZeRO-3's) parameter all-gathers and gradient
//                reduce-scatters, the experts' gradients' all-reduce): their steps
//                (TaskKind::kAllReduce) and their timers (TaskKind::kDelay: NCCL's fixed latency,
//                the join of a two-part step); the timers of gradient buckets becoming ready
//                (TaskGraph::bucket_timers) are progress through a backward, not communication, and
//                are left out
//   ep_alltoall  expert-parallel all-to-alls (PartKind::kAllToAll parts)
//   offload      activation offload copies to and from host memory (TaskKind::kHostCopy), both
//                directions; a reload's exposed time is the backward waiting for it
//
// Definitions (also in README.md):
//   in flight(r, K)  the union of the intervals of rank r's activities of kind K in the timeline
//                    (a task's [start, end], a program part's [part_start, part_end]). Parts and
//                    collective steps and timers belong to their task's rank; a pipeline transfer
//                    belongs to its receiving rank (Task::peer), and also to its sending rank when
//                    the p2p mode is not eager (the sender blocks in Megatron's and torch's calls).
//   computing(r)     the union of rank r's compute: a compute task without MoE parts computes
//                    over [start, start + Task::duration_s] (its rings run after that, or
//                    alongside it with tp_comm_overlap; ring attention alongside it); a task with
//                    MoE parts over its kCompute parts; plus its optimizer steps.
//   total_s(r, K)    the measure of in flight(r, K)
//   exposed_s(r, K)  the measure of in flight(r, K) minus computing(r): communication the rank
//                    waited on with nothing to compute.
// Kinds are measured separately: two kinds in flight at once both count the time.
// Only replica 0 is measured: with folded replicas it is the only one simulated, and with every
// replica simulated replica 0 stands for them (they run the same program; the collectives differ
// only by where their rings start). The run's figures are the maximum over ranks of each of
// total_s and exposed_s, with the (first) rank that has it; they need not be the same rank.
// The tensor-parallel steps' latencies but one are in the compute's duration (ComputeLoadOf,
// sim/task_graph.h) and so count as computing.
//
// Cost: one pass over the tasks and parts, then a sort of each rank's intervals per kind:
// O(n log n) in the tasks and parts.
#ifndef PPSIM_SIM_COMMUNICATION_H_
#define PPSIM_SIM_COMMUNICATION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"
#include "sim/task_graph.h"

namespace ppsim {

// A kind of communication. Adding one: a value here, its key in kCommKindNames
// (sim/communication.cc), and the activities it collects in CollectIntervals.
enum class CommKind : uint8_t { kPpP2p, kTp, kCp, kDp, kEpAllToAll, kOffload };
inline constexpr int kNumCommKinds = 6;

// "pp_p2p", "tp", "cp", "dp", "ep_alltoall", "offload": the JSON keys.
std::string_view CommKindName(CommKind kind);
inline CommKind CommKindAt(int i) { return static_cast<CommKind>(i); }

struct CommSeconds {
  double total_s = 0;
  double exposed_s = 0;
};

// One rank's figures, per kind (indexed by CommKind).
struct RankCommunication {
  std::array<CommSeconds, kNumCommKinds> kinds = {};
};

struct RunCommunication {
  // Whether the run has any activity of the kind on replica 0 (even one that takes no time, as
  // transfers on an ideal platform without latency).
  std::array<bool, kNumCommKinds> occurs = {};
  // Per kind: the largest total_s and the largest exposed_s over ranks, and the first rank with
  // each.
  std::array<CommSeconds, kNumCommKinds> max = {};
  std::array<int32_t, kNumCommKinds> total_rank = {};
  std::array<int32_t, kNumCommKinds> exposed_rank = {};
  std::vector<RankCommunication> ranks;  // indexed by rank
};

// An interval of exposed communication of one kind on one rank, in seconds.
struct ExposedInterval {
  double start_s = 0;
  double end_s = 0;
  CommKind kind = CommKind::kPpP2p;
};

// The figures of a run of `num_ranks` ranks (replica 0), as defined above.
RunCommunication ComputeCommunication(const TaskGraph& graph, const Timeline& timeline,
                                      int32_t num_ranks);

// Per rank, its exposed intervals: kind by kind, each kind's in time order, disjoint within a
// kind (kinds may overlap each other). Their lengths sum to exposed_s.
std::vector<std::vector<ExposedInterval>> ExposedIntervals(const TaskGraph& graph,
                                                           const Timeline& timeline,
                                                           int32_t num_ranks);

// A stretch of a rank's exposed time during which the same kinds are exposed: bit k of `kinds`
// is CommKind k.
struct ExposedSegment {
  double start_s = 0;
  double end_s = 0;
  uint32_t kinds = 0;
};

// Per rank, its exposed intervals (all kinds) cut into maximal disjoint segments of one set of
// kinds, in time order: what a trace draws on one track.
std::vector<std::vector<ExposedSegment>> ExposedSegments(const TaskGraph& graph,
                                                         const Timeline& timeline,
                                                         int32_t num_ranks);

// "tp", or the kinds of `kinds` joined by '+' in CommKind order ("pp_p2p+dp").
std::string ExposedKindsName(uint32_t kinds);

}  // namespace ppsim

#endif  // PPSIM_SIM_COMMUNICATION_H_
