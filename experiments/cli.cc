#include "experiments/cli.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <limits>
#include <sstream>

#include "experiments/report.h"
#include "schedules/names.h"
#include "experiments/run.h"
#include "models/units.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

namespace po = boost::program_options;

constexpr int kExitOk = 0;
constexpr int kExitSimulationProblem = 1;
constexpr int kExitInvalidInput = 2;

constexpr const char* kVersion = "0.1.0";

// `ppsim run` with no options: two schedules compared on one H100 node. The costs are a 1.2 ms
// forward and 2.4 ms backward per stage, 1.5 GiB of activations per microbatch and stage, and a
// 32 MiB boundary tensor (sequence 4096 x hidden 4096 x 2 bytes).
const std::vector<std::string> kDefaultJob = {
    "--schedule", "1F1B,GPipe", "--pp", "4", "--microbatches", "8", "--f", "1.2ms", "--b",
    "2.4ms", "--activation", "1.5GiB", "--message-bytes", "32MiB", "--platform", "h100-node"};

constexpr const char* kUsage =
    "usage: ppsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run         simulate schedules and report makespan, bubbles and memory\n"
    "              (no options: the default job, 1F1B vs GPipe on one H100 node)\n"
    "  schedule    print a schedule's per-rank order without simulating\n"
    "  schedules   list the schedules\n"
    "  model       the analytic model's per-stage costs ('ppsim model --list' for presets)\n"
    "  platforms   list the platform presets\n"
    "  help        this text; 'ppsim <command> --help' for a command's options\n";

int Fail(std::ostream& err, const Status& status) {
  err << status.message() << "\n";
  return status.code() == StatusCode::kInvalidInput ? kExitInvalidInput : kExitSimulationProblem;
}

int Usage(std::ostream& err, const std::string& message) {
  err << message << "\n";
  return kExitInvalidInput;
}


// Options whose values we parse ourselves: every value is taken as text so that messages can
// name the flag and the value exactly.
void AddValue(po::options_description& d, const char* name, const char* value_name,
              const char* help) {
  d.add_options()(name, po::value<std::string>()->value_name(value_name), help);
}

// The options that choose a schedule, shared by `run` and `schedule`.
void AddScheduleChoice(po::options_description& d) {
  AddValue(d, "schedule", "NAME", "schedule name (see 'ppsim schedules'); for run, a comma list compares");
  AddValue(d, "schedule-file", "FILE", "custom schedule: text IR ('rank 0: 0F0 0B0'), or torch CSV (.csv)");
  AddValue(d, "pp", "P", "pipeline ranks (GPUs)");
  AddValue(d, "microbatches", "M", "microbatches per iteration");
  AddValue(d, "stages-per-rank", "V", "virtual stages per rank (default: the schedule's, 1 or 2)");
  AddValue(d, "microbatch-group-size", "G", "Megatron-Interleaved: microbatches per group (default pp)");
  AddValue(d, "stage-to-rank", "LIST", "with --schedule-file: the rank of each stage (default: inferred)");
}

// A whole number >= `minimum` (default 1).
Status ParseCount(const char* flag, const std::string& text, int32_t* value, int32_t minimum = 1) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) {
    return Status::InvalidInput(std::string(flag) + ": invalid value '" + text +
                                "'; expected a whole number >= " + std::to_string(minimum));
  }
  if (v < minimum) {
    return Status::InvalidInput(std::string(flag) + ": must be at least " +
                                std::to_string(minimum) + "; got " + text);
  }
  *value = static_cast<int32_t>(v);
  return Status();
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) parts.push_back(part);
  if (!text.empty() && text.back() == ',') parts.push_back("");
  return parts;
}

std::string Get(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::string>() : std::string();
}

