// Reading and writing schedules as text.
//
// The text IR is one line per rank, in rank order, with the rank's actions separated by spaces:
//
//   rank 0: 0F0 0F1 0B0 0B1
//   rank 1: 1F0 1B0 1F1 1B1
//
// Blank lines and lines starting with '#' are ignored. The reader also accepts torch's
// communication and bookkeeping actions (SEND_F, RECV_F, SEND_B, RECV_B with a microbatch;
// UNSHARD, RESHARD, REDUCE_GRAD without) and skips them: they do not change the compute order.
// Parsing then printing a compute-only schedule gives the same text back. PyTorch's CSV form is
// read and written by interop/torch_schedule_csv.h with the pieces below.
#ifndef PPSIM_SCHEDULES_SCHEDULE_TEXT_H_
#define PPSIM_SCHEDULES_SCHEDULE_TEXT_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "schedules/schedule.h"
#include "base/status.h"

namespace ppsim {

std::string FormatScheduleText(const Schedule& schedule);

// Parse `text` read from `source` (a file name, used in messages as "source:line:col: ...").
// On success the schedule's shape (ranks, stages, microbatches, stage-to-rank map) is inferred
// from the actions; CheckSchedule() still has to accept it.
Status ParseScheduleText(std::string_view text, const std::string& source, Schedule* schedule);

// The pieces every schedule file reader shares.
// Calls fn(line, line_number) for each line of `text` (1-based), stopping at the first error.
Status ForEachScheduleLine(std::string_view text,
                           const std::function<Status(std::string_view, size_t)>& fn);
// Whether a line is blank or a comment ('#' after optional white space).
bool IsBlankOrCommentLine(std::string_view line);
// One word (or cell) at `line`:`col` (1-based) of `source`: a compute action (*is_compute true),
// or one of torch's communication and bookkeeping actions (*is_compute false, *action untouched).
// InvalidInput "source:line:col: ..." pointing into the word otherwise.
Status ParseScheduleWord(std::string_view word, const std::string& source, size_t line,
                         size_t col, Action* action, bool* is_compute);
// Infers the shape of the orders read (InferScheduleShape), its messages prefixed "source: ".
Status FinishParsedSchedule(const std::string& source, Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_SCHEDULE_TEXT_H_
