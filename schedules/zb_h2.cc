// ZB-H2: Qi, Wan, Huang, Lin, "Zero Bubble Pipeline Parallelism", ICLR 2024 (arXiv 2401.10241),
// section 3.1 and figure 4. The reference implementation, sail-sg/zero-bubble-pipeline-parallelism
// (tag zero-bubble-v0.1.0, 93af65c60b335eeaece94464a45e5ab0c03dc4cd; read at 0a01bcb7 and
// 6229e790), megatron/core/pipeline_parallel/zb_schedules.py
// (get_zero_bubble_forward_backward_func), does not spell the order out: it searches for one with
// the greedy Graph.manual_order of auto_schedule.py under the memory limit
// --zero-bubble-max-pending-backward sets (2p activations per stage for ZB-H2). This file writes
// the handcrafted order of the paper's figure deterministically instead.
//
// Stage r warms up with 2(p - 1 - r) + 1 forwards, enough to cover the time until its first
// gradient arrives when F = I = W, and delays each W by 2r microbatches: I(i), W(i - 2r),
// F(2(p - 1 - r) + 1 + i). Every stage then holds 2p - 1 microbatches between F and W, the peak
// on stage i (1-based) is (2p - 2i + 1) M_B + (2i - 2) M_W, and with F = I = W every stage is busy
// without a gap from its first F to its last W (span m(F + I + W)). The paper runs it with its
// optimizer post-validation instead of a synchronization step; that is outside the order.
//
// Fewer microbatches than 2p - 1 are accepted: the warmup is capped at m, and the order is the one
// planned for 2p - 1 microbatches with the extra microbatches dropped (the rule the reference's
// handcrafted ZB-V uses, see zb_v.cc). The bubble is then no longer zero.
#include "schedules/generator.h"
#include "schedules/one_stage_per_rank.h"
#include "schedules/zero_bubble_common.h"

namespace ppsim {

Status GenerateZBH2(const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(StartOneStagePerRank("ZB-H2", params, schedule));
  const int32_t p = params.num_ranks;
  for (int32_t rank = 0; rank < p; ++rank) {
    AppendZeroBubbleStageOrder(StageIndex(rank), params.num_microbatches,
                               /*warmup=*/2 * (p - 1 - rank) + 1, /*weight_delay=*/2 * rank,
                               &schedule->orders[rank]);
  }
  return Status();
}

}  // namespace ppsim
