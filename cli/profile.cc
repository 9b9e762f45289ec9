// `ppsim profile TRACE... [-o PROFILE]`: PyTorch profiler traces or Nsight Systems exports in
// (interop/read_traces.h), an editable profile and a summary out (interop/trace_profile.h), and a
// replay of the measured order through the same request path as `ppsim run`.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/files.h"
#include "base/numbers.h"
#include "cli/commands.h"
#include "base/flag_locator.h"
#include "cli/options.h"
#include "config/config_file.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "interop/read_traces.h"
#include "interop/torch_schedule_csv.h"
#include "interop/trace_profile.h"
#include "schedules/schedule.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage =
    "usage: ppsim profile TRACE... [-o PROFILE.textproto] [--format table|json] "
    "[--ranks-in-order]\n"
    "  TRACE: one trace per rank, all of one profiler: PyTorch profiler traces\n"
    "  (export_chrome_trace, tensorboard_trace_handler; .json or .json.gz) or Nsight Systems\n"
    "  exports (nsys export --type sqlite; NVTX ranges as the actions, the rank from the\n"
    "  recorded RANK/PMI_RANK/... or an 'MPI Rank N' mark), or folders of them (*.json,\n"
    "  *.json.gz, *.sqlite). Files are told apart by content. Prints a summary; with -o,\n"
    "  writes the measured per-stage costs as a profile for 'ppsim run --profile' and the\n"
    "  measured order beside it (PROFILE's name with .order.csv), and replays that order in\n"
    "  the simulator.\n";

po::options_description ProfileOptions() {
  po::options_description d("profile options", 100);
  d.add_options()("output,o", po::value<std::string>()->value_name("PROFILE"),
                  "write the profile (.textproto) and, beside it, the measured order "
                  "(.order.csv); then replay them")(
      "format", po::value<std::string>()->value_name("NAME"), "table (default) or json")(
      "ranks-in-order",
      "files that do not say their rank (no distributedInfo: torch built without Kineto; an nsys "
      "export without a recorded rank) are ranks 0, 1, ... in the order given");
  return d;
}

// PROFILE's order file: its name with the extension replaced by ".order.csv".
std::string OrderPath(const std::string& profile) {
  std::filesystem::path path(profile);
  path.replace_extension(".order.csv");
  return path.string();
}

// The `ppsim run` request of the replay: the measured order and profile on an ideal platform
// whose every transfer takes the measured p2p time.
proto::RunConfig ReplayConfig(const std::string& profile, const std::string& order,
                              const TraceAnalysis& analysis) {
  proto::RunConfig config;
  config.set_schedule_file(order);
  config.set_profile(profile);
  config.set_costs_per("virtual-stage");
  config.set_platform("ideal");
  config.set_p2p_latency(FormatNumber(std::round(analysis.p2p.median_s * 1e9) / 1e9) + "s");
  config.set_engine("simgrid");
  return config;
}

std::string ReplayCommand(const proto::RunConfig& c) {
  return "ppsim run --schedule-file " + c.schedule_file() + " --profile " + c.profile() +
         " --costs-per " + c.costs_per() + " --platform " + c.platform() + " --p2p-latency " +
         c.p2p_latency() + " --engine " + c.engine();
}

// Writes the order, then runs it; the replay's outcome (a failing run is reported in it, not an
// error of the command: the profile is written either way).
Status Replay(const std::string& profile, const TraceAnalysis& analysis, TraceReplay* replay) {
  const std::string order = OrderPath(profile);
  const std::string csv = FormatOrderCsv(analysis);
  Schedule check;
  Status parsed = ParseScheduleTorchCsv(csv, order, &check);
  if (!parsed.ok()) {
    replay->note = "the measured order is not a schedule ppsim reads: " + parsed.message();
    return Status();
  }
  RETURN_IF_ERROR(WriteWholeFile("-o", order, csv));
  const proto::RunConfig config = ReplayConfig(profile, order, analysis);
  replay->command = ReplayCommand(config);
  RunRequest request;
  std::vector<RunResult> results;
  Status status = ResolveRun(config, std::make_shared<FlagLocator>(), {}, &request);
  if (status.ok()) status = ExecuteRequest(request, replay->command, &results);
  if (!status.ok() || results.size() != 1) {
    replay->note = "the replay did not run: " + status.message();
    return Status();
  }
  replay->ran = true;
  replay->simulated_s = results[0].metrics.makespan_s;
  replay->measured_s = analysis.mean_step_s;
  if (replay->measured_s > 0) {
    replay->error = (replay->simulated_s - replay->measured_s) / replay->measured_s;
  }
  replay->note =
      "the simulated iteration is the measured order with each stage's mean F/I/W/B, the p2p "
      "latency, and the time a step spends outside the actions as each rank's optimizer step";
  return Status();
}

}  // namespace

int ProfileCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = ProfileOptions();
  ParsedArgs parsed;
  Status status = ParseArgs("profile", args, options, -1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kUsage << options;
    return kExitOk;
  }
  const std::string format = parsed.values.count("format") ? OptionText(parsed, "format") : "table";
  if (format != "table" && format != "json") {
    return Fail(
        err, Status::InvalidInput("--format: unknown format '" + format + "'; valid: table, json"));
  }
  if (parsed.positional.empty()) {
    return Fail(err, Status::InvalidInput("ppsim profile: no traces; give trace files or a "
                                          "folder of them, see 'ppsim profile --help'"));
  }
  std::vector<std::string> files;
  status = ListTraceFiles(parsed.positional, &files);
  const std::string output = OptionText(parsed, "output");
  if (status.ok() && !output.empty()) status = CheckNotAnInput("-o", output, files);
  if (status.ok() && !output.empty()) {
    status = CheckNotAnInput("-o (its order file)", OrderPath(output), files);
  }
  ConfigFormat output_format = ConfigFormat::kTextProto;
  if (status.ok() && !output.empty() &&
      (!ConfigFormatOf(output, &output_format).ok() || output_format != ConfigFormat::kTextProto)) {
    status = Status::InvalidInput("-o: '" + output +
                                  "': the profile is written as textproto; "
                                  "name it .textproto, .pbtxt or .txtpb");
  }
  ProfilerTrace trace;
  if (status.ok())
    status = ReadProfilerTraces(files, parsed.values.count("ranks-in-order"), &trace);
  TraceAnalysis analysis;
  if (status.ok()) status = AnalyzeTrace(trace, &analysis);
  TraceReplay replay;
  if (status.ok() && !output.empty() && analysis.stages.empty()) {
    status = Status::InvalidInput(
        "-o: the traces have no pipeline actions, so no per-stage costs to write; expected "
        "torch.distributed.pipelining's record_function ranges (PP:0F1, Forward 0, ...)");
  }
  if (status.ok() && !output.empty() && !analysis.missing_stages.empty()) {
    status = Status::InvalidInput(
        "-o: stage " + std::to_string(analysis.missing_stages[0]) +
        " has no forward in the traces given; a profile needs the traces of every pipeline rank");
  }
  if (status.ok() && !output.empty()) {
    status = WriteWholeFile("-o", output, FormatProfileTextproto(trace, analysis));
    if (status.ok()) status = Replay(output, analysis, &replay);
  } else if (status.ok()) {
    replay.note = "give -o PROFILE to write the profile and the measured order, and replay them";
  }
  if (!status.ok()) return Fail(err, status);
  out << (format == "json" ? FormatSummaryJson(trace, analysis, replay)
                           : FormatSummaryTable(trace, analysis, replay));
  return kExitOk;
}

}  // namespace ppsim::cli
