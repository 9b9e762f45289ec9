// The schedules ppsim knows by name. `--schedule` and `ppsim schedules` read this table.
#ifndef PPSIM_SCHEDULES_REGISTRY_H_
#define PPSIM_SCHEDULES_REGISTRY_H_

#include <string>
#include <string_view>
#include <vector>

#include "schedules/generator.h"
#include "schedules/schedule.h"
#include "base/status.h"

namespace ppsim {

struct ScheduleInfo {
  std::string_view name;     // As users write it; matched case-insensitively.
  // One line for `ppsim schedules`; request fields in braces ("{memory_limit}": base/locator.h
  // NameFields).
  std::string_view summary;
  Status (*generate)(const ScheduleParams& params, Schedule* schedule);
  // Found from the stages' costs and memory (ScheduleParams::stage_costs): one stage per rank.
  bool needs_costs = false;
  // The schedule whose order this one gives for every configuration; empty: none.
  std::string_view alias_of;
  // Takes any number of virtual stages per rank (--stages-per-rank V >= 1: the interleaved
  // schedules); the others have their own (one, or two for the V-shaped and DualPipe).
  bool any_stages_per_rank = false;
};

// All named schedules, in the order `ppsim schedules` lists them.
const std::vector<ScheduleInfo>& AllSchedules();

// "GPipe, 1F1B": the valid names, for messages.
std::string ScheduleNames();

// Finds a schedule by case-insensitive name; null when there is none.
const ScheduleInfo* FindSchedule(std::string_view name);

// Generates the named schedule and checks it with CheckSchedule().
Status GenerateSchedule(std::string_view name, const ScheduleParams& params, Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_REGISTRY_H_
