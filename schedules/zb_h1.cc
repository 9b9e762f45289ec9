// ZB-H1: Qi, Wan, Huang, Lin, "Zero Bubble Pipeline Parallelism", ICLR 2024 (arXiv 2401.10241),
// section 3.1 and figure 3. The reference implementation, sail-sg/zero-bubble-pipeline-parallelism
// (tag zero-bubble-v0.1.0, 93af65c60b335eeaece94464a45e5ab0c03dc4cd; read at 0a01bcb7 and
// 6229e790), megatron/core/pipeline_parallel/zb_schedules.py
// (get_zero_bubble_forward_backward_func), does not spell the order out: it searches for one with
// the greedy Graph.manual_order of auto_schedule.py under a memory limit of p activations per stage
// (its default "fixed 1p schedule"). This file writes the handcrafted order of the paper's figure
// deterministically instead.
//
// Stage r keeps 1F1B's warmup (p - r forwards before its first I, i.e. Megatron's p - r - 1 plus
// the first steady forward) and delays each W by r microbatches: I(i), W(i - r), F(p - r + i).
// Every stage then holds p microbatches between F and W (p - r awaiting I, r awaiting W), so the
// peak on stage i (1-based) is (p - i + 1) M_B + (i - 1) M_W, and the W fill the bubbles 1F1B
// leaves at the start and end of the steady phase: the idle time per stage falls from
// (p - 1)(F + B) to (p - 1)(F + I - W).
//
// Fewer microbatches than ranks are accepted, as for 1F1B: the warmup is capped at m, and the
// order is the one planned for p microbatches with the extra microbatches dropped.
#include "schedules/generator.h"
#include "schedules/one_stage_per_rank.h"
#include "schedules/zero_bubble_common.h"

namespace ppsim {

Status GenerateZBH1(const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(StartOneStagePerRank("ZB-H1", params, schedule));
  const int32_t p = params.num_ranks;
  for (int32_t rank = 0; rank < p; ++rank) {
    AppendZeroBubbleStageOrder(StageIndex(rank), params.num_microbatches, /*warmup=*/p - rank,
                               /*weight_delay=*/rank, &schedule->orders[rank]);
  }
  return Status();
}

}  // namespace ppsim
