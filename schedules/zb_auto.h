// The zero-bubble automatic scheduler: ZB-1p, ZB-2p and ZB-auto (Qi, Wan, Huang, Lin, "Zero
// Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241, section 3.1), as the authors released
// it: sail-sg/zero-bubble-pipeline-parallelism, tag zero-bubble-v0.1.0 (93af65c6),
// megatron/core/pipeline_parallel/auto_schedule.py, Graph.manual_order and initial_solution. That
// release runs the heuristic only (its ILP is disabled), and its results are the paper's Table 5
// ZB-1p and ZB-2p columns.
//
// Unlike the other generators this one needs the stages' costs and memory: it places each op
// where it fits in time and memory. One stage per rank.
#ifndef PPSIM_SCHEDULES_ZB_AUTO_H_
#define PPSIM_SCHEDULES_ZB_AUTO_H_

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "schedules/generator.h"
#include "schedules/schedule.h"

namespace ppsim {

// What the scheduler knows of stage s (0 <= s < p). Times are integer ticks of any unit (the
// reference requires integers; ppsim passes nanoseconds), so that its comparisons are exact.
struct ZeroBubbleStage {
  int64_t forward_ticks = 0;          // T_F
  int64_t backward_input_ticks = 0;   // T_B in the paper: ppsim's I
  int64_t backward_weight_ticks = 0;  // T_W
  // T_comm towards stage s + 1: added to F(s) -> F(s + 1) and to I(s + 1) -> I(s). Unused on the
  // last stage.
  int64_t transfer_ticks = 0;
  // The paper's memory deltas: F allocates M_B, I frees M_B - M_W, W frees M_W
  // (0 <= M_W <= M_B). The reference derives them per layer as M_B = 34h + 5as, M_W = 32h.
  int64_t activation_bytes = 0;    // M_B
  int64_t activation_w_bytes = 0;  // M_W
  // The most activation bytes the stage may hold at once (ZB-1p: p x M_B, ZB-2p: 2p x M_B).
  int64_t limit_bytes = 0;
};

struct ZeroBubbleAutoResult {
  // The reference's cost of the schedule: the longest stage span, from the stage's first F start
  // to its last W end, in ticks, with every op as early as its order and dependencies allow.
  int64_t span_ticks = 0;
  // The knobs of the order kept (the first of the eight with the least span, in the reference's
  // order: each knob true first).
  bool allow_bubble_before_first_b = false;
  bool prioritize_b = false;
  bool no_bubble_greedy = false;
};

// Builds the order with the reference's heuristic for every combination of its three knobs and
// keeps the one with the least span. Per stage: as many warmup forwards as the limit and the first
// backward's arrival allow, fewer than the stage before it; then F and I alternate, a W placed
// into each gap it fits, into a smaller gap unless that gap is no larger than how far this stage's
// idle time is below the most idle stage's, and whenever the next F or I would exceed the limit;
// the W left run at the end. A combination that cannot fit an op within a limit, or that leaves an
// op unplaced or before its dependencies, is dropped (the reference would stop at the first).
// InvalidInput when params are not one stage per rank with p, m >= 1, when `stages` does not hold
// p stages with 0 <= M_W <= M_B and ticks in [0, 2^40], or when no combination fits ("ZB-1p
// cannot fit ..."; `name` names the schedule).
Status GenerateZeroBubbleAuto(std::string_view name, const ScheduleParams& params,
                              const std::vector<ZeroBubbleStage>& stages, Schedule* schedule,
                              ZeroBubbleAutoResult* result = nullptr);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_ZB_AUTO_H_
