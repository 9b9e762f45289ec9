// Interleaved 1F1B: Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", SC 2021 (arXiv 2104.04473); order exactly as
// torch.distributed.pipelining's ScheduleInterleaved1F1B (pytorch/pytorch @
// cff2ecc8b32af684662aefe6fe058e41810e26ce, torch/distributed/pipelining/schedules.py). torch
// relaxes the paper's "p divides m" to rounds = max(1, m // p) dividing m, and warms up rank r
// with (v - 1) * (m / rounds) + 2 * (p - 1 - r) forwards.
#include "schedules/generator.h"
#include "schedules/torch_multi_stage.h"

namespace ppsim {

Status GenerateInterleaved1F1B(const ScheduleParams& params, Schedule* schedule) {
  return GenerateTorchInterleaved("Interleaved1F1B", /*zero_bubble=*/false, params, schedule);
}

}  // namespace ppsim
