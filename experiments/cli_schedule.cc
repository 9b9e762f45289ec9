// `ppsim schedule` and `ppsim schedules`: orders without simulating.
#include <string>
#include <vector>

#include "experiments/cli_flags.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim::cli {
namespace {

po::options_description ScheduleOptions() {
  po::options_description d("ppsim schedule options", 100);
  AddScheduleChoice(d);
  AddValue(d, "format", "NAME", "text (default), torch-csv or json");
  d.add_options()("help", "show these options");
  return d;
}

}  // namespace

int ScheduleCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = ScheduleOptions();
  po::variables_map vm;
  Status status = ParseOptions("schedule", args, options, &vm);
  if (!status.ok()) return Fail(err, status);
  if (vm.count("help")) {
    out << "usage: ppsim schedule --schedule NAME --pp P --microbatches M [options]\n\n" << options;
    return kExitOk;
  }
  RunSpec spec;
  status = ReadScheduleChoice(vm, &spec);
  if (!status.ok()) return Fail(err, status);
  const std::string format = vm.count("format") ? Get(vm, "format") : "text";
  if (format != "text" && format != "torch-csv" && format != "json") {
    return Usage(err, "--format: unknown format '" + format + "'; valid: text, torch-csv, json");
  }
  Schedule schedule;
  std::string label;
  status = BuildSchedule(spec, &schedule, &label);
  if (!status.ok()) return Fail(err, status);
  if (format == "torch-csv") {
    out << FormatScheduleTorchCsv(schedule);
  } else if (format == "text") {
    out << FormatScheduleText(schedule);
  } else {
    out << "{\n  \"ranks\": " << schedule.num_ranks << ",\n  \"stages\": " << schedule.num_stages
        << ",\n  \"microbatches\": " << schedule.num_microbatches << ",\n  \"stage_to_rank\": [";
    for (int32_t s = 0; s < schedule.num_stages; ++s) {
      out << (s ? ", " : "") << schedule.stage_to_rank[s].value();
    }
    out << "],\n  \"pipelines\": [";
    for (size_t k = 0; k < schedule.pipelines.size(); ++k) {
      const Pipeline& pl = schedule.pipelines[k];
      out << (k ? ", " : "") << "{\"stages\": [" << pl.first_stage << ", " << pl.last_stage
          << "], \"microbatches\": [" << pl.first_microbatch << ", " << pl.last_microbatch
          << "]}";
    }
    out << "],\n  \"orders\": [";
    for (int32_t r = 0; r < schedule.num_ranks; ++r) {
      out << (r ? ",\n    [" : "\n    [");
      for (size_t k = 0; k < schedule.orders[r].size(); ++k) {
        out << (k ? ", \"" : "\"") << FormatAction(schedule.orders[r][k]) << "\"";
      }
      out << "]";
    }
    out << "\n  ]\n}\n";
  }
  return kExitOk;
}

int ListSchedules(std::ostream& out) {
  for (const ScheduleInfo& info : AllSchedules()) {
    out << info.name << std::string(info.name.size() < 10 ? 10 - info.name.size() : 1, ' ')
        << info.summary << "\n";
  }
  return kExitOk;
}

}  // namespace ppsim::cli
