#include "interop/torchtitan_toml.h"

#include <toml++/toml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

// torchtitan's [model] name and flavor -> ppsim's preset of the same shape (torchtitan's
// models/<name>/__init__.py flavors; the presets are the published configs of the same models).
constexpr TorchtitanFlavor kFlavors[] = {
    {"llama3", "8B", "llama3-8b"},
    {"llama3", "70B", "llama3-70b"},
    {"llama3", "405B", "llama3-405b"},
    {"deepseek_v3", "671B", "deepseek-v3"},
};

// The schedules torch's get_schedule_class knows, as ppsim names them; the first two run one
// stage per rank (PipelineScheduleSingle), the others several (PipelineScheduleMulti).
constexpr std::string_view kSchedules[] = {
    "GPipe",         "1F1B",     "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble",
    "ZBVZeroBubble", "DualPipeV"};

// Keys read by the mapping below, by section (torchtitan/config/job_config.py).
const std::map<std::string, std::vector<std::string>>& AppliedKeys() {
  static const auto* const kKeys = new std::map<std::string, std::vector<std::string>>{
      {"model", {"name", "flavor", "converters"}},
      {"training",
       {"local_batch_size", "batch_size", "global_batch_size", "seq_len", "dtype",
        "mixed_precision_param", "mixed_precision_reduce", "enable_cpu_offload"}},
      {"parallelism",
       {"data_parallel_replicate_degree", "data_parallel_shard_degree", "tensor_parallel_degree",
        "context_parallel_degree", "expert_parallel_degree", "expert_tensor_parallel_degree",
        "pipeline_parallel_degree", "pipeline_parallel_schedule", "pipeline_parallel_schedule_csv",
        "pipeline_parallel_layers_per_stage", "pipeline_parallel_first_stage_less_layers",
        "pipeline_parallel_last_stage_less_layers", "pipeline_parallel_microbatch_size",
        "enable_async_tensor_parallel", "module_fqns_per_model_part",
        "fsdp_reshard_after_forward"}},
      {"activation_checkpoint", {"mode", "selective_ac_option"}},
      {"compile", {"enable", "components"}},
      {"fault_tolerance", {"enable"}},
      {"experimental", {"custom_import", "custom_args_module"}},
  };
  return *kKeys;
}

// Keys that change nothing ppsim times, each group with why (one note per group).
struct Ignored {
  std::string_view prefix;  // a section ("job.") or one key
  std::string_view why;
};
constexpr Ignored kIgnored[] = {
    {"job.", "bookkeeping"},
    {"profiling.", "profiling and logging"},
    {"metrics.", "profiling and logging"},
    {"comm.", "timeouts and tracing"},
    {"debug.", "seeds and determinism checks"},
    {"memory_estimation.", "torchtitan's own estimator"},
    {"optimizer.", "the optimizer's hyperparameters (ppsim costs AdamW's step)"},
    {"lr_scheduler.", "the learning-rate schedule"},
    {"checkpoint.", "checkpoints are saved between steps; a steady step is simulated"},
    {"validation.", "validation runs between training steps"},
    {"fault_tolerance.", "fault tolerance is off (enable = false)"},
    {"model.hf_assets_path", "tokenizer and weight paths"},
    {"model.tokenizer_path", "tokenizer and weight paths"},
    {"model.print_after_conversion", "bookkeeping"},
    {"training.dataset", "the data (not its size)"},
    {"training.dataset_path", "the data (not its size)"},
    {"training.dataloader.", "the data loader runs beside the GPU work"},
    {"training.max_norm", "gradient clipping (a few reductions, not modelled)"},
    {"training.steps", "a steady step is simulated"},
    {"training.gc_freq", "host garbage collection"},
    {"training.gc_debug", "host garbage collection"},
    {"parallelism.disable_loss_parallel", "the loss's sharding over TP"},
    {"parallelism.context_parallel_", "context parallelism is off (degree 1)"},
    {"parallelism.expert_parallel_comm_backend", "costed as standard all-to-alls"},
    {"parallelism.pipeline_parallel_expert_parallel_overlap",
     "DualPipeV's EP overlap is ppsim's OVERLAP_F_B"},
    {"activation_checkpoint.", "checkpointing details (per-op policy, RNG state, checks)"},
    {"compile.backend", "torch.compile is not modelled"},
    {"quantize.", "float8 details (scaling recipe, filtered modules)"},
    {"float8.", "float8 details (scaling recipe, filtered modules)"},
};

