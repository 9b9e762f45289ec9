// What a run reports: makespan, bubbles and activation memory, from an executed timeline.
//
// Definitions (also in README.md):
//   busy(r)               sum of rank r's compute durations
//   span(r)               rank r's first compute start to its last compute end
//   makespan              earliest start to latest end of any task (compute or transfer)
//   bubble_over_makespan  1 - sum(busy) / (ranks * makespan)
//   bubble_over_ideal     (ranks * makespan - sum(busy)) / sum(busy)     (Megatron's (p-1)/m)
//   stage_bubble_rate     (S - busy(r*)) / S, S = the largest span, r* the (first) rank with it
//                         (the zero-bubble paper's bubble rate)
//   peak activation(r)    running maximum of live activation bytes in r's order: F adds M_B
//                         when it starts; I frees M_B - M_W, W frees M_W, B frees M_B when they
//                         end.
//   static memory(r)      sum of the static bytes (parameters, gradients, optimizer state) of r's
//                         stages
//   memory(r, t)          static + live activation + reserve at the live activation
//                         (RankMemoryBytes); peak memory = its maximum, reached at the peak
//                         activation; oom = peak memory > capacity.
// With data parallelism the per-rank figures are replica 0's (every replica runs the same
// computation); the makespan covers every task of every replica, the all-reduces included.
//
// Links (from the platform's routes; none for XML platforms), per direction:
//   bytes                 bytes of every transfer whose route crosses the link
//   busy                  time during which at least one transfer crosses it
//   utilization           bytes / (bandwidth x makespan): the share of its capacity used
#ifndef PPSIM_SIM_METRICS_H_
#define PPSIM_SIM_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/stage_costs.h"
#include "schedules/schedule.h"
#include "sim/communication.h"
#include "sim/engine.h"
#include "sim/task_graph.h"

namespace ppsim {

// GPU memory a training process holds beyond parameters, gradients, optimizer state and
// activations: a fixed part (CUDA context, NCCL's buffers) and a fraction of the live activations
// (the caching allocator's rounding and fragmentation), so at the peak a fraction of the peak.
struct MemoryReserve {
  int64_t fixed_bytes = 0;
  double activation_fraction = 0;  // >= 0

