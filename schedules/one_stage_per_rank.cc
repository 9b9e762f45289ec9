#include "schedules/one_stage_per_rank.h"

#include <string>

namespace ppsim {

Status StartOneStagePerRank(std::string_view name, const ScheduleParams& params,
                            Schedule* schedule) {
  const std::string who(name);
  if (params.num_ranks < 1) {
    return ScheduleParamError(
        params, "pp", who + " needs at least 1 rank; got " + std::to_string(params.num_ranks));
  }
  if (params.num_microbatches < 1) {
    return ScheduleParamError(
        params, "microbatches",
        who + " needs at least 1 microbatch; got " + std::to_string(params.num_microbatches));
  }
  if (params.stages_per_rank != 1 && params.stages_per_rank != 0) {
    return ScheduleParamError(
        params, "stages_per_rank",
        who + " has one stage per rank; got " + std::to_string(params.stages_per_rank));
  }
  *schedule = Schedule();
  schedule->num_ranks = params.num_ranks;
  schedule->num_stages = params.num_ranks;
  schedule->num_microbatches = params.num_microbatches;
  for (int32_t rank = 0; rank < params.num_ranks; ++rank) {
    schedule->stage_to_rank.push_back(RankIndex(rank));
  }
  schedule->orders.resize(params.num_ranks);
  return Status();
}

}  // namespace ppsim
