// The order shared by the handcrafted one-stage-per-rank zero-bubble schedules, ZB-H1 and ZB-H2
// (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241, figures 3 and 4).
#ifndef PPSIM_SCHEDULES_ZERO_BUBBLE_COMMON_H_
#define PPSIM_SCHEDULES_ZERO_BUBBLE_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "schedules/action.h"
#include "schedules/index.h"

namespace ppsim {

// Appends one stage's order to `order`: min(warmup, m) forwards; then for each microbatch i in
// turn I(i), W(i - weight_delay) once i >= weight_delay, and the next forward while any remain;
// then the W still pending, in microbatch order. At most warmup + weight_delay microbatches
// are between their F and their W at any point.
// REQUIRES: num_microbatches >= 1, warmup >= 1, weight_delay >= 0.
inline void AppendZeroBubbleStageOrder(StageIndex stage, int32_t num_microbatches, int32_t warmup,
                                       int32_t weight_delay, std::vector<Action>* order) {
  auto append = [&](OpKind kind, int32_t microbatch) {
    order->push_back(Action::Single({kind, stage, MicrobatchIndex(microbatch)}));
  };
  const int32_t m = num_microbatches;
  const int32_t forwards_first = std::min(warmup, m);
  for (int32_t j = 0; j < forwards_first; ++j) append(OpKind::kForward, j);
  int32_t next_weight = 0;
  for (int32_t i = 0; i < m; ++i) {
    append(OpKind::kBackwardInput, i);
    if (i >= weight_delay) append(OpKind::kBackwardWeight, next_weight++);
    if (forwards_first + i < m) append(OpKind::kForward, forwards_first + i);
  }
  while (next_weight < m) append(OpKind::kBackwardWeight, next_weight++);
}

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_ZERO_BUBBLE_COMMON_H_
