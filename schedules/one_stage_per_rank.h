// Shared start of the schedules that place stage r on rank r (GPipe, 1F1B, ...).
#ifndef PPSIM_SCHEDULES_ONE_STAGE_PER_RANK_H_
#define PPSIM_SCHEDULES_ONE_STAGE_PER_RANK_H_

#include <string_view>

#include "schedules/generator.h"

namespace ppsim {

// Checks that params ask for one stage per rank and at least one rank and microbatch, and sets
// up `schedule` with p stages, stage r on rank r, and p empty orders. `name` goes in messages.
Status StartOneStagePerRank(std::string_view name, const ScheduleParams& params,
                            Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_ONE_STAGE_PER_RANK_H_