// A TOML value, located, with the key it was written under.
struct Leaf {
  std::string key;
  const toml::node* node;
};

class Reader {
 public:
  Reader(const std::string& source, TorchtitanJob* job) : source_(source), job_(job) {}

  Status Collect(const toml::table& table, const std::string& prefix);
  Status CheckKeys();
  Status Map(int64_t world_gpus, const std::string& folder);

 private:
  Status Error(std::string_view key, std::string_view what) const;
  const toml::node* Find(std::string_view key) const;
  Status Int(std::string_view key, int64_t fallback, int64_t minimum, int64_t* out) const;
  Status Str(std::string_view key, std::string_view fallback, std::string* out) const;
  Status Bool(std::string_view key, bool* out) const;
  Status StrList(std::string_view key, std::vector<std::string>* out) const;
  void Set(std::string field, std::string value, std::string key) {
    job_->settings.push_back({std::move(field), std::move(value), std::move(key)});
  }
  void Note(std::string note) { job_->notes.push_back(std::move(note)); }

  Status MapModel(int32_t* layers);
  Status MapDegrees(int64_t world_gpus, int64_t* pp);
  Status MapFsdp(int64_t replicate, int64_t shard);
  Status MapBatch(int64_t pp, int64_t dp);
  Status MapPipeline(int64_t pp, int32_t layers, const std::string& folder);
  Status Split(int64_t stages, int32_t layers, int64_t first, int64_t last,
               std::vector<int64_t>* split) const;
  Status MapRecompute();
  Status MapPrecision(int64_t tp);
  Status MapOverlap(int64_t tp);

  std::string source_;
  TorchtitanJob* job_;
  std::vector<Leaf> leaves_;
  int64_t microbatches_ = 0;  // local_batch_size / microbatch size, for the pipeline's checks
};

Status Reader::Error(std::string_view key, std::string_view what) const {
  const toml::node* node = Find(key);
  std::string where = source_;
  if (node != nullptr) {
    where += ":" + std::to_string(node->source().begin.line) + ":" +
             std::to_string(node->source().begin.column);
  }
  return Status::InvalidInput(where + ": " + std::string(key) + ": " + std::string(what));
}

const toml::node* Reader::Find(std::string_view key) const {
  for (const Leaf& leaf : leaves_) {
    if (leaf.key == key) return leaf.node;
  }
  return nullptr;
}

Status Reader::Collect(const toml::table& table, const std::string& prefix) {
  for (const auto& [name, node] : table) {
    const std::string key = prefix + std::string(name.str());
    if (const toml::table* sub = node.as_table()) {
      RETURN_IF_ERROR(Collect(*sub, key + "."));
    } else if (const toml::array* array = node.as_array();
               array != nullptr && array->is_array_of_tables()) {
      leaves_.push_back({key, &node});  // refused as an unknown key below
    } else {
      leaves_.push_back({key, &node});
    }
  }
  return Status();
}

const Ignored* FindIgnored(std::string_view key) {
  for (const Ignored& ignored : kIgnored) {
    if (key.starts_with(ignored.prefix) &&
        (ignored.prefix.ends_with('.') || ignored.prefix.ends_with('_') ||
         key.size() == ignored.prefix.size())) {
      return &ignored;
    }
  }
  return nullptr;
}

bool IsApplied(std::string_view key) {
  const size_t dot = key.find('.');
  if (dot == std::string_view::npos) return false;
  const auto section = AppliedKeys().find(std::string(key.substr(0, dot)));
  if (section == AppliedKeys().end()) return false;
  const std::vector<std::string>& names = section->second;
  return std::find(names.begin(), names.end(), key.substr(dot + 1)) != names.end();
}

