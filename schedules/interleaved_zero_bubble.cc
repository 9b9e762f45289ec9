// Interleaved zero bubble (ZB1P): Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024
// (arXiv 2401.10241); order exactly as torch.distributed.pipelining's
// ScheduleInterleavedZeroBubble (pytorch/pytorch @ cff2ecc8b32af684662aefe6fe058e41810e26ce,
// torch/distributed/pipelining/schedules.py). It is torch's interleaved 1F1B with a warmup of
// one forward per hop instead of two, the backward split into I and W, and each W deferred behind
// the I of a later step (by r steady pairs on rank r). torch then runs _add_bubbles_to_actions,
// which only inserts None slots where a forward's or full backward's dependency is not yet met;
// it never reorders a rank's actions, so dropping the bubbles leaves the order computed here.
#include "schedules/generator.h"
#include "schedules/torch_multi_stage.h"

namespace ppsim {

Status GenerateInterleavedZeroBubble(const ScheduleParams& params, Schedule* schedule) {
  return GenerateTorchInterleaved("InterleavedZeroBubble", /*zero_bubble=*/true, params, schedule);
}

}  // namespace ppsim
