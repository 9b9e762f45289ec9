// 1F1B: Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN Training" (PipeDream-2BW /
// PipeDream-Flush), ICML 2021, and Megatron-LM's forward_backward_pipelining_without_interleaving
// (NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py): warmup of p - r - 1
// forwards, then one forward and one backward at a time, then the cooldown backwards. Written as
// k = min(p - r, m) forwards followed by B(i), F(k + i) pairs, which is the same order.
#include <algorithm>

#include "schedules/generator.h"
#include "schedules/one_stage_per_rank.h"

namespace ppsim {

Status GenerateOneFOneB(const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(StartOneStagePerRank("1F1B", params, schedule));
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
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
