// A profiler trace (interop/profiler_trace.h) turned into what ppsim uses: per-stage medians of
// F/I/W/B, the measured order, an editable profile (models/profile.proto, textproto with comments
// saying where each number came from) and a summary (`ppsim profile`, table or JSON).
//
// How numbers are taken:
//   steps        each ProfilerStep's time is the median over the ranks of its duration; the
//                first step is skipped when there are several (warm-up), the rest are steady
//   action time  with GPU kernels: the union of the action's compute kernels' intervals (NCCL
//                kernels excluded). Without (CPU-only traces): the action's CPU range less the
//                time in blocking receives inside it (gloo:recv, nccl:recv, c10d::recv_), plus
//                the runtime's separate SEND_F / SEND_B range of the same stage and microbatch
//                (the rank's cost of issuing the send)
//   stage F/I/W/B  over the microbatches of the steady steps (and over ranks holding the same
//                stage): the summary gives the median with min, max, p10 and p90; the profile
//                the mean, which keeps each stage's total work, so that the replay of a skewed
//                or noisy trace sums to what ran (a median under-counts a long tail)
//   p2p          with NCCL SendRecv kernels, their median duration; else the p10 of the blocking
//                receive times (a receive whose data was already sent waits only for its tail)
//   stragglers   steps, and ranks' median steps, more than kStragglerThreshold above the median
//   outside      per steady step, the time a rank spends in it outside its pipeline actions
//                (before its first action's CPU start, after its last's CPU end: the optimizer
//                step, zero_grad, the step's waits), the least over the ranks (the others also
//                wait there for their peers); the profile's optimizer_step is its median, each
//                rank's share split evenly over the stages it holds
#ifndef PPSIM_INTEROP_TRACE_PROFILE_H_
#define PPSIM_INTEROP_TRACE_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "interop/profiler_trace.h"

namespace ppsim {

inline constexpr double kStragglerThreshold = 0.10;  // 10% above the median

struct Spread {
  int32_t count = 0;
  double mean_s = 0;
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double p10_s = 0;
  double p90_s = 0;
};

// The median (the mean of the middle two for an even count), extremes and nearest-rank p10/p90.
Spread SpreadOf(std::vector<double> values);

struct StageTimes {
  int32_t stage = 0;
  int32_t rank = 0;
  Spread f, i, w, b;
  int64_t message_bytes = -1;  // the largest send/recv its actions carried; -1: unknown
};

struct StepTime {
  std::string name;
  double duration_s = 0;  // median over ranks
  bool steady = false;
};

struct CollectiveTotal {
  TraceCollectiveKind kind = TraceCollectiveKind::kAllReduce;
  int64_t count = 0;
  int64_t bytes = 0;    // summed over the ones whose size is known
  double kernel_s = 0;  // summed durations (kernels, or CPU ranges without kernels)
};

struct RankUse {
  int32_t rank = 0;
  double busy_fraction = -1;  // GPU busy / wall; -1 without GPU kernels
  double median_step_s = 0;   // over the steady steps
  int32_t unattributed_kernels = 0;
  double unattributed_kernel_s = 0;
  int32_t actions_without_kernels = 0;  // with GPU kernels in the trace
};

struct TraceAnalysis {
  bool gpu = false;
  int32_t num_stages = 0;
  int32_t num_microbatches = 0;
  std::vector<StepTime> steps;
  double median_step_s = 0;
  double mean_step_s = 0;  // over the steady steps: what the replay is compared with
  std::vector<StageTimes> stages;
  Spread p2p;
  std::string p2p_source;                    // what p2p was measured from
  Spread outside;                            // time outside the actions (see above)
  std::vector<CollectiveTotal> collectives;  // kinds present, in TraceCollectiveKind order
  std::vector<RankUse> ranks;
  std::vector<std::string> stragglers;
  // The measured order of the first steady step: one row per pipeline rank, its compute
  // actions as torch's CSV writes them ("0F0"); an OVERLAP_F_B as its forward then its backward.
  std::vector<std::vector<std::string>> order;
  std::vector<std::string> notes;  // what was skipped or assumed, for the summary
  // Stages below num_stages with no forward measured (traces of some ranks only): no profile.
  std::vector<int32_t> missing_stages;
};

// InvalidInput "SOURCES: ..." when the traces hold no steps. Without pipeline actions the
// analysis has no stages, and a stage without a forward is in missing_stages (notes say so).
Status AnalyzeTrace(const ProfilerTrace& trace, TraceAnalysis* analysis);

// The profile as textproto (models/profile.proto), one `stages` entry per virtual stage with
// comments giving each number's source.
std::string FormatProfileTextproto(const ProfilerTrace& trace, const TraceAnalysis& analysis);

// The measured order as torch's schedule CSV (interop/torch_schedule_csv.h).
std::string FormatOrderCsv(const TraceAnalysis& analysis);

// The replay of the measured order (filled by `ppsim profile`): the simulated iteration against
// the measured mean steady step, and the command that reruns it.
struct TraceReplay {
  bool ran = false;
  double simulated_s = 0;
  double measured_s = 0;
  double error = 0;  // (simulated - measured) / measured
  std::string command;
  std::string note;  // why it did not run, or what to know
};

std::string FormatSummaryTable(const ProfilerTrace& trace, const TraceAnalysis& analysis,
                               const TraceReplay& replay);
std::string FormatSummaryJson(const ProfilerTrace& trace, const TraceAnalysis& analysis,
                              const TraceReplay& replay);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_TRACE_PROFILE_H_
