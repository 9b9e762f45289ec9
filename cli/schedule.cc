// `ppsim schedule` and `ppsim schedules`: orders without simulating.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json.h"
#include "base/names.h"
#include "cli/commands.h"
#include "base/flag_locator.h"
#include "cli/options.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run_phases.h"
#include "interop/torch_schedule_csv.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

// The schedule as JSON: sizes, the stage map, the pipelines and each rank's order.
std::string ScheduleJson(const Schedule& schedule) {
  nlohmann::ordered_json j;
  j["ranks"] = schedule.num_ranks;
  j["stages"] = schedule.num_stages;
  j["microbatches"] = schedule.num_microbatches;
  j["stage_to_rank"] = nlohmann::ordered_json::array();
  for (int32_t s = 0; s < schedule.num_stages; ++s) {
    j["stage_to_rank"].push_back(schedule.stage_to_rank[s].value());
  }
  j["pipelines"] = nlohmann::ordered_json::array();
  for (const Pipeline& p : schedule.pipelines) {
    j["pipelines"].push_back({{"stages", {p.first_stage, p.last_stage}},
                              {"microbatches", {p.first_microbatch, p.last_microbatch}}});
  }
  j["orders"] = nlohmann::ordered_json::array();
  for (int32_t r = 0; r < schedule.num_ranks; ++r) {
    nlohmann::ordered_json order = nlohmann::ordered_json::array();
    for (const Action& action : schedule.orders[r]) order.push_back(FormatAction(action));
    j["orders"].push_back(std::move(order));
  }
  return FormatJsonPretty(j) + "\n";
}

}  // namespace

int ScheduleCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  po::options_description options = RunConfigOptions({proto::Flag::SCHEDULE});
  options.add(RunConfigOptions({proto::Flag::LIMITS}, {"max_tasks"}));
  po::options_description own("output", 100);
  own.add_options()("format", po::value<std::string>()->value_name("NAME"),
                    "text (default), torch-csv or json");
  options.add(own);
  ParsedArgs parsed;
  Status status = ParseArgs("schedule", args, options, 0, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << "usage: ppsim schedule --schedule NAME --pp P --microbatches M [options]\n\n" << options;
    return kExitOk;
  }
  proto::RunConfig config;
  status = FillRunConfig(parsed.values, &config);
  RunSpec spec;
  spec.where = std::make_shared<FlagLocator>();
  if (status.ok()) status = ResolveSchedule(config, *spec.where, {}, &spec);
  if (status.ok()) status = ResolveLimits(config, *spec.where, &spec);
  if (!status.ok()) return Fail(err, status);
  const std::string format =
      parsed.values.count("format") ? OptionText(parsed, "format") : "text";
  if (format != "text" && format != "torch-csv" && format != "json") {
    return Fail(err, Status::InvalidInput(
                         "--format: " + UnknownName("format", format, {"text", "torch-csv", "json"})));
  }
  const ScheduleInfo* info = FindSchedule(spec.schedule_name);
  if (info != nullptr && info->needs_costs) {
    return Fail(err, spec.where->Invalid("schedule", std::string(info->name) +
                                                         " is found from the stages' costs and "
                                                         "memory, which a schedule alone does not "
                                                         "have; run it with 'ppsim run' (costs "
                                                         "from --model, a profile, or --f, --i, "
                                                         "--w with --activation)"));
  }
  Schedule schedule;
  std::string label;
  status = CheckScheduleSize(spec);
  if (status.ok()) status = BuildSchedule(spec, &schedule, &label);
  if (!status.ok()) return Fail(err, status);
  if (format == "torch-csv") {
    out << FormatScheduleTorchCsv(schedule);
  } else if (format == "text") {
    out << FormatScheduleText(schedule);
  } else {
    out << ScheduleJson(schedule);
  }
  return kExitOk;
}

}  // namespace ppsim::cli
