// What every schedule generator takes, and the generators this library has.
#ifndef PPSIM_SCHEDULES_GENERATOR_H_
#define PPSIM_SCHEDULES_GENERATOR_H_

#include <cstdint>

#include "schedules/schedule.h"
#include "schedules/status.h"

namespace ppsim {

struct ScheduleParams {
  int32_t num_ranks = 1;        // p, pipeline ranks. REQUIRES: >= 1.
  int32_t stages_per_rank = 1;  // v, virtual stages (model chunks) per rank. REQUIRES: >= 1.
  int32_t num_microbatches = 1; // m. REQUIRES: >= 1.
};

// GPipe (Huang et al., 2019; torch.distributed.pipelining.ScheduleGPipe): every rank runs all
// forwards, then all backwards, both in microbatch order. One stage per rank.
Status GenerateGPipe(const ScheduleParams& params, Schedule* schedule);

// 1F1B (PipeDream-Flush, Narayanan et al., 2021; Megatron-LM's non-interleaved schedule): rank r
// runs k = min(p - r, m) forwards, then alternates B(i), F(k + i) while forwards remain, then the
// remaining backwards. Any m >= 1 is accepted (with m < p the warmup is simply shorter). One stage
// per rank. Not torch's Schedule1F1B.pipeline_order, which skips a forward on the last rank.
Status GenerateOneFOneB(const ScheduleParams& params, Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_GENERATOR_H_
