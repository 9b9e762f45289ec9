// A pipeline schedule: the ordered actions of every rank plus the stage-to-rank map.
//
// Schedules are data. A generator (generator.h) returns one; sim/ compiles any schedule into a task
// DAG. Dependencies between actions are implied by the IR, within the pipeline a microbatch flows
// through (see Pipeline):
//   F(s, j) needs F(s-1, j); I or B (s, j) needs I or B (s+1, j), and on the pipeline's last stage
//   F(s, j); W(s, j) needs I(s, j).
#ifndef PPSIM_SCHEDULES_SCHEDULE_H_
#define PPSIM_SCHEDULES_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/action.h"
#include "schedules/index.h"
#include "base/status.h"

namespace ppsim {

// A pipeline some microbatches flow through: stages first_stage..last_stage, in that order, for
// microbatches first_microbatch..last_microbatch (all inclusive). Most schedules have one pipeline
// of every stage and microbatch; DualPipe has two model copies, each fed its own microbatches.
struct Pipeline {
  int32_t first_stage = 0;
  int32_t last_stage = 0;
  int32_t first_microbatch = 0;
  int32_t last_microbatch = 0;

  friend bool operator==(const Pipeline&, const Pipeline&) = default;
};

struct Schedule {
  int32_t num_ranks = 0;
  int32_t num_stages = 0;  // Virtual stages in the whole pipeline.
  int32_t num_microbatches = 0;
  std::vector<RankIndex> stage_to_rank;     // One entry per virtual stage.
  std::vector<std::vector<Action>> orders;  // One ordered list per rank.
  // Disjoint pipelines covering every stage and microbatch, in stage order. Empty: one pipeline of
  // every stage and microbatch.
  std::vector<Pipeline> pipelines;

  RankIndex RankOf(StageIndex stage) const { return stage_to_rank[stage.value()]; }
  // The pipeline microbatch j flows through. REQUIRES: j in range.
  Pipeline PipelineOf(MicrobatchIndex microbatch) const;
  // `pipelines`, or the one pipeline of every stage and microbatch when it is empty.
  std::vector<Pipeline> AllPipelines() const;
  size_t NumActions() const;
};

// Checks everything about a schedule that does not need its timing: the stage-to-rank map covers
// every stage with a rank in range; the pipelines partition the stages and microbatches; every
// action's stage and microbatch are in range, in one pipeline, and the action sits on its stage's
// rank; every (stage, microbatch) of a pipeline has exactly one F and exactly one backward (one B,
// or one I and one W); a W comes after its I. Messages name the rank, the
// 1-based position in its order and the action.
Status CheckSchedule(const Schedule& schedule);

// Fills num_ranks (from orders), num_stages, num_microbatches, stage_to_rank and pipelines from the
// actions themselves: each stage must appear on exactly one rank; consecutive stages that see the
// same microbatches form one pipeline (a contiguous range of microbatches). For files.
Status InferScheduleShape(Schedule* schedule);

// "rank 1, position 3 (1B0)": how messages point at an action.
std::string DescribeActionAt(int32_t rank, size_t index, const Action& action);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_SCHEDULE_H_
