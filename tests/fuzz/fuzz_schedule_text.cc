// The text IR reader ("rank 0: 0F0 0B0") and the checks a read schedule goes through.
#include "schedules/schedule.h"
#include "schedules/schedule_text.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ppsim::Schedule schedule;
  const ppsim::Status status = ppsim::ParseScheduleText(ppsim::fuzz::Text(data, size), "s.txt", &schedule);
  ppsim::fuzz::ExpectReadable(status, "");
  if (status.ok()) ppsim::fuzz::ExpectReadable(ppsim::CheckSchedule(schedule), "");
  return 0;
}