// Every key is applied (read by Map), ignored (noted here, grouped by why) or unknown (refused).
Status Reader::CheckKeys() {
  std::vector<std::pair<std::string_view, std::string>> groups;  // why -> keys
  for (const Leaf& leaf : leaves_) {
    if (IsApplied(leaf.key)) continue;
    const Ignored* ignored = FindIgnored(leaf.key);
    if (ignored == nullptr) {
      const size_t dot = leaf.key.find('.');
      const std::string section = dot == std::string::npos ? "" : leaf.key.substr(0, dot);
      std::vector<std::string> valid;
      const auto applied = AppliedKeys().find(section);
      if (applied != AppliedKeys().end()) {
        for (const std::string& name : applied->second) valid.push_back(section + "." + name);
      }
      for (const Ignored& i : kIgnored) {
        if (i.prefix.starts_with(section + ".")) valid.emplace_back(i.prefix);
      }
      if (valid.empty()) {  // an unknown section: list the sections
        for (const auto& [name, keys] : AppliedKeys()) valid.push_back(name);
        for (const Ignored& i : kIgnored) {
          const std::string name(i.prefix.substr(0, i.prefix.find('.')));
          if (std::find(valid.begin(), valid.end(), name) == valid.end()) valid.push_back(name);
        }
        return Error(leaf.key, UnknownName("torchtitan section", section, valid));
      }
      return Error(leaf.key, UnknownName("torchtitan key", leaf.key, valid));
    }
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& g) { return g.first == ignored->why; });
    if (group == groups.end()) {
      groups.push_back({ignored->why, leaf.key});
    } else {
      group->second += ", " + leaf.key;
    }
  }
  for (const auto& [why, keys] : groups) Note("ignored " + keys + ": " + std::string(why));
  return Status();
}

Status Reader::Int(std::string_view key, int64_t fallback, int64_t minimum, int64_t* out) const {
  const toml::node* node = Find(key);
  if (node == nullptr) {
    *out = fallback;
    return Status();
  }
  const std::optional<int64_t> value = node->value_exact<int64_t>();
  if (!value) {
    return Error(
        key, "a " +
                 std::string(toml::impl::node_type_friendly_names[static_cast<int>(node->type())]) +
                 "; expected a whole number, e.g. " + std::to_string(fallback));
  }
  if (*value < minimum || *value > (int64_t{1} << 30)) {
    return Error(key, std::to_string(*value) + " is out of range; valid: " +
                          std::to_string(minimum) + " to " + std::to_string(int64_t{1} << 30));
  }
  *out = *value;
  return Status();
}

Status Reader::Str(std::string_view key, std::string_view fallback, std::string* out) const {
  const toml::node* node = Find(key);
  if (node == nullptr) {
    *out = std::string(fallback);
    return Status();
  }
  const std::optional<std::string> value = node->value_exact<std::string>();
  if (!value) return Error(key, "expected a string; give e.g. \"" + std::string(fallback) + "\"");
  *out = *value;
  return Status();
}

Status Reader::Bool(std::string_view key, bool* out) const {
  const toml::node* node = Find(key);
  *out = false;
  if (node == nullptr) return Status();
  const std::optional<bool> value = node->value_exact<bool>();
  if (!value) return Error(key, "expected true or false");
  *out = *value;
  return Status();
}

Status Reader::StrList(std::string_view key, std::vector<std::string>* out) const {
  out->clear();
  const toml::node* node = Find(key);
  if (node == nullptr) return Status();
  const toml::array* array = node->as_array();
  if (array == nullptr) return Error(key, "expected a list of strings, e.g. [\"model\"]");
  for (const toml::node& item : *array) {
    const std::optional<std::string> value = item.value_exact<std::string>();
    if (!value) return Error(key, "expected a list of strings, e.g. [\"model\"]");
    out->push_back(*value);
  }
  return Status();
}

Status Reader::MapModel(int32_t* layers) {
  std::string name, flavor;
  RETURN_IF_ERROR(Str("model.name", "llama3", &name));
  RETURN_IF_ERROR(Str("model.flavor", "debugmodel", &flavor));
  std::vector<std::string> known;
  for (const TorchtitanFlavor& f : kFlavors) {
    if (f.name == name && f.flavor == flavor) {
      const TransformerSpec* preset = FindTransformerPreset(f.preset);
      if (preset == nullptr) return Status::Internal("preset " + std::string(f.preset));
      *layers = preset->layers;
      Set("model", std::string(f.preset), "model.name and model.flavor");
      return Status();
    }
    known.push_back(std::string(f.name) + " " + std::string(f.flavor));
  }
  return Error(Find("model.flavor") != nullptr ? "model.flavor" : "model.name",
               UnknownName("model name and flavor", name + " " + flavor, known));
}

