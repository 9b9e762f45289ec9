// A pipeline schedule: the ordered actions of every rank plus the stage-to-rank map.
//
// Schedules are data. A generator (gpipe.h, one_f_one_b.h, ...) returns one; sim/ compiles any
// schedule into a task DAG. Dependencies between actions are implied by the IR:
//   F(s, j) needs F(s-1, j); I or B (s, j) needs I or B (s+1, j), and on the last stage F(s, j);
//   W(s, j) needs I(s, j).
#ifndef PPSIM_SCHEDULES_SCHEDULE_H_
#define PPSIM_SCHEDULES_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/action.h"
#include "schedules/index.h"
#include "schedules/status.h"

namespace ppsim {

struct Schedule {
  int32_t num_ranks = 0;
  int32_t num_stages = 0;  // Virtual stages in the whole pipeline.
  int32_t num_microbatches = 0;
  std::vector<RankIndex> stage_to_rank;     // One entry per virtual stage.
  std::vector<std::vector<Action>> orders;  // One ordered list per rank.

  RankIndex RankOf(StageIndex stage) const { return stage_to_rank[stage.value()]; }
  size_t NumActions() const;
};

// Checks everything about a schedule that does not need its timing: the stage-to-rank map covers
// every stage with a rank in range; every action's stage and microbatch are in range and the
// action sits on its stage's rank; every (stage, microbatch) has exactly one F and exactly one
// backward (one B, or one I and one W); a W comes after its I. Messages name the rank, the
// 1-based position in its order and the action.
Status CheckSchedule(const Schedule& schedule);

// Fills num_ranks (from orders), num_stages, num_microbatches and stage_to_rank from the actions
// themselves: each stage must appear on exactly one rank. For schedules read from files.
Status InferScheduleShape(Schedule* schedule);

// "rank 1, position 3 (1B0)": how messages point at an action.
std::string DescribeActionAt(int32_t rank, size_t index, const Action& action);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_SCHEDULE_H_
