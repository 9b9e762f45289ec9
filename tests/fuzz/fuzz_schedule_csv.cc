// PyTorch's schedule CSV reader and the checks a read schedule goes through.
#include "schedules/schedule.h"
#include "interop/torch_schedule_csv.h"
#include "schedules/schedule_text.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ppsim::Schedule schedule;
  const ppsim::Status status =
      ppsim::ParseScheduleTorchCsv(ppsim::fuzz::Text(data, size), "s.csv", &schedule);
  ppsim::fuzz::ExpectReadable(status, "");
  if (status.ok()) ppsim::fuzz::ExpectReadable(ppsim::CheckSchedule(schedule), "");
  return 0;
}