// The mesh as torchtitan's ParallelDims builds it: dp_shard -1 takes the rest of the world, and
// the degrees multiply to the world size.
Status Reader::MapDegrees(int64_t world_gpus, int64_t* pp) {
  int64_t replicate = 0, shard = 0, cp = 0, tp = 0, ep = 0, etp = 0;
  RETURN_IF_ERROR(Int("parallelism.data_parallel_replicate_degree", 1, 1, &replicate));
  RETURN_IF_ERROR(Int("parallelism.data_parallel_shard_degree", -1, -1, &shard));
  RETURN_IF_ERROR(Int("parallelism.context_parallel_degree", 1, 1, &cp));
  RETURN_IF_ERROR(Int("parallelism.tensor_parallel_degree", 1, 1, &tp));
  RETURN_IF_ERROR(Int("parallelism.pipeline_parallel_degree", 1, 1, pp));
  RETURN_IF_ERROR(Int("parallelism.expert_parallel_degree", 1, 1, &ep));
  RETURN_IF_ERROR(Int("parallelism.expert_tensor_parallel_degree", 1, 1, &etp));
  const std::string shard_key = "parallelism.data_parallel_shard_degree";
  if (shard == 0) return Error(shard_key, "0; valid: -1 (the rest of the world) or 1 and more");
  const int64_t others = replicate * cp * tp * *pp;
  const std::string product = "data_parallel_replicate_degree " + std::to_string(replicate) +
                              " x context_parallel_degree " + std::to_string(cp) +
                              " x tensor_parallel_degree " + std::to_string(tp) +
                              " x pipeline_parallel_degree " + std::to_string(*pp);
  if (shard == -1) {
    if (world_gpus == 0) {
      return Error(shard_key,
                   "-1 takes the rest of the world size, which this platform leaves "
                   "open; give the degree, or a platform with a fixed GPU count");
    }
    if (world_gpus % others != 0) {
      return Error(shard_key, "-1 takes the rest of the world size, but " + product + " = " +
                                  std::to_string(others) + " does not divide the platform's " +
                                  std::to_string(world_gpus) + " GPUs");
    }
    shard = world_gpus / others;
  }
  if (world_gpus != 0 && others * shard != world_gpus) {
    return Error(shard_key, product + " x data_parallel_shard_degree " + std::to_string(shard) +
                                " = " + std::to_string(others * shard) +
                                " GPUs, but the platform has " + std::to_string(world_gpus) +
                                " (torchtitan requires the degrees to multiply to the world "
                                "size; change --platform/--nodes or the degrees)");
  }
  if (cp > 1) {
    return Error("parallelism.context_parallel_degree",
                 std::to_string(cp) +
                     ": torchtitan runs context parallelism under FSDP over the context-parallel "
                     "ranks; ppsim does not import it yet (give context_parallel_degree 1)");
  }
  if (ep > 1 && (etp != 1 || ep != tp)) {
    return Error("parallelism.expert_parallel_degree",
                 std::to_string(ep) + " with expert_tensor_parallel_degree " + std::to_string(etp) +
                     " and tensor_parallel_degree " + std::to_string(tp) +
                     ": without sharded data parallelism torchtitan's experts shard over the "
                     "tensor-parallel GPUs, so ppsim runs expert_parallel_degree = "
                     "tensor_parallel_degree with expert_tensor_parallel_degree = 1; FSDP of "
                     "the experts is issue 30's");
  }
  const std::string mesh = "parallelism.data_parallel_replicate_degree";
  if (shard > 1) {
    RETURN_IF_ERROR(MapFsdp(replicate, shard));
  } else {
    Set("dp", std::to_string(replicate), mesh);
    for (const char* key :
         {"parallelism.fsdp_reshard_after_forward", "training.mixed_precision_reduce"}) {
      if (Find(key) != nullptr) {
        Note(std::string("ignored ") + key + ": no FSDP (data_parallel_shard_degree 1)");
      }
    }
  }
  Set("tp", std::to_string(tp), "parallelism.tensor_parallel_degree");
  Set("pp", std::to_string(*pp), "parallelism.pipeline_parallel_degree");
  if (ep > 1) Set("ep", std::to_string(ep), "parallelism.expert_parallel_degree");
  if (tp > 1) {
    Set("sequence_parallel", "true", "parallelism.tensor_parallel_degree");
    Note(
        "assumed sequence parallelism with tensor_parallel_degree > 1: torchtitan's TP plan "
        "shards the norms along the sequence (SequenceParallel)");
  }
  return Status();
}

