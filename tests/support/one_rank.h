// One rank running one microbatch of 1F1B (F, then B) with the given durations: the smallest
// schedule on which a stage's collectives and gradient synchronisation have closed forms.
#ifndef PPSIM_TESTS_SUPPORT_ONE_RANK_H_
#define PPSIM_TESTS_SUPPORT_ONE_RANK_H_

#include <gtest/gtest.h>

#include "models/stage_costs.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"

namespace ppsim {

inline Schedule OneRankOneMicrobatch() {
  ScheduleParams params;
  params.num_ranks = 1;
  params.num_microbatches = 1;
  Schedule s;
  EXPECT_TRUE(GenerateSchedule("1F1B", params, &s).ok());
  return s;
}

// F and B of the one stage; no activations or messages.
inline StageCosts OneStageCosts(double forward_s, double backward_s) {
  StageCosts costs;
  costs.forward_s = {forward_s};
  costs.backward_s = {backward_s};
  costs.activation_bytes = {0};
  costs.activation_w_bytes = {0};
  costs.message_bytes = {0};
  return costs;
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_ONE_RANK_H_
