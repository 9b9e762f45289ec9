#include "schedules/registry.h"

#include <cctype>

namespace ppsim {
namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

const std::vector<ScheduleInfo>& AllSchedules() {
  static const std::vector<ScheduleInfo> kSchedules = {
      {"GPipe", "all forwards, then all backwards (Huang et al. 2019; torch ScheduleGPipe)",
       &GenerateGPipe},
      {"1F1B", "warmup forwards, then one forward one backward (PipeDream-Flush, Megatron-LM)",
       &GenerateOneFOneB},
  };
  return kSchedules;
}

std::string ScheduleNames() {
  std::string names;
  for (const ScheduleInfo& info : AllSchedules()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

const ScheduleInfo* FindSchedule(std::string_view name) {
  for (const ScheduleInfo& info : AllSchedules()) {
    if (EqualsIgnoringCase(info.name, name)) return &info;
  }
  return nullptr;
}

Status GenerateSchedule(std::string_view name, const ScheduleParams& params, Schedule* schedule) {
  const ScheduleInfo* info = FindSchedule(name);
  if (info == nullptr) {
    return Status::InvalidInput("unknown schedule '" + std::string(name) + "'; valid: " +
                                ScheduleNames());
  }
  Status status = info->generate(params, schedule);
  if (!status.ok()) return status;
  return CheckSchedule(*schedule);
}

}  // namespace ppsim