// torchtitan's FSDP2 (parallelize.py apply_fsdp): data_parallel_shard_degree S > 1 shards
// everything over S (ZeRO-3), replicated over data_parallel_replicate_degree R (HSDP): dp R x S;
// fsdp_reshard_after_forward "default" (on without a pipeline, off with one), "always", "never".
Status Reader::MapFsdp(int64_t replicate, int64_t shard) {
  const std::string key = "parallelism.data_parallel_shard_degree";
  Set("dp", std::to_string(replicate * shard),
      "parallelism.data_parallel_replicate_degree and " + key);
  Set("zero", "3", key);
  if (replicate > 1) Set("dp_shard", std::to_string(shard), key);
  const std::string policy_key = "parallelism.fsdp_reshard_after_forward";
  std::string policy;
  RETURN_IF_ERROR(Str(policy_key, "default", &policy));
  if (policy != "default" && policy != "always" && policy != "never") {
    return Error(policy_key, UnknownName("policy", policy, {"default", "always", "never"}));
  }
  if (policy != "default") {
    Set("reshard_after_forward", policy == "always" ? "on" : "off", policy_key);
  }
  const std::string reduce_key = "training.mixed_precision_reduce";
  std::string reduce;
  RETURN_IF_ERROR(Str(reduce_key, "float32", &reduce));
  if (reduce != "float32") {
    // bfloat16 would halve the reduce-scatters and the unsharded gradients in flight only (the
    // sharded gradients stay fp32, as the sharded parameters are): not modelled.
    return Error(reduce_key, "'" + reduce +
                                 "': FSDP's gradient reduction in another dtype than the fp32 "
                                 "gradients is not modelled; valid: float32 (the default)");
  }
  return Status();
}

// torchtitan's train.py and build_pipeline_schedule: the local batch is per data-parallel rank;
// a pipeline splits it into microbatches; without one it runs whole, once per accumulation step.
Status Reader::MapBatch(int64_t pp, int64_t dp) {
  const bool old = Find("training.batch_size") != nullptr;
  if (old && Find("training.local_batch_size") != nullptr) {
    return Error("training.batch_size",
                 "give local_batch_size (batch_size is its older name), "
                 "not both");
  }
  const std::string batch_key = old ? "training.batch_size" : "training.local_batch_size";
  int64_t local = 0, seq = 0, global = 0, microbatch = 0;
  RETURN_IF_ERROR(Int(batch_key, 8, 1, &local));
  RETURN_IF_ERROR(Int("training.seq_len", 2048, 1, &seq));
  RETURN_IF_ERROR(Int("training.global_batch_size", -1, -1, &global));
  const std::string mb_key = "parallelism.pipeline_parallel_microbatch_size";
  RETURN_IF_ERROR(Int(mb_key, 1, 1, &microbatch));
  Set("seq_len", std::to_string(seq), "training.seq_len");
  int64_t steps = 1;  // gradient accumulation
  if (global == 0) return Error("training.global_batch_size", "0; valid: -1 or a batch size");
  if (global > 0) {
    if (global % (local * dp) != 0) {
      return Error("training.global_batch_size",
                   std::to_string(global) + " is not a multiple of " + batch_key + " " +
                       std::to_string(local) + " x data-parallel degree " + std::to_string(dp));
    }
    steps = global / (local * dp);
  }
  if (pp == 1) {
    if (Find(mb_key) != nullptr) Note("ignored " + mb_key + ": no pipeline (degree 1)");
    Set("microbatch_size", std::to_string(local), batch_key);
    Set("microbatches", std::to_string(steps), "training.global_batch_size");
    microbatches_ = steps;
    return Status();
  }
  if (local % microbatch != 0) {
    return Error(mb_key, std::to_string(microbatch) + " does not divide " + batch_key + " " +
                             std::to_string(local) + " (torchtitan refuses it too)");
  }
  if (steps > 1) {
    return Error("training.global_batch_size",
                 std::to_string(steps) +
                     " gradient accumulation steps around a pipeline (a "
                     "pipeline flush each) are not modelled; give -1 (the local batch x data "
                     "parallelism)");
  }
  microbatches_ = local / microbatch;
  Set("microbatch_size", std::to_string(microbatch), mb_key);
  Set("microbatches", std::to_string(microbatches_), batch_key + " and " + mb_key);
  return Status();
}

Status Reader::Split(int64_t stages, int32_t layers, int64_t first, int64_t last,
                     std::vector<int64_t>* split) const {
  if (!TorchtitanLayerSplit(stages, layers, first, last, split)) {
    return Error("parallelism.pipeline_parallel_first_stage_less_layers",
                 std::to_string(stages) + " stages of " + std::to_string(layers) +
                     " layers + first_stage_less_layers " + std::to_string(first) +
                     " + last_stage_less_layers " + std::to_string(last) +
                     ": torchtitan refuses a stage without layers or an embedding or "
                     "output heavier than a stage; use fewer stages or smaller weights");
  }
  return Status();
}