// The analytic model's options, shared by `run` and `model`.
void AddModelOptions(po::options_description& d) {
  AddValue(d, "model", "NAME|FILE", "analytic costs of a transformer (see 'ppsim model --list')");
  AddValue(d, "seq-len", "S", "--model: sequence length (default: the model's)");
  AddValue(d, "microbatch-size", "B", "--model: sequences per microbatch (default 1)");
  AddValue(d, "dtype", "NAME", "--model: bf16 (default), fp16 or fp8");
  AddValue(d, "tp", "T", "--model: tensor-parallel degree (default 1)");
  d.add_options()("sequence-parallel", "--model: Megatron sequence parallelism with --tp");
  AddValue(d, "recompute", "NAME", "--model: none (default), selective or full");
  AddValue(d, "flash-attention", "on|off", "--model: flash attention (default on)");
  AddValue(d, "dp", "D", "--model: data-parallel degree, for ZeRO-1 (default 1)");
  AddValue(d, "zero", "0|1", "--model: ZeRO stage (default 0)");
  AddValue(d, "layers-per-stage", "LIST", "--model: layers of each stage (default: even split)");
  d.add_options()("embedding-as-layer", "--model: count the embedding as a layer in the split");
  d.add_options()("loss-as-layer", "--model: count the LM head and loss as a layer in the split");
  AddValue(d, "efficiency", "X", "--model: achieved fraction of the GPU's peak FLOP/s (default 0.5)");
}

// Reads the --model options into `spec`.
Status ReadModelChoice(const po::variables_map& vm, RunSpec* spec) {
  const char* model_flags[] = {"seq-len", "microbatch-size", "dtype", "tp", "sequence-parallel",
                               "recompute", "flash-attention", "dp", "zero", "layers-per-stage",
                               "embedding-as-layer", "loss-as-layer", "efficiency"};
  if (!vm.count("model")) {
    for (const char* flag : model_flags) {
      if (vm.count(flag)) {
        return Status::InvalidInput(std::string("--") + flag + ": applies with --model only");
      }
    }
    return Status();
  }
  spec->model = Get(vm, "model");
  TrainingSetup& t = spec->training;
  Status status;
  auto count = [&](const char* flag, int32_t minimum, auto* out) {
    if (!status.ok() || !vm.count(flag)) return;
    int32_t v = 0;
    status = ParseCount((std::string("--") + flag).c_str(), Get(vm, flag), &v, minimum);
    *out = v;
  };
  count("seq-len", 1, &t.seq_len);
  count("microbatch-size", 1, &t.microbatch_size);
  count("tp", 1, &t.tp);
  count("dp", 1, &t.dp);
  count("zero", 0, &t.zero_stage);
  if (!status.ok()) return status;
  if (vm.count("dtype")) status = ParseDtype("--dtype", Get(vm, "dtype"), &t.dtype);
  if (!status.ok()) return status;
  if (vm.count("recompute")) status = ParseRecompute("--recompute", Get(vm, "recompute"), &t.recompute);
  if (!status.ok()) return status;
  t.sequence_parallel = vm.count("sequence-parallel") > 0;
  if (vm.count("flash-attention")) {
    const std::string v = Get(vm, "flash-attention");
    if (v != "on" && v != "off") {
      return Status::InvalidInput("--flash-attention: invalid value '" + v + "'; valid: on, off");
    }
    t.flash_attention = v == "on";
  }
  if (vm.count("layers-per-stage")) {
    for (const std::string& item : SplitCommas(Get(vm, "layers-per-stage"))) {
      int32_t layers = 0;
      status = ParseCount("--layers-per-stage", item, &layers, 0);
      if (!status.ok()) return status;
      spec->layer_split.layers_per_stage.push_back(layers);
    }
  }
  spec->layer_split.embedding_as_layer = vm.count("embedding-as-layer") > 0;
  spec->layer_split.loss_as_layer = vm.count("loss-as-layer") > 0;
  if (vm.count("efficiency")) {
    const std::string v = Get(vm, "efficiency");
    char* end = nullptr;
    const double e = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !(e > 0 && e <= 1)) {
      return Status::InvalidInput("--efficiency: invalid value '" + v +
                                  "'; expected a fraction of peak in (0, 1], e.g. 0.45");
    }
    spec->efficiency = e;
  }
  return Status();
}

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
  AddValue(d, "profile", "FILE", "measured per-stage costs: .csv, .textproto, .json or .yaml");
  AddModelOptions(d);
  AddValue(d, "memory-limit", "BYTES", "GPU memory for the OOM check (default: the platform GPU's)");
  d.add_options()("fail-on-oom", "exit 1 when a rank runs out of memory");
  AddValue(d, "platform", "NAME", "platform preset (default h100-node; see 'ppsim platforms')");
  AddValue(d, "p2p-latency", "TIME", "ideal platform: latency of every link (default 0)");
  AddValue(d, "p2p-bandwidth", "RATE", "ideal platform: bandwidth of every link (default inf)");
  AddValue(d, "engine", "NAME", "simgrid (default) or critical-path");
  AddValue(d, "format", "NAME", "table (default), json or csv");
  d.add_options()("help", "show these options");
  return d;
}

