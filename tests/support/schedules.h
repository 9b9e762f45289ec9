// Generating named schedules in tests.
#ifndef PPSIM_TESTS_SUPPORT_SCHEDULES_H_
#define PPSIM_TESTS_SUPPORT_SCHEDULES_H_

#include <gtest/gtest.h>

#include <string>

#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim {

// The named schedule in the text IR; expects it to be generated (and checked) without error.
inline std::string GenerateText(const std::string& name, const ScheduleParams& params) {
  Schedule s;
  const Status status = GenerateSchedule(name, params, &s);
  EXPECT_TRUE(status.ok()) << name << ": " << status.message();
  return FormatScheduleText(s);
}

// The message rejecting the named schedule's configuration; expects InvalidInput.
inline std::string GenerateError(const std::string& name, const ScheduleParams& params) {
  Schedule s;
  const Status status = GenerateSchedule(name, params, &s);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput) << name;
  return status.message();
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_SCHEDULES_H_
