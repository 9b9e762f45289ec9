// PyTorch's schedule CSV (torch.distributed.pipelining's pipeline_order as its schedules load
// and dump it): the compute-only format, one row per rank, one action per cell ("0F0"),
// an empty cell a bubble slot. Its communication and bookkeeping actions (SEND_F, RECV_B,
// UNSHARD, ...) are read and skipped as in the text IR (schedules/schedule_text.h).
#ifndef PPSIM_INTEROP_TORCH_SCHEDULE_CSV_H_
#define PPSIM_INTEROP_TORCH_SCHEDULE_CSV_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "schedules/schedule.h"

namespace ppsim {

// One row per rank, cells separated by commas, no bubbles.
std::string FormatScheduleTorchCsv(const Schedule& schedule);

// Parses `text` read from `source` (named in messages as "source:line:col: ..."). The schedule's
// shape is inferred from its actions; CheckSchedule() still has to accept it.
Status ParseScheduleTorchCsv(std::string_view text, const std::string& source,
                             Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_TORCH_SCHEDULE_CSV_H_