  // The reserve while `activation_bytes` are live: fixed_bytes + FragmentationBytesAt(activation
  // bytes), in bytes. Non-decreasing in `activation_bytes`.
  int64_t BytesAt(int64_t activation_bytes) const;
  // Its part that grows with the activations: ceil(activation_fraction x activation_bytes).
  int64_t FragmentationBytesAt(int64_t activation_bytes) const;
};

// What a rank's peak memory is made of, in bytes; the parts sum to RankMetrics::peak_memory_bytes
// (Total()). Static parts are the sums of the rank's stages' StageCosts parts; unsplit_static is
// static bytes whose costs gave no parts (zero with a model or a profile). The reserve's parts
// are MemoryReserve's at the peak activation.
struct MemoryBreakdown {
  int64_t weights_bytes = 0;
  int64_t gradients_bytes = 0;
  int64_t optimizer_state_bytes = 0;
  int64_t unsplit_static_bytes = 0;
  int64_t activations_bytes = 0;    // the peak live activations
  int64_t fragmentation_bytes = 0;  // MemoryReserve::FragmentationBytesAt(activations)
  int64_t fixed_reserve_bytes = 0;  // MemoryReserve::fixed_bytes: CUDA context, NCCL's buffers
  int64_t Total() const {
    return weights_bytes + gradients_bytes + optimizer_state_bytes + unsplit_static_bytes +
           activations_bytes + fragmentation_bytes + fixed_reserve_bytes;
  }
};

// A rank's GPU memory, in bytes, while `live_activation_bytes` are live: its static bytes, the
// live activations and reserve.BytesAt(live). Non-decreasing in the live bytes, so over a run its
// maximum is at the peak activation: RankMetrics::peak_memory_bytes. Traces and timelines draw
// memory over time with it, so that their peak is the metrics' to the byte.
int64_t RankMemoryBytes(int64_t static_bytes, int64_t live_activation_bytes,
                        const MemoryReserve& reserve);

// The most live activation bytes with which RankMemoryBytes stays within `capacity_bytes`;
// negative when the static bytes and the reserve alone exceed it.
int64_t MaxLiveActivationBytes(int64_t static_bytes, int64_t capacity_bytes,
                               const MemoryReserve& reserve);

struct RankMetrics {
  int32_t rank = 0;
  double busy_s = 0;
  double span_s = 0;
  double idle_in_span_s = 0;  // span - busy
  double first_start_s = 0;
  double last_end_s = 0;
  int64_t peak_activation_bytes = 0;
  double peak_activation_time_s = 0;  // when the peak was first reached
  int64_t static_memory_bytes = 0;
  int64_t reserve_bytes = 0;          // MemoryReserve::BytesAt(peak activation)
  int64_t peak_memory_bytes = 0;      // RankMemoryBytes at the peak activation
  int64_t memory_capacity_bytes = 0;  // 0: unlimited
  bool oom = false;                   // peak_memory_bytes > memory_capacity_bytes
  MemoryBreakdown memory;             // peak_memory_bytes by component
  double p2p_wait_s = 0;   // blocked in p2p calls (--p2p-mode megatron), within idle_in_span_s
  double optimizer_s = 0;  // its optimizer step (after its span)
};

// Live activation bytes of a rank from `time_s` on.
struct MemorySample {
  double time_s = 0;
  int64_t live_activation_bytes = 0;
};

struct LinkMetrics {
  std::string name;
  bool inter_node = false;
  double bandwidth_bytes_per_s = 0;
  size_t transfers = 0;
  int64_t bytes = 0;
  double busy_s = 0;
  double utilization = 0;
};

// Transfers (stage-boundary, all-reduce and collective steps, tensor- and context-parallel ring
// transfers, all-to-all sends) that stay in a node, or cross nodes.
struct TrafficMetrics {
  size_t transfers = 0;
  int64_t bytes = 0;
  double time_s = 0;  // sum of the transfers' durations
  int64_t alltoall_bytes = 0;  // of `bytes`: the expert-parallel all-to-alls' sends
};

struct RunMetrics {
  double makespan_s = 0;
  double bubble_over_makespan = 0;
  double bubble_over_ideal = 0;
  double stage_bubble_rate = 0;
  size_t num_compute_tasks = 0;
  size_t num_transfer_tasks = 0;   // stage-boundary transfers
  int64_t transfer_bytes = 0;
  size_t num_allreduce_tasks = 0;  // steps of data-parallel all-reduces, per GPU
  int64_t allreduce_bytes = 0;
  double allreduce_tail_s = 0;     // from the last action's end to the last all-reduce step's
  size_t num_wait_tasks = 0;       // blocking p2p calls (--p2p-mode megatron), every replica
  double p2p_wait_s = 0;           // time ranks spent blocked in them, summed over ranks
  size_t num_optimizer_tasks = 0;  // optimizer steps, one per rank and replica with one
  // Expert parallelism: all-to-all calls (one per GPU of a rank and all-to-all part of a program,
  // TaskGraph::programs) and, set by ComputeLinkMetrics, the bytes they send (the compiled GPUs').
  size_t num_alltoall_tasks = 0;
  int64_t alltoall_bytes = 0;
  // Set by ComputeLinkMetrics: every link that carried bytes, in platform order.
  std::vector<LinkMetrics> links;
  TrafficMetrics intra_node;
  TrafficMetrics inter_node;
  std::vector<RankMetrics> ranks;
  int32_t oom_ranks = 0;
  // Each kind of communication's total and exposed time, per rank and the run's (replica 0:
  // sim/communication.h).
  RunCommunication communication;
  // Per rank, every change of live activation bytes in time order (for traces and plots).
  std::vector<std::vector<MemorySample>> memory_timeline;
  // The reserve the per-rank memory counts (what ComputeMetrics was given).
  MemoryReserve reserve;
};

// `memory_capacity_bytes` is each GPU's memory (0: unlimited, nothing is out of memory); a rank's
// peak memory is its static bytes, its peak activations and `reserve`.
RunMetrics ComputeMetrics(const Schedule& schedule, const StageCosts& costs,
                          const TaskGraph& graph, const Timeline& timeline,
                          int64_t memory_capacity_bytes = 0, MemoryReserve reserve = {});

// Fills `metrics->links`, intra_node and inter_node from the transfers' routes on `platform`
// (nothing for an XML platform). Uses metrics->makespan_s.
void ComputeLinkMetrics(const TaskGraph& graph, const PlatformSpec& platform,
                        const Timeline& timeline, RunMetrics* metrics);

// The activation memory rule (see the top of this file) for one action: the bytes its forwards
// allocate when it starts, and the bytes its backwards free when it ends.
int64_t ActivationAllocatedAtStart(const Action& action, const StageCosts& costs);
int64_t ActivationFreedAtEnd(const Action& action, const StageCosts& costs);

// Peak live activation bytes of each rank, from its order alone (a rank runs one op at a time).
std::vector<int64_t> PeakActivationBytes(const Schedule& schedule, const StageCosts& costs);

// Static bytes of each rank: the sum of its stages' (empty costs.static_bytes: zeros).
std::vector<int64_t> StaticBytesPerRank(const Schedule& schedule, const StageCosts& costs);

// Each rank's peak memory by component (its activations at `peak_activation_bytes`): the static
// parts summed over its stages, the rest of its static bytes unsplit, and the reserve's parts.
MemoryBreakdown MemoryBreakdownOf(const Schedule& schedule, const StageCosts& costs, int32_t rank,
                                  int64_t peak_activation_bytes, const MemoryReserve& reserve);

// Each rank's peak memory from its order alone: RankMemoryBytes of its static bytes and its peak
// activation with `reserve` — the peak_memory_bytes ComputeMetrics reports for any timeline.
std::vector<int64_t> PeakMemoryBytes(const Schedule& schedule, const StageCosts& costs,
                                     const MemoryReserve& reserve);

}  // namespace ppsim

#endif  // PPSIM_SIM_METRICS_H_
