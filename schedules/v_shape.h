// The "v" stage placement of torch.distributed.pipelining's V schedules (ScheduleZBVZeroBubble,
// ScheduleDualPipeV; generate_stage_to_rank_mapping(..., style="v") in pytorch/pytorch
// torch/distributed/pipelining/schedules.py): 2p virtual stages, rank r holds stage r (chunk 0,
// on the way down) and stage 2p - 1 - r (chunk 1, on the way back up).
#ifndef PPSIM_SCHEDULES_V_SHAPE_H_
#define PPSIM_SCHEDULES_V_SHAPE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "schedules/generator.h"

namespace ppsim {

// Chunk 0 of `rank`: stage r.
inline StageIndex VShapeFirstStage(RankIndex rank) { return StageIndex(rank.value()); }

// Chunk 1 of `rank` in a pipeline of `num_ranks` ranks: stage 2p - 1 - r.
inline StageIndex VShapeSecondStage(int32_t num_ranks, RankIndex rank) {
  return StageIndex(2 * num_ranks - 1 - rank.value());
}

// Checks the rules every V schedule shares, in this order: at least 1 rank, exactly 2 stages per
// rank (0 means the default, 2), at least 1 microbatch. `name` starts each message.
inline Status CheckVShapeParams(std::string_view name, const ScheduleParams& params) {
  const std::string who(name);
  if (params.num_ranks < 1) {
    return ScheduleParamError(
        params, "pp", who + " needs at least 1 rank; got " + std::to_string(params.num_ranks));
  }
  if (params.stages_per_rank != 2 && params.stages_per_rank != 0) {
    return ScheduleParamError(
        params, "stages_per_rank",
        who + " needs exactly 2 stages per rank; got " + std::to_string(params.stages_per_rank));
  }
  if (params.num_microbatches < 1) {
    return ScheduleParamError(
        params, "microbatches",
        who + " needs at least 1 microbatch; got " + std::to_string(params.num_microbatches));
  }
  return Status();
}

// REQUIRES: CheckVShapeParams(..., params).ok(). Resets `schedule` to 2p stages in the V
// placement, with p empty orders.
inline void StartVShapeSchedule(const ScheduleParams& params, Schedule* schedule) {
  const int32_t p = params.num_ranks;
  *schedule = Schedule();
  schedule->num_ranks = p;
  schedule->num_stages = 2 * p;
  schedule->num_microbatches = params.num_microbatches;
  schedule->stage_to_rank.resize(2 * p);
  for (int32_t r = 0; r < p; ++r) {
    const RankIndex rank(r);
    schedule->stage_to_rank[VShapeFirstStage(rank).value()] = rank;
    schedule->stage_to_rank[VShapeSecondStage(p, rank).value()] = rank;
  }
  schedule->orders.resize(p);
}

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_V_SHAPE_H_
