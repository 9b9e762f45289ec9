// GPipe: Huang et al., "GPipe: Efficient Training of Giant Neural Networks using Pipeline
// Parallelism", NeurIPS 2019; order as torch.distributed.pipelining's ScheduleGPipe
// (pytorch/pytorch torch/distributed/pipelining/schedules.py): all F in microbatch order, then all
// B in microbatch order.
#include "schedules/generator.h"
#include "schedules/one_stage_per_rank.h"

namespace ppsim {

Status GenerateGPipe(const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(StartOneStagePerRank("GPipe", params, schedule));
  for (int32_t rank = 0; rank < params.num_ranks; ++rank) {
    const StageIndex stage(rank);
    auto& order = schedule->orders[rank];
    for (int32_t j = 0; j < params.num_microbatches; ++j) {
      order.push_back(Action::Single({OpKind::kForward, stage, MicrobatchIndex(j)}));
    }
    for (int32_t j = 0; j < params.num_microbatches; ++j) {
      order.push_back(Action::Single({OpKind::kBackward, stage, MicrobatchIndex(j)}));
    }
  }
  return Status();
}

}  // namespace ppsim
