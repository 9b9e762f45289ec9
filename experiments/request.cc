#include "experiments/request.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>

#include "base/escape.h"
#include "base/files.h"
#include "base/flag_locator.h"
#include "base/names.h"
#include "base/numbers.h"
#include "config/units.h"
#include "experiments/framework_emit.h"
#include "experiments/megatron_request.h"
#include "experiments/torchtitan_run.h"
#include "models/offload.h"
#include "schedules/registry.h"

namespace ppsim {
namespace {

// A count the request gave: at least `minimum`.
Status AtLeast(const Locator& where, std::string_view field, int64_t value, int64_t minimum) {
  if (value >= minimum) return Status();
  return where.Invalid(
      field, "must be at least " + std::to_string(minimum) + "; got " + std::to_string(value));
}

// A comma list of whole numbers, each at least `minimum`.
Status WholeList(const Locator& where, std::string_view field, std::string_view text,
                 int32_t minimum, std::vector<int32_t>* values) {
  values->clear();
  for (const std::string& item : SplitCommas(text)) {
    int64_t value = 0;
    if (!ParseWhole(item, &value) || value > std::numeric_limits<int32_t>::max() ||
        value < std::numeric_limits<int32_t>::min()) {
      return where.Invalid(field, "invalid value " + Quoted(item) +
                                      "; expected a whole number >= " + std::to_string(minimum));
    }
    RETURN_IF_ERROR(AtLeast(where, field, value, minimum));
    values->push_back(static_cast<int32_t>(value));
  }
  return Status();
}

// A path from the request, taken from the experiment's folder when relative.
std::string InputPath(const ResolveOptions& options, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return options.directory + path;
}

bool LooksLikeFile(const std::string& value) {
  return value.find('/') != std::string::npos || value.find('.') != std::string::npos;
}

// Records a duration list with an item that has no unit (read as seconds), for the output.
void NoteUnitless(const Locator& where, std::string_view field, const std::string& text,
                  RunSpec* spec) {
  for (const std::string& item : SplitCommas(text)) {
    if (!item.empty() && item.back() >= '0' && item.back() <= '9') {
      spec->unitless_durations.push_back(where.Name(field) + " " + text);
      return;
    }
  }
}

Status ResolveOutputs(const proto::RunConfig& c, const Locator& where, RunRequest* request) {
  if (!c.format().empty()) {
    RETURN_IF_ERROR(ParseOutputFormat(where.Where("format"), c.format(), &request->format));
  }
  request->fail_on_oom = c.fail_on_oom();
  TraceOutputs& outputs = request->outputs;
  outputs.perfetto_path = c.trace();
  outputs.chrome_path = c.chrome_trace();
  outputs.timeline_path = c.timeline();
  if (!c.trace_microbatches().empty()) {
    if (!outputs.any()) {
      return where.Invalid("trace_microbatches",
                           "limits a trace or timeline; add " + where.Name("trace") + ", " +
                               where.Name("chrome_trace") + " or " + where.Name("timeline"));
    }
    RETURN_IF_ERROR(ParseTraceWindow(where.Where("trace_microbatches"), c.trace_microbatches(),
                                     &outputs.window));
  }
  return CheckTraceOutputs(outputs, where);
}

Status ResolveEmit(const proto::RunConfig& c, const Locator& where, RunSpec* spec) {
  if (!c.emit_file().empty() && c.emit().empty()) {
    return where.Invalid("emit_file", "writes the launch that " + where.Name("emit") +
                                          " reports; add " + where.Name("emit") +
                                          " megatron or torchtitan");
  }
  if (c.emit().empty()) return Status();
  Framework framework = Framework::kMegatron;
  RETURN_IF_ERROR(ParseFramework(where.Where("emit"), c.emit(), &framework));
  spec->emit = framework;
  spec->emit_file = c.emit_file();
  if (spec->emit_file.ends_with(".csv")) {
    return where.Invalid("emit_file",
                         "a .csv name is the schedule CSV's, written beside the "
                         "launch; name the arguments or job file (e.g. job.toml)");
  }
  return Status();
}

Status ResolveWorkload(const proto::RunConfig& c, const Locator& where, RunSpec* spec) {
  if (!c.train_tokens().empty()) {
    std::string_view unit;
    RETURN_IF_ERROR(ParseCount(where.Where("train_tokens"), c.train_tokens(), {"tok", "tokens"},
                               &spec->train_tokens, &unit));
    RETURN_IF_ERROR(AtLeast(where, "train_tokens", spec->train_tokens, 1));
  }
  if (c.has_gpu_hour_cost()) {
    if (c.train_tokens().empty()) {
      return where.Invalid("gpu_hour_cost", "prices the GPU-hours of a training run; give " +
                                                where.Name("train_tokens") + " too");
    }
    if (!(c.gpu_hour_cost() >= 0 && c.gpu_hour_cost() <= 1e9)) {
      return where.Invalid("gpu_hour_cost", "invalid value '" + FormatNumber(c.gpu_hour_cost()) +
                                                "'; valid: a price per GPU-hour, 0 to 1e9");
    }
    spec->gpu_hour_cost = c.gpu_hour_cost();
  }
  return Status();
}

// The sharding fields: zero (0 to 3; CheckTrainingSetup says which combine), dp_shard (at least
// 1) and reshard_after_forward (on, off, default).
Status ReadSharding(const proto::RunConfig& c, const Locator& where, TrainingSetup* t) {
  if (c.has_zero()) {
    RETURN_IF_ERROR(AtLeast(where, "zero", c.zero(), 0));
    t->zero_stage = c.zero();
  }
  if (c.has_dp_shard()) {
    RETURN_IF_ERROR(AtLeast(where, "dp_shard", c.dp_shard(), 1));
    t->dp_shard = c.dp_shard();
  }
  const std::string& reshard = c.reshard_after_forward();
  if (reshard.empty() || reshard == "default") return Status();
  if (reshard != "on" && reshard != "off") {
    return where.Invalid("reshard_after_forward",
                         UnknownName("value", reshard, {"on", "off", "default"}));
  }
  t->reshard_after_forward =
      reshard == "on" ? TrainingSetup::Reshard::kOn : TrainingSetup::Reshard::kOff;
  return Status();
}

}  // namespace

bool IsOutputFileField(std::string_view field) {
  return field == "trace" || field == "chrome_trace" || field == "timeline" ||
         field == "trace_microbatches" || field == "emit" || field == "emit_file";
}

Status ResolveSchedule(const proto::RunConfig& c, const Locator& where,
                       const ResolveOptions& options, RunSpec* spec) {
  spec->schedule_name = c.schedule();
  spec->schedule_file = InputPath(options, c.schedule_file());
  if (!c.schedule().empty() && !c.schedule_file().empty()) {
    return where.Invalid("schedule_file", "give " + where.Name("schedule") + " or " +
                                              where.Name("schedule_file") + ", not both");
  }
  if (c.schedule().empty() && c.schedule_file().empty()) {
    return where.Invalid("schedule", "required; give a schedule name (" + ScheduleNames() +
                                         ") or " + where.Name("schedule_file"));
  }
  const bool from_file = !c.schedule_file().empty();
  spec->training.layout.pp = 0;
  spec->microbatches = 0;
  if (c.has_pp()) {
    RETURN_IF_ERROR(AtLeast(where, "pp", c.pp(), 1));
    spec->training.layout.pp = c.pp();
  } else if (!from_file) {
    return where.Invalid(
        "pp", "required; give the number of pipeline ranks, e.g. " + where.Name("pp") + " 4");
  }
  if (!c.global_batch().empty()) {
    std::string_view unit;
    RETURN_IF_ERROR(ParseCount(where.Where("global_batch"), c.global_batch(),
                               {"tok", "tokens", "seq", "sequences"}, &spec->global_batch, &unit));
    RETURN_IF_ERROR(AtLeast(where, "global_batch", spec->global_batch, 1));
    spec->global_batch_in_tokens = unit.starts_with("tok");
  }
  if (c.has_microbatches()) {
    RETURN_IF_ERROR(AtLeast(where, "microbatches", c.microbatches(), 1));
    spec->microbatches = c.microbatches();
  } else if (!from_file && c.global_batch().empty()) {
    return where.Invalid("microbatches", "required; give the microbatches per iteration, e.g. " +
                                             where.Name("microbatches") + " 8, or " +
                                             where.Name("global_batch"));
  }
  if (c.has_stages_per_rank()) {
    if (from_file) {
      return where.Invalid("stages_per_rank", "not used with " + where.Name("schedule_file") +
                                                  "; the file's actions give the stages");
    }
    RETURN_IF_ERROR(AtLeast(where, "stages_per_rank", c.stages_per_rank(), 1));
    spec->stages_per_rank = c.stages_per_rank();
  }
  if (!c.stage_to_rank().empty()) {
    if (!from_file) {
      return where.Invalid("stage_to_rank", "applies to " + where.Name("schedule_file") +
                                                " only; named schedules place their stages");
    }
    std::vector<int32_t> ranks;
    RETURN_IF_ERROR(WholeList(where, "stage_to_rank", c.stage_to_rank(), 0, &ranks));
    for (int32_t rank : ranks) spec->stage_to_rank.push_back(RankIndex(rank));
  }
  if (c.has_microbatch_group_size()) {
    bool megatron = false;
    for (const std::string& name : SplitCommas(c.schedule())) {
      const ScheduleInfo* info = FindSchedule(name);
      megatron |= info != nullptr && info->name == "Megatron-Interleaved";
    }
    if (!megatron) {
      return where.Invalid("microbatch_group_size",
                           "applies to " + where.Name("schedule") + " Megatron-Interleaved only");
    }
    RETURN_IF_ERROR(AtLeast(where, "microbatch_group_size", c.microbatch_group_size(), 1));
    spec->microbatch_group_size = c.microbatch_group_size();
  }
  return Status();
}

Status ResolveCosts(const proto::RunConfig& c, const Locator& where, const ResolveOptions& options,
                    RunSpec* spec) {
  CostValues& costs = spec->costs;
  auto times = [&](std::string_view field, const std::string& text, std::vector<double>* out) {
    if (text.empty()) return Status();
    RETURN_IF_ERROR(ParseDurationList(where.Where(field), text, out));
    NoteUnitless(where, field, text, spec);
    return Status();
  };
  auto sizes = [&](std::string_view field, const std::string& text, std::vector<int64_t>* out) {
    return text.empty() ? Status() : ParseSizeList(where.Where(field), text, out);
  };
  RETURN_IF_ERROR(times("f", c.f(), &costs.forward_s));
  RETURN_IF_ERROR(times("i", c.i(), &costs.backward_input_s));
  RETURN_IF_ERROR(times("w", c.w(), &costs.backward_weight_s));
  RETURN_IF_ERROR(times("b", c.b(), &costs.backward_s));
  RETURN_IF_ERROR(times("overlap", c.overlap(), &costs.overlap_s));
  RETURN_IF_ERROR(sizes("activation", c.activation(), &costs.activation_bytes));
  RETURN_IF_ERROR(sizes("activation_w", c.activation_w(), &costs.activation_w_bytes));
  RETURN_IF_ERROR(sizes("message_bytes", c.message_bytes(), &costs.message_bytes));
  RETURN_IF_ERROR(sizes("grad_bytes", c.grad_bytes(), &costs.gradient_bytes));
  if (!c.costs_per().empty()) {
    RETURN_IF_ERROR(ParseCostsPer(where.Where("costs_per"), c.costs_per(), &spec->costs_per));
  }
  spec->profile_file = InputPath(options, c.profile());
  if (c.memory_limit().ends_with('p')) {
    // "2p": ZB-auto's activations within 2 x p x M_B (PrepareRun checks the schedule).
    const std::string digits = c.memory_limit().substr(0, c.memory_limit().size() - 1);
    int64_t multiple = 0;
    if (!digits.empty() && digits.size() <= 4 &&
        std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      multiple = std::stoll(digits);
    }
    if (multiple < 1 || multiple > kMaxActivationLimitP) {
      return where.Invalid("memory_limit", "invalid value '" + Printable(c.memory_limit()) +
                                               "'; a multiple of p x M_B is a whole 1p to " +
                                               std::to_string(kMaxActivationLimitP) +
                                               "p, or give a size (80GiB)");
    }
    spec->activation_limit_p = static_cast<int32_t>(multiple);
  } else if (!c.memory_limit().empty()) {
    RETURN_IF_ERROR(
        ParseSize(where.Where("memory_limit"), c.memory_limit(), &spec->memory_limit_bytes));
    if (spec->memory_limit_bytes == 0) {
      return where.Invalid("memory_limit", "must be more than 0 bytes");
    }
  }
  if (!c.memory_reserve().empty()) {
    RETURN_IF_ERROR(
        ParseSize(where.Where("memory_reserve"), c.memory_reserve(), &spec->memory_reserve_bytes));
  }
  if (c.has_activation_overhead()) {
    if (!(c.activation_overhead() >= 0 && c.activation_overhead() <= 10)) {
      return where.Invalid("activation_overhead",
                           "invalid value '" + FormatNumber(c.activation_overhead()) +
                               "'; valid: a fraction of the peak activations, 0 to 10");
    }
    spec->activation_overhead = c.activation_overhead();
  }
  return Status();
}

// --cp-comm-type: with a model only (its checks against the heads are CheckTrainingSetup's).
Status ResolveCpCommType(const proto::RunConfig& c, const Locator& where, TrainingSetup* t) {
  if (c.cp_comm_type().empty() && !c.has_cp_a2a_size()) return Status();
  const std::string_view field = c.cp_comm_type().empty() ? "cp_a2a_size" : "cp_comm_type";
  if (c.model().empty())
    return where.Invalid(field, "applies with " + where.Name("model") + " only");
  if (!c.cp_comm_type().empty()) {
    RETURN_IF_ERROR(
        ParseCpCommType(where.Where("cp_comm_type"), c.cp_comm_type(), &t->cp_comm_type));
  }
  // Its range against cp and the heads: CheckCpCommType.
  if (c.has_cp_a2a_size() && c.cp_a2a_size() < 1) {
    return where.Invalid("cp_a2a_size", "must be at least 1 (the inner all-to-all group's GPUs); "
                                        "got " + std::to_string(c.cp_a2a_size()));
  }
  if (c.has_cp_a2a_size()) t->cp_a2a_size = c.cp_a2a_size();
  return Status();
}

// Megatron's recompute modules, method and N (checked against the model by CheckTrainingSetup);
// modules imply --recompute selective and a method --recompute full when none is given.
Status ResolveRecomputeDetail(const proto::RunConfig& c, const Locator& where, TrainingSetup* t) {
  if (!c.recompute_modules().empty()) {
    RETURN_IF_ERROR(ParseRecomputeModules(where.Where("recompute_modules"), c.recompute_modules(),
                                          &t->recompute_modules));
    if (c.recompute().empty()) t->recompute = Recompute::kSelective;
  }
  if (!c.recompute_method().empty()) {
    RETURN_IF_ERROR(ParseRecomputeMethod(where.Where("recompute_method"), c.recompute_method(),
                                         &t->recompute_method));
    if (c.recompute().empty()) t->recompute = Recompute::kFull;
  }
  if (c.has_recompute_num_layers()) {
    RETURN_IF_ERROR(AtLeast(where, "recompute_num_layers", c.recompute_num_layers(), 1));
    t->recompute_num_layers = c.recompute_num_layers();
  }
  if (!c.offload_modules().empty()) {  // checked against the model by CheckTrainingSetup
    RETURN_IF_ERROR(ParseOffloadModules(where.Where("offload_modules"), c.offload_modules(),
                                        &t->offload_modules));
  }
  return Status();
}

Status ResolveModel(const proto::RunConfig& c, const Locator& where, const ResolveOptions& options,
                    RunSpec* spec) {
  TrainingSetup& t = spec->training;
  // Without a model these count the workload (tokens and samples per second).
  if (c.has_seq_len()) {
    RETURN_IF_ERROR(AtLeast(where, "seq_len", c.seq_len(), 1));
    t.seq_len = c.seq_len();
  }
  if (c.has_microbatch_size()) {
    RETURN_IF_ERROR(AtLeast(where, "microbatch_size", c.microbatch_size(), 1));
    t.microbatch_size = c.microbatch_size();
  }
  RETURN_IF_ERROR(ResolveCpCommType(c, where, &t));
  if (c.model().empty()) {
    // The model's options mean nothing without a model.
    const char* fields[] = {"dtype",
                            "sequence_parallel",
                            "recompute",
                            "flash_attention",
                            "zero",
                            "dp_shard",
                            "reshard_after_forward",
                            "layers_per_stage",
                            "embedding_as_layer",
                            "loss_as_layer",
                            "efficiency",
                            "grad_dtype",
                            "bytes_per_param",
                            "tp_comm_overlap",
                            "recompute_modules",
                            "recompute_method",
                            "recompute_num_layers",
                            "offload_modules",
                            "mtp_layers"};
    const google::protobuf::Descriptor* type = c.GetDescriptor();
    const google::protobuf::Reflection* reflection = c.GetReflection();
    for (const char* field : fields) {
      if (reflection->HasField(c, type->FindFieldByName(field))) {
        return where.Invalid(field, "applies with " + where.Name("model") + " only");
      }
    }
    return Status();
  }
  const bool preset = FindTransformerPreset(c.model()) != nullptr;  // "gpt3-1.5b" has a dot
  spec->model = !preset && LooksLikeFile(c.model()) ? InputPath(options, c.model()) : c.model();
  RETURN_IF_ERROR(ReadSharding(c, where, &t));
  if (!c.dtype().empty()) RETURN_IF_ERROR(ParseDtype(where.Where("dtype"), c.dtype(), &t.dtype));
  if (!c.recompute().empty()) {
    RETURN_IF_ERROR(ParseRecompute(where.Where("recompute"), c.recompute(), &t.recompute));
  }
  RETURN_IF_ERROR(ResolveRecomputeDetail(c, where, &t));
  if (!c.grad_dtype().empty()) {
    if (c.grad_dtype() != "fp32" && c.grad_dtype() != "bf16") {
      return where.Invalid("grad_dtype", UnknownName("value", c.grad_dtype(), {"fp32", "bf16"}));
    }
    t.fp32_grads = c.grad_dtype() == "fp32";
  }
  if (!c.bytes_per_param().empty()) {
    std::vector<int32_t> bytes;
    RETURN_IF_ERROR(WholeList(where, "bytes_per_param", c.bytes_per_param(), 0, &bytes));
    if (bytes.empty() || bytes.size() > 2 || bytes[0] > 64 ||
        (bytes.size() == 2 && bytes[1] > 64)) {
      return where.Invalid("bytes_per_param",
                           "give R or R,S: whole bytes per parameter, each 0 to 64 (e.g. 6,12)");
    }
    t.replicated_bytes_per_param = bytes[0];
    t.sharded_bytes_per_param = bytes.size() == 2 ? bytes[1] : 0;
  }
  t.sequence_parallel = c.sequence_parallel();
  spec->tp_comm_overlap = c.tp_comm_overlap();
  if (c.has_mtp_layers()) {
    if (c.mtp_layers() < 0 || c.mtp_layers() > 100) {
      return where.Invalid("mtp_layers", "expected 0 to 100 multi-token prediction modules; got " +
                                             std::to_string(c.mtp_layers()));
    }
    spec->mtp_layers = c.mtp_layers();
  }
  if (!c.flash_attention().empty()) {
    if (c.flash_attention() != "on" && c.flash_attention() != "off") {
      return where.Invalid("flash_attention",
                           UnknownName("value", c.flash_attention(), {"on", "off"}));
    }
    t.flash_attention = c.flash_attention() == "on";
  }
  if (!c.layers_per_stage().empty()) {
    RETURN_IF_ERROR(WholeList(where, "layers_per_stage", c.layers_per_stage(), 0,
                              &spec->layer_split.layers_per_stage));
  }
  spec->layer_split.embedding_as_layer = c.embedding_as_layer();
  spec->layer_split.loss_as_layer = c.loss_as_layer();
  if (c.has_efficiency()) {
    if (!(c.efficiency() >= 0.001 && c.efficiency() <= 1)) {
      return where.Invalid("efficiency", "invalid value '" + FormatNumber(c.efficiency()) +
                                             "'; expected a fraction of peak in [0.001, 1], e.g. "
                                             "0.45");
    }
    spec->efficiency = c.efficiency();
  }
  return Status();
}

Status ResolvePlatform(const proto::RunConfig& c, const Locator& where,
                       const ResolveOptions& options, RunSpec* spec) {
  PlatformChoice& choice = spec->platform;
  if (!c.platform().empty()) {
    choice.platform = LooksLikeFile(c.platform()) ? InputPath(options, c.platform()) : c.platform();
  }
  if (c.has_nodes()) {
    RETURN_IF_ERROR(AtLeast(where, "nodes", c.nodes(), 1));
    choice.nodes = c.nodes();
  }
  choice.sets.assign(c.set().begin(), c.set().end());
  if (!c.calibration().empty()) choice.calibration_file = InputPath(options, c.calibration());
  if (!c.placement().empty()) {
    RETURN_IF_ERROR(ParsePlacement(where.Where("placement"), c.placement(), &choice.placement));
  }
  if (!c.hosts().empty()) {
    if (!choice.platform.ends_with(".xml")) {
      return where.Invalid(
          "hosts", "applies to an XML platform (" + where.Name("platform") + " FILE.xml) only");
    }
    choice.hosts = SplitCommas(c.hosts());
  }
  choice.p2p_latency = c.p2p_latency();
  if (!c.p2p_latency().empty()) NoteUnitless(where, "p2p_latency", c.p2p_latency(), spec);
  choice.p2p_bandwidth = c.p2p_bandwidth();
  if (c.has_tp()) {
    RETURN_IF_ERROR(AtLeast(where, "tp", c.tp(), 1));
    spec->training.layout.tp = c.tp();
  }
  if (c.has_dp()) {
    RETURN_IF_ERROR(AtLeast(where, "dp", c.dp(), 1));
    spec->training.layout.dp = c.dp();
    if (c.dp() > kMaxReplicas) {
      return where.Invalid(
          "dp", std::to_string(c.dp()) + " replicas; at most " + std::to_string(kMaxReplicas));
    }
  }
  if (c.has_cp()) {
    RETURN_IF_ERROR(AtLeast(where, "cp", c.cp(), 1));
    spec->training.layout.cp = c.cp();
    if (c.cp() > 1 && c.model().empty()) {
      return where.Invalid("cp", "splits the model's sequences; give " + where.Name("model"));
    }
  }
  if (c.has_ep()) {
    RETURN_IF_ERROR(AtLeast(where, "ep", c.ep(), 1));
    spec->training.layout.ep = c.ep();
    if (c.ep() > 1 && c.model().empty()) {
      return where.Invalid("ep", "shards a model's experts; give " + where.Name("model"));
    }
  }
  if (c.has_moe_node_limit()) {
    RETURN_IF_ERROR(AtLeast(where, "moe_node_limit", c.moe_node_limit(), 1));
    spec->moe_node_limit = c.moe_node_limit();
    if (spec->training.layout.ep < 2) {
      return where.Invalid("moe_node_limit",
                           "limits where the expert-parallel all-to-alls "
                           "send tokens; give " +
                               where.Name("ep") + " 2 or more");
    }
  }
  if (c.has_comm_sms()) {
    RETURN_IF_ERROR(AtLeast(where, "comm_sms", c.comm_sms(), 0));
    spec->comm_sms = c.comm_sms();
    if (c.comm_sms() > 0 && spec->training.layout.ep < 2) {
      return where.Invalid("comm_sms",
                           "slows computation beside the expert-parallel "
                           "all-to-alls; give " +
                               where.Name("ep") + " 2 or more");
    }
  }
  // A rank's group of tp x cp GPUs is numbered in 16 bits (and must fit in a node).
  const int64_t group = int64_t{spec->training.layout.tp} * spec->training.layout.cp;
  if (group > kMaxGpusPerRank) {
    const bool cp = spec->training.layout.cp > 1;
    return where.Invalid(cp ? "cp" : "tp",
                         (cp ? std::to_string(spec->training.layout.cp) + " x " + where.Name("tp") +
                                   " " + std::to_string(spec->training.layout.tp) + " = "
                             : std::string()) +
                             std::to_string(group) + " GPUs per rank; at most " +
                             std::to_string(kMaxGpusPerRank));
  }
  if (!c.grad_bucket().empty()) {
    RETURN_IF_ERROR(
        ParseSize(where.Where("grad_bucket"), c.grad_bucket(), &spec->grad_bucket_bytes));
    if (spec->grad_bucket_bytes == 0) {
      return where.Invalid("grad_bucket", "must be more than 0 bytes");
    }
    spec->training.grad_bucket_bytes = spec->grad_bucket_bytes;  // ZeRO-2's bucket in flight
    if (spec->training.layout.dp * spec->training.layout.cp < 2) {
      return where.Invalid("grad_bucket", "buckets the data-parallel all-reduce; give " +
                                              where.Name("dp") + " 2 or more (or " +
                                              where.Name("cp") + ")");
    }
  }
  if (spec->tp_comm_overlap && spec->training.layout.tp < 2) {
    return where.Invalid("tp_comm_overlap", "overlaps the tensor-parallel collectives; give " +
                                                where.Name("tp") + " 2 or more");
  }
  return Status();
}

Status ResolveLimits(const proto::RunConfig& c, const Locator& where, RunSpec* spec) {
  if (!c.has_max_tasks()) return Status();
  RETURN_IF_ERROR(AtLeast(where, "max_tasks", c.max_tasks(), 1));
  spec->max_tasks = c.max_tasks();
  return Status();
}

// Megatron-LM's combined 1F1B and delayed weight gradients, refused where Megatron asserts
// (megatron/core/transformer/transformer_config.py, read at commit d98e8a64): expert parallelism,
// no full recomputation, no "moe" recomputed; delay_wgrad_compute only with the overlap. The
// schedule is checked by its generator (schedules/registry.cc).
Status ResolveMoeOverlap(const proto::RunConfig& c, const Locator& where, RunSpec* spec) {
  spec->moe_a2a_overlap = c.overlap_moe_expert_parallel_comm();
  spec->delay_wgrad = c.delay_wgrad_compute();
  const std::string field = "overlap_moe_expert_parallel_comm";
  if (spec->delay_wgrad && !spec->moe_a2a_overlap) {
    return where.Invalid("delay_wgrad_compute",
                         "splits the weight gradients for the expert-"
                         "parallel overlap; give " +
                             where.Name(field));
  }
  if (!spec->moe_a2a_overlap) return Status();
  if (spec->training.layout.ep < 2) {
    return where.Invalid(field, "overlaps the expert-parallel all-to-alls; give " +
                                    where.Name("ep") + " 2 or more with a MoE " +
                                    where.Name("model"));
  }
  if (!spec->schedule_file.empty()) {
    return where.Invalid(field, "orders a generated schedule; valid: " + where.Name("schedule") +
                                    " Megatron-Interleaved, or 1F1B with " + where.Name("pp") +
                                    " 1 (not a schedule file)");
  }
  if (spec->p2p_mode == P2pMode::kMegatron || spec->p2p_mode == P2pMode::kMegatronNoOverlap) {
    return where.Invalid("p2p_mode", "Megatron-LM's p2p calls around the combined steps of " +
                                         where.Name(field) + " are not modelled; valid: eager, torch");
  }
  const TrainingSetup& t = spec->training;
  if (t.recompute == Recompute::kFull || (RecomputeModulesOf(t) & kRecomputeMoe) != 0) {
    return where.Invalid(field,
                         "Megatron-LM refuses it with full recomputation or \"moe\" "
                         "recomputed; valid: " +
                             where.Name("recompute") + " none or selective without moe");
  }
  return Status();
}

Status ResolveRun(const proto::RunConfig& request_config, std::shared_ptr<const Locator> where,
                  const ResolveOptions& options, RunRequest* request) {
  *request = RunRequest();
  if (!request_config.megatron().empty() && !request_config.torchtitan().empty()) {
    return where->Invalid("torchtitan", "a run imports one framework's configuration; give " +
                                            where->Name("megatron") + " or " +
                                            where->Name("torchtitan") + ", not both");
  }
  // A framework's configuration becomes the request's own fields first, under every field the
  // request gives itself: Megatron-LM arguments (experiments/megatron_request.h) or a torchtitan
  // job file (experiments/torchtitan_run.h). Their notes, each prefixed by its framework, are
  // RunSpec::import_notes.
  MegatronRequest megatron;
  if (!request_config.megatron().empty()) {
    RETURN_IF_ERROR(ApplyMegatron(request_config, where, options.directory, &megatron));
    where = megatron.where;
  }
  const proto::RunConfig& imported =
      request_config.megatron().empty() ? request_config : megatron.config;
  const Locator& at = *where;
  RunSpec base;
  base.where = where;
  for (const std::string& note : megatron.notes) base.import_notes.push_back("megatron: " + note);
  proto::RunConfig config;
  RETURN_IF_ERROR(
      ApplyTorchtitan(imported, at, options, &config, &base.import_notes, &request->sources));
  RETURN_IF_ERROR(ResolveSchedule(config, at, options, &base));
  RETURN_IF_ERROR(ResolveCosts(config, at, options, &base));
  RETURN_IF_ERROR(ResolveModel(config, at, options, &base));
  base.model_spec = megatron.model;
  RETURN_IF_ERROR(ResolvePlatform(config, at, options, &base));
  RETURN_IF_ERROR(ResolveLimits(config, at, &base));
  if (!config.engine().empty()) {
    RETURN_IF_ERROR(ParseEngineKind(at.Where("engine"), config.engine(), &base.engine));
  }
  if (!config.p2p_mode().empty()) {
    RETURN_IF_ERROR(ParseP2pMode(at.Where("p2p_mode"), config.p2p_mode(), &base.p2p_mode));
  }
  RETURN_IF_ERROR(ResolveMoeOverlap(config, at, &base));
  if (!config.replicas().empty()) {
    constexpr NamedValue<bool> kReplicas[] = {{"one", true}, {"all", false}};
    bool fold = true;
    RETURN_IF_ERROR(
        ParseNamed(kReplicas, "replicas choice", at.Where("replicas"), config.replicas(), &fold));
    base.fold_replicas = fold;
  }
  if (!config.collective_algorithm().empty()) {
    bool forced = false;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
    RETURN_IF_ERROR(ParseCollectiveAlgorithm(at.Where("collective_algorithm"),
                                             config.collective_algorithm(), &forced, &algorithm));
    if (forced) base.collective_algorithm = algorithm;
  }
  RETURN_IF_ERROR(ResolveWorkload(config, at, &base));
  RETURN_IF_ERROR(ResolveOutputs(config, at, request));
  RETURN_IF_ERROR(ResolveEmit(config, at, &base));
  base.request = std::make_shared<const proto::RunConfig>(config);
  if (!megatron.file.empty()) request->sources.push_back(megatron.file);
  if (!base.schedule_file.empty()) {
    request->runs.push_back(base);
    return Status();
  }
  const std::vector<std::string> names = SplitCommas(base.schedule_name);
  if (!base.emit_file.empty() && names.size() > 1) {
    return at.Invalid("emit_file", "writes one run's launch; give one schedule, or leave " +
                                       at.Name("emit_file") + " out to print each run's");
  }
  if (options.one_schedule && names.size() > 1) {
    return at.Invalid("schedule",
                      "one schedule per point; sweep schedules with an axis (field: "
                      "schedule)");
  }
  for (const std::string& name : names) {
    RunSpec spec = base;
    spec.schedule_name = name;
    request->runs.push_back(std::move(spec));
  }
  return Status();
}

namespace {

// The schedule CSV beside an --emit-file: its name with .csv in place of its extension.
std::string CsvBeside(const std::string& file) {
  if (file.empty()) return "";
  const size_t slash = file.rfind('/');
  const size_t dot = file.rfind('.');
  const bool extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (extension ? file.substr(0, dot) : file) + ".csv";
}

Status EmitOfRun(const PreparedRun& run, std::optional<FrameworkLaunch>* launch) {
  if (!run.spec.emit) return Status();
  const std::string csv =
      run.spec.emit_file.empty() ? "schedule.csv" : CsvBeside(run.spec.emit_file);
  const size_t slash = csv.rfind('/');
  launch->emplace();
  return EmitLaunch(run, *run.spec.emit, slash == std::string::npos ? csv : csv.substr(slash + 1),
                    &**launch);
}

// Writes the launch to --emit-file (and its CSV beside) and puts it in the result.
Status WriteLaunch(const RunSpec& spec, const std::optional<FrameworkLaunch>& launch,
                   RunResult* result) {
  if (!launch) return Status();
  const std::string& file = spec.emit_file;
  const std::string shown = !file.empty()                               ? file
                            : launch->framework == Framework::kMegatron ? "args.txt"
                                                                        : "job.toml";
  result->launch = launch;
  result->import_command = ImportCommand(*launch, shown, FlagLocator());
  if (file.empty()) return Status();
  RETURN_IF_ERROR(WriteWholeFile(spec.where->Where("emit_file"), file, launch->text));
  if (launch->schedule_csv.empty()) return Status();
  return WriteWholeFile(spec.where->Where("emit_file"), CsvBeside(file), launch->schedule_csv);
}

}  // namespace

Status ExecuteRequest(const RunRequest& request, const std::string& command,
                      std::vector<RunResult>* results) {
  results->clear();
  // Describe and compile every run before any engine starts.
  std::vector<PreparedRun> prepared(request.runs.size());
  std::vector<std::optional<FrameworkLaunch>> launches(request.runs.size());
  for (size_t i = 0; i < request.runs.size(); ++i) {
    RETURN_IF_ERROR(PrepareRun(request.runs[i], &prepared[i]));
    RETURN_IF_ERROR(EmitOfRun(prepared[i], &launches[i]));
    if (request.outputs.any()) {
      RETURN_IF_ERROR(CheckTraceWindow(request.runs[i].where->Where("trace_microbatches"),
                                       request.outputs.window,
                                       prepared[i].schedule.num_microbatches));
    }
  }
  for (size_t i = 0; i < prepared.size(); ++i) {
    std::vector<std::string> inputs = InputFiles(request.runs[i]);
    inputs.insert(inputs.end(), request.sources.begin(), request.sources.end());
    const TraceOutputs outputs = prepared.size() == 1
                                     ? request.outputs
                                     : OutputsOfRun(request.outputs, request.runs[i].schedule_name);
    const Locator& where = *request.runs[i].where;
    for (const auto& [field, path] : {std::pair{"trace", outputs.perfetto_path},
                                      {"chrome_trace", outputs.chrome_path},
                                      {"timeline", outputs.timeline_path},
                                      {"emit_file", request.runs[i].emit_file},
                                      {"emit_file", CsvBeside(request.runs[i].emit_file)}}) {
      RETURN_IF_ERROR(CheckNotAnInput(where.Where(field), path, inputs));
    }
  }
  results->resize(prepared.size());
  for (size_t i = 0; i < prepared.size(); ++i) {
    Timeline timeline;
    RETURN_IF_ERROR(ExecuteRun(prepared[i], &(*results)[i], &timeline));
    RETURN_IF_ERROR(WriteLaunch(request.runs[i], launches[i], &(*results)[i]));
    if (request.outputs.any()) {
      const TraceOutputs outputs = prepared.size() == 1
                                       ? request.outputs
                                       : OutputsOfRun(request.outputs, (*results)[i].label);
      RETURN_IF_ERROR(WriteTraceOutputs(outputs, prepared[i], (*results)[i], timeline, command));
    }
    prepared[i] = PreparedRun();  // Free the task graph before the next run.
  }
  return Status();
}

}  // namespace ppsim
