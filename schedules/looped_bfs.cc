// Looped BFS: Lamy-Poirier, "Breadth-First Pipeline Parallelism", MLSys 2023 (arXiv 2211.05953);
// order exactly as torch.distributed.pipelining's ScheduleLoopedBFS (pytorch/pytorch @
// cff2ecc8b32af684662aefe6fe058e41810e26ce, torch/distributed/pipelining/schedules.py): each rank
// runs every microbatch's forward on its first chunk, then on its next chunk, and so on; then the
// backwards from its last chunk to its first, each chunk's microbatches in reverse order. Any m is
// accepted.
#include "schedules/generator.h"
#include "schedules/torch_multi_stage.h"

namespace ppsim {

Status GenerateLoopedBFS(const ScheduleParams& params, Schedule* schedule) {
  int32_t v = 0;
  RETURN_IF_ERROR(StartTorchMultiStage("LoopedBFS", params, schedule, &v));
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
  for (int32_t rank = 0; rank < p; ++rank) {
    auto& order = schedule->orders[rank];
    for (int32_t chunk = 0; chunk < v; ++chunk) {
      const StageIndex stage(chunk * p + rank);
      for (int32_t j = 0; j < m; ++j) {
        order.push_back(Action::Single({OpKind::kForward, stage, MicrobatchIndex(j)}));
      }
    }
    for (int32_t chunk = v - 1; chunk >= 0; --chunk) {
      const StageIndex stage(chunk * p + rank);
      for (int32_t j = m - 1; j >= 0; --j) {
        order.push_back(Action::Single({OpKind::kBackward, stage, MicrobatchIndex(j)}));
      }
    }
  }
  return Status();
}

}  // namespace ppsim