Status Reader::MapPipeline(int64_t pp, int32_t layers, const std::string& folder) {
  std::string name, csv;
  const std::string schedule_key = "parallelism.pipeline_parallel_schedule";
  const std::string csv_key = "parallelism.pipeline_parallel_schedule_csv";
  const std::string lps_key = "parallelism.pipeline_parallel_layers_per_stage";
  RETURN_IF_ERROR(Str(schedule_key, "1F1B", &name));
  RETURN_IF_ERROR(Str(csv_key, "", &csv));
  if (Find("parallelism.module_fqns_per_model_part") != nullptr) {
    return Error("parallelism.module_fqns_per_model_part",
                 "not read; give each stage's layers with ppsim's --layers-per-stage");
  }
  if (pp == 1) {
    Set("schedule", "1F1B", "parallelism.pipeline_parallel_degree");
    for (const Leaf& leaf : leaves_) {
      if (leaf.key.starts_with("parallelism.pipeline_parallel_") &&
          leaf.key != "parallelism.pipeline_parallel_degree" &&
          leaf.key != "parallelism.pipeline_parallel_microbatch_size") {
        Note("ignored " + leaf.key + ": no pipeline (degree 1)");
      }
    }
    return Status();
  }
  // With a CSV the named schedule still decides the stages per rank and their placement (looped
  // or V), as torchtitan's pipeline_llm builds the stages before the CSV orders them.
  const auto* found = std::find_if(std::begin(kSchedules), std::end(kSchedules),
                                   [&](std::string_view s) { return EqualsIgnoringCase(s, name); });
  if (found == std::end(kSchedules)) {
    return Error(schedule_key,
                 UnknownName("schedule", name, {std::begin(kSchedules), std::end(kSchedules)}));
  }
  const bool single = found - std::begin(kSchedules) < 2;
  const bool v_shape = *found == "ZBVZeroBubble" || *found == "DualPipeV";
  int64_t per_rank = single ? 1 : 2, first = 0, last = 0, per_stage = 0;
  RETURN_IF_ERROR(Int("parallelism.pipeline_parallel_first_stage_less_layers", 1, 0, &first));
  RETURN_IF_ERROR(Int("parallelism.pipeline_parallel_last_stage_less_layers", 1, 0, &last));
  RETURN_IF_ERROR(Int(lps_key, 0, 1, &per_stage));
  if (per_stage > 0) {
    const int64_t stages = (layers + first + last + per_stage - 1) / per_stage;
    per_rank = stages / pp;
    if (stages % pp != 0 || (single && per_rank != 1) || (!single && per_rank < 2) ||
        (v_shape && per_rank != 2)) {
      return Error(lps_key, std::to_string(per_stage) + " makes " + std::to_string(stages) +
                                " stages on " + std::to_string(pp) + " ranks; " +
                                std::string(*found) + " needs " +
                                (single    ? "1"
                                 : v_shape ? "2"
                                           : "2 or more") +
                                " stages per rank (as torchtitan checks)");
    }
  }
  if (csv.empty()) {
    Set("schedule", std::string(*found), schedule_key);
    Set("stages_per_rank", std::to_string(per_rank), per_stage > 0 ? lps_key : schedule_key);
  } else {
    Set("schedule_file", csv[0] == '/' ? csv : folder + csv, csv_key);
    Note("assumed " + csv_key +
         " relative to the job file's folder (torchtitan: its working directory); its stages "
         "placed and split as " +
         std::string(*found) + "'s");
  }
  std::vector<int64_t> split;
  RETURN_IF_ERROR(Split(pp * per_rank, layers, first, last, &split));
  std::string list;
  for (int64_t n : split) list += (list.empty() ? "" : ",") + std::to_string(n);
  Set("layers_per_stage", list,
      "parallelism.pipeline_parallel_first_stage_less_layers and "
      "parallelism.pipeline_parallel_last_stage_less_layers");
  return Status();
}

