// Reading and writing schedules as text.
//
// The text IR is one line per rank, in rank order, with the rank's actions separated by spaces:
//
//   rank 0: 0F0 0F1 0B0 0B1
//   rank 1: 1F0 1B0 1F1 1B1
//
// Blank lines and lines starting with '#' are ignored. The torch CSV form is PyTorch's
// compute-only pipeline_order CSV: one row per rank, one action per cell, an empty cell is a
// bubble slot. Both readers also accept torch's communication and bookkeeping actions (SEND_F,
// RECV_F, SEND_B, RECV_B with a microbatch; UNSHARD, RESHARD, REDUCE_GRAD without) and skip them:
// they do not change the compute order. Parsing then printing a compute-only schedule gives the
// same text back.
#ifndef PPSIM_SCHEDULES_SCHEDULE_TEXT_H_
#define PPSIM_SCHEDULES_SCHEDULE_TEXT_H_

#include <string>
#include <string_view>

#include "schedules/schedule.h"
#include "base/status.h"

namespace ppsim {

std::string FormatScheduleText(const Schedule& schedule);
std::string FormatScheduleTorchCsv(const Schedule& schedule);

// Parse `text` read from `source` (a file name, used in messages as "source:line:col: ...").
// On success the schedule's shape (ranks, stages, microbatches, stage-to-rank map) is inferred
// from the actions; CheckSchedule() still has to accept it.
Status ParseScheduleText(std::string_view text, const std::string& source, Schedule* schedule);
Status ParseScheduleTorchCsv(std::string_view text, const std::string& source,
                             Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_SCHEDULE_TEXT_H_