po::options_description ScheduleOptions() {
  po::options_description d("ppsim schedule options", 100);
  AddScheduleChoice(d);
  AddValue(d, "format", "NAME", "text (default), torch-csv or json");
  d.add_options()("help", "show these options");
  return d;
}

// Lets "--f -1ms" reach us as a value (Boost would take "-1ms" for an option): joins every
// valued long option given without '=' with the token after it.
std::vector<std::string> JoinValues(const std::vector<std::string>& args,
                                    const po::options_description& d) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0 && a.find('=') == std::string::npos && i + 1 < args.size() &&
        args[i + 1].rfind("--", 0) != 0) {
      const po::option_description* o = d.find_nothrow(a.substr(2), false);
      if (o != nullptr && o->semantic()->max_tokens() > 0) {
        out.push_back(a + "=" + args[++i]);
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

// "--microbatch: unknown option; did you mean --microbatches? ..."
Status UnknownOption(const std::string& command, const std::string& given,
                     const po::options_description& d) {
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const auto& o : d.options()) {
    const std::string name = "--" + o->long_name();
    // A prefix of a valid name counts as close.
    const size_t distance = name.rfind(given, 0) == 0 ? 1 : EditDistance(given, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  std::string hint = best_distance <= std::max<size_t>(2, given.size() / 4)
                         ? "did you mean " + best + "? "
                         : "";
  return Status::InvalidInput(given + ": unknown option; " + hint + "see 'ppsim " + command +
                              " --help' for the valid options");
}

Status ParseOptions(const std::string& command, const std::vector<std::string>& args,
                    const po::options_description& d, po::variables_map* vm) {
  const std::vector<std::string> joined = JoinValues(args, d);
  for (const std::string& a : joined) {
    if (a.rfind("--", 0) == 0) {
      const std::string name = a.substr(2, a.find('=') - 2);
      if (d.find_nothrow(name, false) == nullptr) return UnknownOption(command, "--" + name, d);
      continue;
    }
    if (a.rfind("-", 0) == 0) {
      return Status::InvalidInput(a + ": unknown option; options are long (--name); see 'ppsim " +
                                  command + " --help' for the valid options");
    }
    return Status::InvalidInput("ppsim " + command + ": unexpected argument '" + a +
                                "'; every value follows its option, see 'ppsim " + command +
                                " --help'");
  }
  try {
    const int style = po::command_line_style::default_style &
                      ~po::command_line_style::allow_guessing &
                      ~po::command_line_style::allow_short;
    po::store(po::command_line_parser(joined).options(d).style(style).run(), *vm);
  } catch (const po::unknown_option& e) {
    return UnknownOption(command, e.get_option_name(), d);
  } catch (const po::multiple_occurrences& e) {
    return Status::InvalidInput(e.get_option_name() +
                                ": given more than once; give each option once");
  } catch (const po::invalid_command_line_syntax& e) {
    return Status::InvalidInput(e.get_option_name() + ": missing value; see 'ppsim " + command +
                                " --help'");
  } catch (const po::error& e) {
    return Status::InvalidInput("ppsim " + command + ": " + e.what() + "; see 'ppsim " + command +
                                " --help'");
  }
  return Status();
}




// Reads --schedule/--schedule-file, --pp, --microbatches and --stages-per-rank into `spec`
// (schedule_name left as the raw comma list).
Status ReadScheduleChoice(const po::variables_map& vm, RunSpec* spec) {
  spec->schedule_name = Get(vm, "schedule");
  spec->schedule_file = Get(vm, "schedule-file");
  if (!spec->schedule_name.empty() && !spec->schedule_file.empty()) {
    return Status::InvalidInput("--schedule-file: give --schedule or --schedule-file, not both");
  }
  if (spec->schedule_name.empty() && spec->schedule_file.empty()) {
    return Status::InvalidInput("--schedule: required; give a schedule name (" +
                                ScheduleNames() + ") or --schedule-file");
  }
  const bool from_file = !spec->schedule_file.empty();
  spec->params.num_ranks = 0;
  spec->params.num_microbatches = 0;
  Status status;
  if (vm.count("pp")) {
    status = ParseCount("--pp", Get(vm, "pp"), &spec->params.num_ranks);
  } else if (!from_file) {
    status = Status::InvalidInput("--pp: required; give the number of pipeline ranks, e.g. --pp 4");
  }
  if (!status.ok()) return status;
  if (vm.count("microbatches")) {
    status = ParseCount("--microbatches", Get(vm, "microbatches"), &spec->params.num_microbatches);
  } else if (!from_file) {
    status = Status::InvalidInput(
        "--microbatches: required; give the microbatches per iteration, e.g. --microbatches 8");
  }
  if (!status.ok()) return status;
  if (vm.count("stages-per-rank")) {
    if (from_file) {
      return Status::InvalidInput(
          "--stages-per-rank: not used with --schedule-file; the file's actions give the stages");
    }
    status = ParseCount("--stages-per-rank", Get(vm, "stages-per-rank"),
                        &spec->params.stages_per_rank);
    if (!status.ok()) return status;
  }
  if (vm.count("stage-to-rank")) {
    if (!from_file) {
      return Status::InvalidInput(
          "--stage-to-rank: applies to --schedule-file only; named schedules place their stages");
    }
    for (const std::string& item : SplitCommas(Get(vm, "stage-to-rank"))) {
      int32_t rank = 0;
      status = ParseCount("--stage-to-rank", item, &rank, 0);
      if (!status.ok()) return status;
      spec->stage_to_rank.push_back(RankIndex(rank));
    }
  }
  if (vm.count("microbatch-group-size")) {
    bool megatron = false;
    for (const std::string& name : SplitCommas(spec->schedule_name)) {
      const ScheduleInfo* info = FindSchedule(name);
      megatron |= info != nullptr && info->name == "Megatron-Interleaved";
    }
    if (!megatron) {
      return Status::InvalidInput(
          "--microbatch-group-size: applies to --schedule Megatron-Interleaved only");
    }
    status = ParseCount("--microbatch-group-size", Get(vm, "microbatch-group-size"),
                        &spec->params.microbatch_group_size);
  }
  return status;
}

int Run(const std::vector<std::string>& given_args, std::ostream& out, std::ostream& err) {
  const bool default_job = given_args.empty();
  const std::vector<std::string>& args = default_job ? kDefaultJob : given_args;
  const po::options_description options = RunOptions();
  po::variables_map vm;
  Status status = ParseOptions("run", args, options, &vm);
  if (!status.ok()) return Fail(err, status);
  if (vm.count("help")) {
    out << "usage: ppsim run --schedule NAME --pp P --microbatches M --f T (--b T | --i T --w T)"
           " [options]\n       ppsim run   (no options: the default job)\n\n"
        << options;
    return kExitOk;
  }

  RunSpec base;
  status = ReadScheduleChoice(vm, &base);
  if (!status.ok()) return Fail(err, status);
  base.costs.forward = Get(vm, "f");
  base.costs.backward_input = Get(vm, "i");
  base.costs.backward_weight = Get(vm, "w");
  base.costs.backward = Get(vm, "b");
  base.costs.overlap = Get(vm, "overlap");
  base.costs.activation = Get(vm, "activation");
  base.costs.activation_w = Get(vm, "activation-w");
  base.costs.message = Get(vm, "message-bytes");
  base.profile_file = Get(vm, "profile");
  status = ReadModelChoice(vm, &base);
  if (!status.ok()) return Fail(err, status);
  if (vm.count("memory-limit")) {
    status = ParseSize("--memory-limit", Get(vm, "memory-limit"), &base.memory_limit_bytes);
    if (!status.ok()) return Fail(err, status);
    if (base.memory_limit_bytes == 0) {
      return Fail(err, Status::InvalidInput("--memory-limit: must be more than 0 bytes"));
    }
  }
  if (vm.count("platform")) base.platform = Get(vm, "platform");
  if (vm.count("p2p-latency")) {
    base.platform_options.has_p2p_latency = true;
    status = ParseDuration("--p2p-latency", Get(vm, "p2p-latency"),
                           &base.platform_options.p2p_latency_s);
    if (!status.ok()) return Fail(err, status);
  }
  if (vm.count("p2p-bandwidth")) {
    base.platform_options.has_p2p_bandwidth = true;
    status = ParseBandwidth("--p2p-bandwidth", Get(vm, "p2p-bandwidth"),
                            &base.platform_options.p2p_bandwidth_bytes_per_s);
    if (!status.ok()) return Fail(err, status);
  }
  if (vm.count("engine")) {
    status = ParseEngineKind("--engine", Get(vm, "engine"), &base.engine);
    if (!status.ok()) return Fail(err, status);
  }
  OutputFormat format = OutputFormat::kTable;
  if (vm.count("format")) {
    status = ParseOutputFormat("--format", Get(vm, "format"), &format);
    if (!status.ok()) return Fail(err, status);
  }

  // Describe and compile every run before any engine starts.
  std::vector<RunSpec> specs;
  if (!base.schedule_file.empty()) {
    specs.push_back(base);
  } else {
    for (const std::string& name : SplitCommas(base.schedule_name)) {
      RunSpec spec = base;
      spec.schedule_name = name;
      specs.push_back(spec);
    }
  }
  std::vector<PreparedRun> prepared(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    status = PrepareRun(specs[i], &prepared[i]);
    if (!status.ok()) return Fail(err, status);
  }
  std::vector<RunResult> results(prepared.size());
  for (size_t i = 0; i < prepared.size(); ++i) {
    status = ExecuteRun(prepared[i], &results[i]);
    if (!status.ok()) return Fail(err, status);
    prepared[i] = PreparedRun();  // Free the task graph before the next run.
  }
  if (default_job && format == OutputFormat::kTable) {
    out << "default job: ppsim run";
    for (const std::string& a : kDefaultJob) out << " " << a;
    out << "\n\n";
  }
  out << FormatResults(results, format);
  if (vm.count("fail-on-oom")) {
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

int PrintSchedule(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
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

po::options_description ModelOptions() {
  po::options_description d("ppsim model options", 100);
  AddModelOptions(d);
  AddValue(d, "pp", "P", "pipeline ranks (default 1)");
  AddValue(d, "stages-per-rank", "V", "virtual stages per rank (default 1)");
  AddValue(d, "microbatches", "M", "microbatches per iteration, for the totals (default 1)");
  AddValue(d, "platform", "NAME", "platform whose GPU runs it (default h100-node)");
  AddValue(d, "format", "NAME", "table (default) or json");
  d.add_options()("list", "list the model presets");
  d.add_options()("help", "show these options");
  return d;
}

// `ppsim model`: the analytic model's per-stage costs without simulating.
int PrintModel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = ModelOptions();
  po::variables_map vm;
  Status status = ParseOptions("model", args, options, &vm);
  if (!status.ok()) return Fail(err, status);
  if (vm.count("help")) {
    out << "usage: ppsim model --model NAME|FILE [--pp P --stages-per-rank V ...]\n\n" << options;
    return kExitOk;
  }
  if (vm.count("list")) {
    for (const TransformerSpec& m : TransformerPresets()) {
      char line[256];
      std::snprintf(line, sizeof(line),
                    "%-16s %8.2fB params  %3d layers  h %6lld  ffn %6lld  heads %3d/%-3d  vocab %6lld  "
                    "seq %lld%s\n",
                    m.name.c_str(), m.TotalParameters() / 1e9, m.layers,
                    static_cast<long long>(m.hidden), static_cast<long long>(m.ffn_hidden), m.heads,
                    m.kv_heads, static_cast<long long>(m.vocab), static_cast<long long>(m.seq_len),
                    m.swiglu ? "  SwiGLU" : "");
      out << line;
    }
    return kExitOk;
  }
  if (!vm.count("model")) {
    return Fail(err, Status::InvalidInput("--model: required; give a preset (" +
                                          TransformerPresetNames() + ") or a model file"));
  }
  RunSpec spec;
  status = ReadModelChoice(vm, &spec);
  int32_t p = 1, v = 1, m = 1;
  auto count = [&](const char* flag, int32_t* value) {
    if (status.ok() && vm.count(flag)) {
      status = ParseCount((std::string("--") + flag).c_str(), Get(vm, flag), value);
    }
  };
  count("pp", &p);
  count("stages-per-rank", &v);
  count("microbatches", &m);
  if (!status.ok()) return Fail(err, status);
  const std::string format = vm.count("format") ? Get(vm, "format") : "table";
  if (format != "table" && format != "json") {
    return Usage(err, "--format: unknown format '" + format + "'; valid: table, json");
  }
  PlatformSpec platform;
  status = MakePlatform(vm.count("platform") ? Get(vm, "platform") : "h100-node",
                        PlatformOptions(), p, &platform);
  if (!status.ok()) return Fail(err, status);
  Schedule shape;  // One pipeline of p * v stages; no order is needed.
  shape.num_ranks = p;
  shape.num_stages = p * v;
  shape.num_microbatches = m;
  std::vector<StageModel> stages;
  TransformerSpec model;
  status = BuildModelStages(spec, shape, &stages, &model);
  if (!status.ok()) return Fail(err, status);
  const double peak = spec.training.dtype == Dtype::kFp8 ? platform.gpu.dense_fp8_flops_per_s
                                                         : platform.gpu.dense_bf16_flops_per_s;
  const double flops_per_s = peak * spec.efficiency;
  double forward_flops = 0;
  for (const StageModel& stage : stages) forward_flops += stage.forward_flops;
  const double iteration_flops = 3 * forward_flops * m * spec.training.tp;
  const std::string definition =
      "MFU = model FLOPs / (iteration time x GPUs x peak FLOP/s); model FLOPs = 3 x forward FLOPs "
      "(matmuls and attention) per microbatch and stage, without recompute";
  if (format == "json") {
    out << "{\n  \"model\": \"" << model.name << "\",\n  \"parameters\": "
        << model.TotalParameters() << ",\n  \"gpu\": \"" << platform.gpu.name
        << "\",\n  \"flops_per_s\": " << FormatNumber(flops_per_s)
        << ",\n  \"model_flops_per_iteration\": " << FormatNumber(iteration_flops)
        << ",\n  \"mfu_definition\": \"" << definition << "\",\n  \"stages\": [";
    for (size_t k = 0; k < stages.size(); ++k) {
      const StageModel& st = stages[k];
      out << (k ? ",\n" : "\n") << "    {\"stage\": " << k << ", \"layers\": " << st.layers
          << ", \"parameters\": " << st.parameters
          << ", \"f_s\": " << FormatNumber(st.forward_flops / flops_per_s)
          << ", \"i_s\": " << FormatNumber(st.backward_input_flops / flops_per_s)
          << ", \"w_s\": " << FormatNumber(st.backward_weight_flops / flops_per_s)
          << ", \"activation_bytes\": " << st.activation_bytes
          << ", \"activation_w_bytes\": " << st.activation_w_bytes
          << ", \"message_bytes\": " << st.message_bytes
          << ", \"static_bytes\": " << st.static_bytes << "}";
    }
    out << "\n  ]\n}\n";
    return kExitOk;
  }
  out << model.name << ": " << HumanCount(static_cast<double>(model.TotalParameters()))
      << " parameters; "
      << p * v << " stages on " << platform.gpu.name << " at " << HumanFlops(flops_per_s) << "/s"
      << " (" << FormatNumber(spec.efficiency) << " of peak); per GPU of the tensor-parallel group\n\n";
  std::vector<std::vector<std::string>> rows = {{"stage", "layers", "parameters", "F", "I", "W",
                                                 "activation", "activation W", "message",
                                                 "static"}};
  for (size_t k = 0; k < stages.size(); ++k) {
    const StageModel& st = stages[k];
    rows.push_back({std::to_string(k) + (st.embedding ? " (emb)" : "") + (st.lm_head ? " (head)" : ""),
                    std::to_string(st.layers), HumanCount(static_cast<double>(st.parameters)),
                    HumanDuration(st.forward_flops / flops_per_s),
                    HumanDuration(st.backward_input_flops / flops_per_s),
                    HumanDuration(st.backward_weight_flops / flops_per_s),
                    HumanBytes(static_cast<double>(st.activation_bytes)),
                    HumanBytes(static_cast<double>(st.activation_w_bytes)),
                    HumanBytes(static_cast<double>(st.message_bytes)),
                    HumanBytes(static_cast<double>(st.static_bytes))});
  }
  out << FormatColumns(rows) << "\nmodel FLOPs per iteration (" << m << " microbatches): "
      << HumanFlops(iteration_flops) << "\n"
      << definition << "\n";
  return kExitOk;
}

int ListSchedules(std::ostream& out) {
  for (const ScheduleInfo& info : AllSchedules()) {
    out << info.name << std::string(info.name.size() < 10 ? 10 - info.name.size() : 1, ' ')
        << info.summary << "\n";
  }
  return kExitOk;
}

int ListPlatforms(std::ostream& out) {
  for (const PlatformPreset& preset : AllPlatformPresets()) {
    out << preset.name << std::string(preset.name.size() < 11 ? 11 - preset.name.size() : 1, ' ')
        << preset.summary << "\n";
  }
  return kExitOk;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    out << kUsage;
    return kExitOk;
  }
  if (args[0] == "--version") {
    out << "ppsim " << kVersion << "\n";
    return kExitOk;
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  auto no_options = [&](int (*list)(std::ostream&)) {
    if (!rest.empty()) {
      return Usage(err, "ppsim " + command + ": unexpected argument '" + rest[0] +
                            "'; it takes no options");
    }
    return list(out);
  };
  if (command == "run") return Run(rest, out, err);
  if (command == "schedule") return PrintSchedule(rest, out, err);
  if (command == "model") return PrintModel(rest, out, err);
  if (command == "schedules") return no_options(&ListSchedules);
  if (command == "platforms") return no_options(&ListPlatforms);
  return Usage(err, "ppsim: unknown command '" + command +
                        "'; valid: run, schedule, schedules, model, platforms, help");
}

}  // namespace ppsim