Status Reader::MapRecompute() {
  std::string mode, option;
  const std::string option_key = "activation_checkpoint.selective_ac_option";
  RETURN_IF_ERROR(Str("activation_checkpoint.mode", "selective", &mode));
  RETURN_IF_ERROR(Str(option_key, "2", &option));
  const std::string key = "activation_checkpoint.mode";
  if (mode == "none" || mode == "full") {
    Set("recompute", mode, key);
    if (Find(option_key) != nullptr) Note("ignored " + option_key + ": mode is " + mode);
    return Status();
  }
  if (mode == "memory_budget") {
    return Error(key,
                 "memory_budget lets the compiler choose what to recompute; not modelled; "
                 "valid: none, selective (op, or 1 = every layer) or full");
  }
  if (mode != "selective") {
    return Error(key, UnknownName("mode", mode, {"none", "selective", "full", "memory_budget"}));
  }
  if (option == "op") {
    Set("recompute", "selective", key + " and " + option_key);
    Note(
        "assumed torchtitan's per-op selective checkpointing (saves matmul outputs, recomputes "
        "the cheap ops) costed as ppsim's selective recompute (the attention core recomputed, "
        "as Megatron-LM's)");
    return Status();
  }
  if (option == "1") {
    Set("recompute", "full", key + " and " + option_key);
    Note("assumed selective_ac_option 1 (every layer checkpointed whole) as full recompute");
    return Status();
  }
  return Error(option_key, Quoted(option) + (Find(option_key) == nullptr ? " (the default)" : "") +
                               " checkpoints every " + Printable(option) +
                               "th layer: partial recomputation is not modelled; valid: \"op\", "
                               "\"1\" (every layer), or mode \"full\" or \"none\"");
}

// Precision: model.converters and training's dtypes; the parameter bytes of DDP under autocast.
Status Reader::MapPrecision(int64_t tp) {
  std::vector<std::string> converters;
  RETURN_IF_ERROR(StrList("model.converters", &converters));
  bool linear = false, grouped = false;
  for (const std::string& c : converters) {
    if (c == "float8" || c == "quantize.linear.float8") {
      linear = true;
    } else if (c == "quantize.grouped_mm.float8") {
      grouped = true;
    } else if (c == "quantize.linear.mx" || c == "quantize.grouped_mm.mx") {
      return Error("model.converters", Quoted(c) +
                                           ": MX formats are not modelled; valid: "
                                           "\"float8\" (or quantize.linear.float8)");
    } else {
      return Error("model.converters",
                   UnknownName("converter", c,
                               {"float8", "quantize.linear.float8", "quantize.grouped_mm.float8",
                                "quantize.linear.mx", "quantize.grouped_mm.mx"}));
    }
  }
  if (grouped && !linear) {
    return Error("model.converters",
                 "float8 for the experts alone is not modelled; ppsim's "
                 "fp8 covers every matmul (add \"quantize.linear.float8\")");
  }
  Set("dtype", linear ? "fp8" : "bf16", "model.converters");
  if (linear) {
    Note(
        "assumed model.converters float8 (torchao's float8 training, tensorwise scaling by "
        "default) costed as ppsim's fp8");
  }
  std::string param, dtype;
  RETURN_IF_ERROR(Str("training.mixed_precision_param", "bfloat16", &param));
  RETURN_IF_ERROR(Str("training.dtype", "float32", &dtype));
  if (param != "bfloat16") {
    return Error("training.mixed_precision_param",
                 Quoted(param) + ": fp32 compute is not modelled; valid: \"bfloat16\"");
  }
  if (dtype != "float32" && dtype != "bfloat16") {
    return Error("training.dtype", UnknownName("dtype", dtype, {"float32", "bfloat16"}));
  }
  const bool fp32 = dtype == "float32";
  Set("bytes_per_param", fp32 ? "8,8" : "4,4", "training.dtype");
  Set("grad_dtype", fp32 ? "fp32" : "bf16", "training.dtype");
  Note(fp32 ? "assumed training.dtype float32 (DDP under autocast): fp32 parameters and "
              "gradients (8 bytes) and AdamW's two fp32 moments (8 bytes) per parameter"
            : "assumed training.dtype bfloat16: bf16 parameters, gradients and AdamW moments "
              "(4 + 4 bytes per parameter)");
  return MapOverlap(tp);
}

