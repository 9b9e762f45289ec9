// `ppsim run`: describe, compile and execute runs, and report them.
#include <string>
#include <vector>

#include "experiments/cli_flags.h"
#include "experiments/report.h"
#include "models/units.h"

namespace ppsim::cli {
namespace {

// `ppsim run` with no options: two schedules compared on one H100 node. The costs are a 1.2 ms
// forward and 2.4 ms backward per stage, 1.5 GiB of activations per microbatch and stage, and a
// 32 MiB boundary tensor (sequence 4096 x hidden 4096 x 2 bytes).
const std::vector<std::string> kDefaultJob = {
    "--schedule", "1F1B,GPipe", "--pp", "4", "--microbatches", "8", "--f", "1.2ms", "--b",
    "2.4ms", "--activation", "1.5GiB", "--message-bytes", "32MiB", "--platform", "h100-node"};

po::options_description RunOptions() {
  po::options_description d("ppsim run options", 100);
  AddScheduleChoice(d);
  AddValue(d, "f", "TIME", "forward time per virtual stage: one value or a comma list (e.g. 1.2ms)");
  AddValue(d, "i", "TIME", "backward-for-inputs time (with --w)");
  AddValue(d, "w", "TIME", "backward-for-weights time (with --i)");
  AddValue(d, "b", "TIME", "full backward time (default: I + W)");
  AddValue(d, "overlap", "TIME", "OVERLAP_F_B time, by the forward's stage (default: F + B)");
  AddValue(d, "activation", "BYTES", "M_B: activation bytes held from F to the backward (default 0)");
  AddValue(d, "activation-w", "BYTES", "M_W: the part of M_B held from I until W (default 0)");
  AddValue(d, "message-bytes", "BYTES", "tensor sent across each stage boundary (default 0)");
  AddValue(d, "grad-bytes", "BYTES", "gradients per GPU of each stage, all-reduced with --dp (default 0)");
  AddValue(d, "profile", "FILE", "measured per-stage costs: .csv, .textproto, .json or .yaml");
  AddModelOptions(d);
  AddValue(d, "memory-limit", "BYTES", "GPU memory for the OOM check (default: the platform GPU's)");
  d.add_options()("fail-on-oom", "exit 1 when a rank runs out of memory");
  AddPlatformOptions(d);
  AddValue(d, "engine", "NAME", "simgrid (default) or critical-path");
  AddValue(d, "format", "NAME", "table (default), json or csv");
  AddValue(d, "trace", "FILE", "write a Perfetto trace: .pftrace or .pftrace.gz");
  AddValue(d, "chrome-trace", "FILE", "write a Chrome JSON trace: .json or .json.gz");
  AddValue(d, "timeline", "FILE", "write a timeline picture: .svg, or .html (hover and zoom)");
  AddValue(d, "trace-microbatches", "A:B",
           "trace and draw only microbatches A to B-1 (default: all)");
  d.add_options()("help", "show these options");
  return d;
}

}  // namespace

Status ParseRunRequest(const std::vector<std::string>& args, RunRequest* request) {
  *request = RunRequest();
  const po::options_description options = RunOptions();
  po::variables_map vm;
  Status status = ParseOptions("run", args, options, &vm);
  if (!status.ok()) return status;
  request->help = vm.count("help") > 0;
  if (request->help) return Status();

  RunSpec base;
  status = ReadScheduleChoice(vm, &base);
  if (!status.ok()) return status;
  base.costs.forward = Get(vm, "f");
  base.costs.backward_input = Get(vm, "i");
  base.costs.backward_weight = Get(vm, "w");
  base.costs.backward = Get(vm, "b");
  base.costs.overlap = Get(vm, "overlap");
  base.costs.activation = Get(vm, "activation");
  base.costs.activation_w = Get(vm, "activation-w");
  base.costs.message = Get(vm, "message-bytes");
  base.costs.gradient = Get(vm, "grad-bytes");
  base.profile_file = Get(vm, "profile");
  status = ReadModelChoice(vm, &base);
  if (!status.ok()) return status;
  if (vm.count("memory-limit")) {
    status = ParseSize("--memory-limit", Get(vm, "memory-limit"), &base.memory_limit_bytes);
    if (!status.ok()) return status;
    if (base.memory_limit_bytes == 0) {
      return Status::InvalidInput("--memory-limit: must be more than 0 bytes");
    }
  }
  status = ReadPlatformChoice(vm, &base);
  if (!status.ok()) return status;
  if (vm.count("engine")) {
    status = ParseEngineKind("--engine", Get(vm, "engine"), &base.engine);
    if (!status.ok()) return status;
  }
  if (vm.count("format")) {
    status = ParseOutputFormat("--format", Get(vm, "format"), &request->format);
    if (!status.ok()) return status;
  }
  request->fail_on_oom = vm.count("fail-on-oom") > 0;
  request->outputs.perfetto_path = Get(vm, "trace");
  request->outputs.chrome_path = Get(vm, "chrome-trace");
  request->outputs.timeline_path = Get(vm, "timeline");
  if (vm.count("trace-microbatches")) {
    if (!request->outputs.any()) {
      return Status::InvalidInput(
          "--trace-microbatches: limits a trace or timeline; add --trace, --chrome-trace or "
          "--timeline");
    }
    status = ParseTraceWindow("--trace-microbatches", Get(vm, "trace-microbatches"),
                              &request->outputs.window);
    if (!status.ok()) return status;
  }
  status = CheckTraceOutputs(request->outputs);
  if (!status.ok()) return status;
  request->command = "ppsim run";
  for (const std::string& a : args) request->command += " " + a;
  if (!base.schedule_file.empty()) {
    request->specs.push_back(base);
  } else {
    for (const std::string& name : SplitCommas(base.schedule_name)) {
      RunSpec spec = base;
      spec.schedule_name = name;
      request->specs.push_back(spec);
    }
  }
  return Status();
}

int RunCommand(const std::vector<std::string>& given_args, std::ostream& out, std::ostream& err) {
  const bool default_job = given_args.empty();
  if (!default_job && given_args[0].rfind("--", 0) != 0) {
    return RunExperimentBase(given_args, out, err);
  }
  const std::vector<std::string>& args = default_job ? kDefaultJob : given_args;
  RunRequest request;
  Status status = ParseRunRequest(args, &request);
  if (!status.ok()) return Fail(err, status);
  if (request.help) {
    out << "usage: ppsim run --schedule NAME --pp P --microbatches M --f T (--b T | --i T --w T)"
           " [options]\n       ppsim run FILE   (an experiment's base run)\n"
           "       ppsim run        (no options: the default job)\n\n"
        << RunOptions();
    return kExitOk;
  }
  if (default_job && request.format == OutputFormat::kTable) {
    out << "default job: ppsim run";
    for (const std::string& a : kDefaultJob) out << " " << a;
    out << "\n\n";
  }
  return ExecuteRequest(request, nullptr, out, err);
}

int ExecuteRequest(const RunRequest& request,
                   const std::function<std::string(const std::string&)>& locate,
                   std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& status) {
    return Fail(err, locate ? status.WithMessage(locate(status.message())) : status);
  };
  const std::vector<RunSpec>& specs = request.specs;
  // Describe and compile every run before any engine starts.
  std::vector<PreparedRun> prepared(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    Status status = PrepareRun(specs[i], &prepared[i]);
    if (status.ok() && request.outputs.any()) {
      status = CheckTraceWindow("--trace-microbatches", request.outputs.window,
                                prepared[i].schedule.num_microbatches);
    }
    if (!status.ok()) return fail(status);
  }
  std::vector<RunResult> results(prepared.size());
  for (size_t i = 0; i < prepared.size(); ++i) {
    Timeline timeline;
    Status status = ExecuteRun(prepared[i], &results[i], &timeline);
    if (status.ok() && request.outputs.any()) {
      const TraceOutputs outputs = prepared.size() == 1
                                       ? request.outputs
                                       : OutputsOfRun(request.outputs, results[i].label);
      status = WriteTraceOutputs(outputs, prepared[i], results[i], timeline, request.command);
    }
    if (!status.ok()) return fail(status);
    prepared[i] = PreparedRun();  // Free the task graph before the next run.
  }
  out << FormatResults(results, request.format);
  if (request.fail_on_oom) {
    std::string oom;
    for (const RunResult& r : results) {
      for (const RankMetrics& k : r.metrics.ranks) {
        if (!k.oom) continue;
        oom += std::string(oom.empty() ? "" : "; ") + r.label + " rank " + std::to_string(k.rank) +
               " needs " + HumanBytes(static_cast<double>(k.peak_memory_bytes)) + " of " +
               HumanBytes(static_cast<double>(k.memory_capacity_bytes));
      }
    }
    if (!oom.empty()) {
      err << "out of memory: " << oom << "\n";
      return kExitSimulationProblem;
    }
  }
  return kExitOk;
}

}  // namespace ppsim::cli
