// 1F1B: Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN Training" (PipeDream-2BW /
// PipeDream-Flush), ICML 2021, and Megatron-LM's forward_backward_pipelining_without_interleaving
// (NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py): warmup of p - r - 1
// forwards, then one forward and one backward at a time, then the cooldown backwards. Written as
// k = min(p - r, m) forwards followed by B(i), F(k + i) pairs, which is the same order.
//
// With --overlap-moe-expert-parallel-comm and one rank, Megatron-LM runs
// combined_1f1b_schedule_for_no_pipelining (megatron/core/pipeline_parallel/combined_1f1b.py,
// read at commit d98e8a64): microbatch 0's forward alone, then microbatch i + 1's forward with
// microbatch i's backward as one combined step (OVERLAP_F_B), then the last backward alone. With
// more ranks Megatron asserts a virtual pipeline size (transformer_config.py): refused here.
#include <algorithm>
#include <string>

#include "schedules/generator.h"
#include "schedules/one_stage_per_rank.h"

namespace ppsim {

Status GenerateOneFOneB(const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(StartOneStagePerRank("1F1B", params, schedule));
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
  if (params.moe_a2a_overlap) {
    if (p != 1) {
      return ScheduleParamError(
          params, "overlap_moe_expert_parallel_comm",
          "Megatron-LM overlaps the expert-parallel all-to-alls with pp > 1 only in its "
          "interleaved schedule (it asserts a virtual pipeline size); got 1F1B with pp " +
              std::to_string(p) + "; valid: 1F1B with pp 1, or Megatron-Interleaved");
    }
    auto& order = schedule->orders[0];
    const StageIndex stage(0);
    order.push_back(Action::Single({OpKind::kForward, stage, MicrobatchIndex(0)}));
    for (int32_t i = 0; i + 1 < m; ++i) {
      order.push_back(
          Action::OverlapForwardBackward({OpKind::kForward, stage, MicrobatchIndex(i + 1)},
                                         {OpKind::kBackward, stage, MicrobatchIndex(i)}));
    }
    order.push_back(Action::Single({OpKind::kBackward, stage, MicrobatchIndex(m - 1)}));
    return Status();
  }
  for (int32_t rank = 0; rank < p; ++rank) {
    const StageIndex stage(rank);
    auto& order = schedule->orders[rank];
    auto forward = [&](int32_t j) {
      order.push_back(Action::Single({OpKind::kForward, stage, MicrobatchIndex(j)}));
    };
    auto backward = [&](int32_t j) {
      order.push_back(Action::Single({OpKind::kBackward, stage, MicrobatchIndex(j)}));
    };
    const int32_t warmup = std::min(p - rank, m);
    for (int32_t j = 0; j < warmup; ++j) forward(j);
    for (int32_t i = 0; i < m; ++i) {
      backward(i);
      if (warmup + i < m) forward(warmup + i);
    }
  }
  return Status();
}

}  // namespace ppsim