// Async TP needs the compiled model in torchtitan (maybe_enable_async_tp raises otherwise).
Status Reader::MapOverlap(int64_t tp) {
  bool async_tp = false, compile = false, offload = false, tolerant = false;
  std::vector<std::string> components = {"model", "loss"};
  RETURN_IF_ERROR(Bool("parallelism.enable_async_tensor_parallel", &async_tp));
  RETURN_IF_ERROR(Bool("compile.enable", &compile));
  RETURN_IF_ERROR(Bool("training.enable_cpu_offload", &offload));
  RETURN_IF_ERROR(Bool("fault_tolerance.enable", &tolerant));
  if (Find("compile.components") != nullptr)
    RETURN_IF_ERROR(StrList("compile.components", &components));
  const bool model_compiled =
      compile && std::find(components.begin(), components.end(), "model") != components.end();
  if (offload) {
    return Error("training.enable_cpu_offload", "true: CPU offload is not modelled; valid: false");
  }
  if (tolerant) {
    return Error("fault_tolerance.enable",
                 "true: torchft's replica groups are not modelled; "
                 "valid: false");
  }
  for (const char* key : {"experimental.custom_import", "experimental.custom_args_module"}) {
    std::string value;
    RETURN_IF_ERROR(Str(key, "", &value));
    if (!value.empty()) return Error(key, "a custom module changes the job; not read");
  }
  if (compile) {
    Note("assumed torch.compile (compile.enable) leaves the per-op costs as ppsim models them");
  }
  if (async_tp && tp > 1) {
    if (!model_compiled) {
      return Error("parallelism.enable_async_tensor_parallel",
                   "true needs compile.enable = true with \"model\" in compile.components "
                   "(torchtitan refuses it otherwise)");
    }
    Set("tp_comm_overlap", "true", "parallelism.enable_async_tensor_parallel");
    Note(
        "assumed async tensor parallelism (enable_async_tensor_parallel) as ppsim's TP "
        "communication overlap");
  } else if (async_tp) {
    Note("ignored parallelism.enable_async_tensor_parallel: tensor_parallel_degree 1");
  }
  return Status();
}

Status Reader::Map(int64_t world_gpus, const std::string& folder) {
  int32_t layers = 0;
  int64_t pp = 1;
  RETURN_IF_ERROR(MapModel(&layers));
  RETURN_IF_ERROR(MapDegrees(world_gpus, &pp));
  int64_t dp = 1;
  for (const TorchtitanSetting& s : job_->settings) {
    if (s.field == "dp") dp = std::stoll(s.value);
  }
  RETURN_IF_ERROR(MapBatch(pp, dp));
  RETURN_IF_ERROR(MapPipeline(pp, layers, folder));
  RETURN_IF_ERROR(MapRecompute());
  int64_t tp = 1;
  RETURN_IF_ERROR(Int("parallelism.tensor_parallel_degree", 1, 1, &tp));
  return MapPrecision(tp);
}

}  // namespace

std::span<const TorchtitanFlavor> TorchtitanFlavors() { return kFlavors; }

std::span<const std::string_view> TorchtitanSchedules() { return kSchedules; }

bool TorchtitanLayerSplit(int64_t stages, int32_t layers, int64_t first, int64_t last,
                          std::vector<int64_t>* split) {
  split->clear();
  const int64_t effective = layers + first + last;
  if (stages < 1 || stages > effective) return false;
  const int64_t each = effective / stages, extra = effective % stages;
  if (each == 0 || first > each || last > each) return false;
  int64_t next = 0;
  for (int64_t i = 0; i < stages; ++i) {
    int64_t take = each + (i < extra ? 1 : 0);
    if (i == 0) take -= first;
    if (i == stages - 1 && stages > 1) take -= last;
    take = std::min<int64_t>(take, layers - next);
    split->push_back(take);
    next += take;
  }
  return true;
}

Status ReadTorchtitanToml(std::string_view text, const std::string& source, int64_t world_gpus,
                          const std::string& folder, TorchtitanJob* job) {
  *job = TorchtitanJob();
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    const toml::source_position at = error.source().begin;
    return Status::InvalidInput(source + ":" + std::to_string(at.line) + ":" +
                                std::to_string(at.column) +
                                ": TOML syntax error: " + std::string(error.description()));
  }
  Reader reader(source, job);
  RETURN_IF_ERROR(reader.Collect(root, ""));
  RETURN_IF_ERROR(reader.CheckKeys());
  return reader.Map(world_gpus, folder);
}

Status ReadTorchtitanFile(const std::string& path, int64_t world_gpus, TorchtitanJob* job) {
  std::string text;
  RETURN_IF_ERROR(ReadFile(path, &text, kMaxTorchtitanFileBytes, "torchtitan job"));
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return ReadTorchtitanToml(text, path, world_gpus, folder, job);
}

}  // namespace ppsim
