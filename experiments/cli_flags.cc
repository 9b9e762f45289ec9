#include "experiments/cli_flags.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <sstream>

#include "base/names.h"
#include "schedules/registry.h"

namespace ppsim::cli {
namespace {

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

}  // namespace

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

void AddRepeated(po::options_description& d, const char* name, const char* value_name,
                 const char* help) {
  d.add_options()(name, po::value<std::vector<std::string>>()->composing()->value_name(value_name),
                  help);
}

std::vector<std::string> GetAll(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::vector<std::string>>() : std::vector<std::string>();
}

void AddPlatformOptions(po::options_description& d) {
  AddValue(d, "platform", "NAME|FILE",
           "a preset (default h100-node; see 'ppsim platforms'), a cluster file (.textproto, "
           ".json, .yaml) or a SimGrid .xml with --hosts");
  AddValue(d, "nodes", "N", "nodes of the cluster (default: the preset's or file's)");
  AddRepeated(d, "set", "PATH=VALUE",
              "override a cluster field, e.g. --set nic.bandwidth=200Gbps (repeatable; 'ppsim "
              "platforms --keys' lists the paths)");
  AddValue(d, "placement", "HOW",
           "rank groups on GPUs: contiguous (default), round-robin over nodes, or the first GPU "
           "of each group (rank-major), e.g. 0,8,1,9");
  AddValue(d, "hosts", "LIST", "with an XML platform: the host of every GPU, in order");
  AddValue(d, "tp", "T", "tensor-parallel degree: GPUs per rank, inside one node (default 1)");
  AddValue(d, "dp", "D",
           "data-parallel replicas of the pipeline; gradients are ring-all-reduced (default 1)");
  AddValue(d, "p2p-latency", "TIME", "ideal platform: latency of every transfer (default 0)");
  AddValue(d, "p2p-bandwidth", "RATE", "ideal platform: bandwidth of every transfer (default inf)");
}

Status ReadPlatformChoice(const po::variables_map& vm, RunSpec* spec) {
  PlatformChoice& choice = spec->platform;
  if (vm.count("platform")) choice.platform = Get(vm, "platform");
  Status status;
  if (vm.count("nodes")) status = ParseCount("--nodes", Get(vm, "nodes"), &choice.nodes);
  if (!status.ok()) return status;
  choice.sets = GetAll(vm, "set");
  if (vm.count("placement")) {
    status = ParsePlacement("--placement", Get(vm, "placement"), &choice.placement);
    if (!status.ok()) return status;
  }
  if (vm.count("hosts")) choice.hosts = SplitCommas(Get(vm, "hosts"));
  const std::string& name = choice.platform;
  const bool xml = name.size() >= 4 && name.compare(name.size() - 4, 4, ".xml") == 0;
  if (vm.count("hosts") && !xml) {
    return Status::InvalidInput("--hosts: applies to an XML platform (--platform FILE.xml) only");
  }
  choice.p2p_latency = Get(vm, "p2p-latency");
  choice.p2p_bandwidth = Get(vm, "p2p-bandwidth");
  if (vm.count("tp")) status = ParseCount("--tp", Get(vm, "tp"), &spec->training.tp);
  if (!status.ok()) return status;
  if (vm.count("dp")) status = ParseCount("--dp", Get(vm, "dp"), &spec->training.dp);
  return status;
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
Status ParseCount(const char* flag, const std::string& text, int32_t* value, int32_t minimum) {
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
  d.add_options()("sequence-parallel", "--model: Megatron sequence parallelism with --tp");
  AddValue(d, "recompute", "NAME", "--model: none (default), selective or full");
  AddValue(d, "flash-attention", "on|off", "--model: flash attention (default on)");
  AddValue(d, "zero", "0|1", "--model: ZeRO stage (default 0; 1 shards optimizer state over --dp)");
  AddValue(d, "layers-per-stage", "LIST", "--model: layers of each stage (default: even split)");
  d.add_options()("embedding-as-layer", "--model: count the embedding as a layer in the split");
  d.add_options()("loss-as-layer", "--model: count the LM head and loss as a layer in the split");
  AddValue(d, "efficiency", "X", "--model: achieved fraction of the GPU's peak FLOP/s (default 0.5)");
}

// Reads the --model options into `spec`.
Status ReadModelChoice(const po::variables_map& vm, RunSpec* spec) {
  const char* model_flags[] = {"seq-len", "microbatch-size", "dtype", "sequence-parallel",
                               "recompute", "flash-attention", "zero", "layers-per-stage",
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

}  // namespace ppsim::cli
