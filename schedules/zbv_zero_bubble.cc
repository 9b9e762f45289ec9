// ZB-V as torch.distributed.pipelining's ScheduleZBVZeroBubble builds it (pytorch/pytorch
// torch/distributed/pipelining/schedules.py @ cff2ecc8b32af684662aefe6fe058e41810e26ce,
// ScheduleZBVZeroBubble._calculate_single_rank_operations), after Qi et al., "Zero Bubble
// Pipeline Parallelism", ICLR 2024 (arXiv 2401.10241), Section 6. The pattern is the paper
// authors' handcrafted ZB-V (sail-sg/zero-bubble-pipeline-parallelism
// megatron/core/pipeline_parallel/handcrafted_zb_v, get_zb_v_schedule), not their greedy search.
//
// torch's order is a fixed phase pattern per rank, not a search: warmup forwards on chunk 0, then
// chunk-1 forwards interleaved with chunk 0, then F/I/W triples on chunk 1, a steady state of
// F, I, W on each chunk in turn, and a cooldown of inputs-backwards followed by the deferred
// weight-backwards. It plans n = max(2p - 1, m) microbatches so the warmup is always full and
// blanks the actions of microbatches >= m; those bubbles are simply not emitted here.
//
// The authors' handcrafted ZB-V gives the same order for every configuration, so `ZB-V` is an
// alias of `ZBVZeroBubble`: one generator under two names.
#include <algorithm>
#include <string_view>

#include "schedules/generator.h"
#include "schedules/v_shape.h"

namespace ppsim {

namespace {

// `name` is the one the user chose, for messages.
Status GenerateNamedZBV(std::string_view name, const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(CheckVShapeParams(name, params));
  StartVShapeSchedule(params, schedule);
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
  const int32_t planned = std::max(2 * p - 1, m);

  for (int32_t r = 0; r < p; ++r) {
    const RankIndex rank(r);
    const StageIndex chunk0 = VShapeFirstStage(rank);
    const StageIndex chunk1 = VShapeSecondStage(p, rank);
    auto& order = schedule->orders[r];
    auto emit = [&](OpKind kind, StageIndex stage, int32_t microbatch) {
      if (microbatch >= m) return;  // One of the planned extras torch blanks.
      order.push_back(Action::Single({kind, stage, MicrobatchIndex(microbatch)}));
    };
    // Next microbatch of each kind per chunk; W trails I only in the cooldown.
    int32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;

    for (int32_t i = 0; i < 2 * (p - r) - 1; ++i) emit(OpKind::kForward, chunk0, f0++);
    for (int32_t i = 0; i < r; ++i) {
      emit(OpKind::kForward, chunk1, f1++);
      emit(OpKind::kForward, chunk0, f0++);
    }
    for (int32_t i = 0; i < p - r; ++i) {
      emit(OpKind::kForward, chunk1, f1++);
      emit(OpKind::kBackwardInput, chunk1, b1);
      emit(OpKind::kBackwardWeight, chunk1, b1++);
    }

    while (f1 < f0 || f0 < planned) {
      if (f0 < planned) emit(OpKind::kForward, chunk0, f0++);
      emit(OpKind::kBackwardInput, chunk0, b0);
      emit(OpKind::kBackwardWeight, chunk0, b0++);
      emit(OpKind::kForward, chunk1, f1++);
      emit(OpKind::kBackwardInput, chunk1, b1);
      emit(OpKind::kBackwardWeight, chunk1, b1++);
    }

    int32_t w0 = b0, w1 = b1;
    for (int32_t i = 0; i < r; ++i) {
      emit(OpKind::kBackwardInput, chunk0, b0++);
      emit(OpKind::kBackwardInput, chunk1, b1++);
    }
    for (int32_t i = 0; i < p - r; ++i) {
      emit(OpKind::kBackwardInput, chunk0, b0++);
      emit(OpKind::kBackwardWeight, chunk0, w0++);
    }
    while (w1 < b1) emit(OpKind::kBackwardWeight, chunk1, w1++);
    while (w0 < b0) emit(OpKind::kBackwardWeight, chunk0, w0++);
  }
  return Status();
}

}  // namespace

Status GenerateZBVZeroBubble(const ScheduleParams& params, Schedule* schedule) {
  return GenerateNamedZBV("ZBVZeroBubble", params, schedule);
}

Status GenerateZBV(const ScheduleParams& params, Schedule* schedule) {
  return GenerateNamedZBV("ZB-V", params, schedule);
}

}  // namespace ppsim
