// --emit torchtitan: the inverse of interop/torchtitan_toml.h's reading, key by key.
#include <algorithm>
#include <string>
#include <vector>

#include "base/names.h"
#include "experiments/framework_emit.h"
#include "interop/torch_schedule_csv.h"
#include "interop/torchtitan_toml.h"

namespace ppsim {
namespace {

// Two specs of one architecture: every shape field alike (names and notes aside).
bool SameShape(const TransformerSpec& a, const TransformerSpec& b) {
  auto head_dim = [](const TransformerSpec& m) {
    return m.head_dim > 0 ? m.head_dim : m.hidden / std::max(1, m.heads);
  };
  return a.layers == b.layers && a.hidden == b.hidden && a.ffn_hidden == b.ffn_hidden &&
         a.heads == b.heads && a.kv_heads == b.kv_heads && a.vocab == b.vocab &&
         a.tied_embeddings == b.tied_embeddings && a.swiglu == b.swiglu && a.rmsnorm == b.rmsnorm &&
         head_dim(a) == head_dim(b) && a.qkv_bias == b.qkv_bias && a.qk_norm == b.qk_norm &&
         a.mla == b.mla && a.q_lora_rank == b.q_lora_rank && a.kv_lora_rank == b.kv_lora_rank &&
         a.qk_nope_head_dim == b.qk_nope_head_dim && a.qk_rope_head_dim == b.qk_rope_head_dim &&
         a.v_head_dim == b.v_head_dim && a.experts == b.experts &&
         a.experts_per_token == b.experts_per_token && a.shared_experts == b.shared_experts &&
         a.expert_ffn_hidden == b.expert_ffn_hidden &&
         a.first_dense_layers == b.first_dense_layers && a.router_bias == b.router_bias;
}

std::string Quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

class Toml {
 public:
  void Section(std::string_view name) {
    text_ += (text_.empty() ? "[" : "\n[") + std::string(name) + "]\n";
  }
  void Key(std::string_view key, const std::string& value) {
    text_ += std::string(key) + " = " + value + "\n";
  }
  void Key(std::string_view key, int64_t value) { Key(key, std::to_string(value)); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// The torchtitan schedule that runs the run's order by name; else the one whose stage placement
// the order has (its CSV then orders the stages); "" when none places them so.
std::string NamedSchedule(const PreparedRun& run, bool* by_name) {
  const Schedule& s = run.schedule;
  const int32_t per_rank = s.num_stages / std::max(1, s.num_ranks);
  for (std::string_view name : TorchtitanSchedules()) {
    if (EqualsIgnoringCase(name, run.spec.schedule_name) && run.spec.schedule_file.empty()) {
      *by_name = true;
      return std::string(name);
    }
  }
  *by_name = false;
  if (s.pipelines.size() > 1) return "";  // DualPipe's two directions
  bool looped = true, v_shape = per_rank == 2;
  for (int32_t stage = 0; stage < s.num_stages; ++stage) {
    const int32_t rank = s.stage_to_rank[stage].value();
    looped = looped && rank == stage % s.num_ranks;
    const int32_t v = stage < s.num_ranks ? stage : 2 * s.num_ranks - 1 - stage;
    v_shape = v_shape && rank == v;
  }
  if (per_rank == 1 && looped) return "1F1B";
  if (looped) return "Interleaved1F1B";
  if (v_shape) return "ZBVZeroBubble";
  return "";
}

// The first/last-stage weights that make torchtitan's split the run's; false when none does.
bool SplitWeights(const PreparedRun& run, int64_t* first, int64_t* last) {
  const int32_t layers = run.transformer.layers;
  const int64_t stages = run.schedule.num_stages;
  std::vector<int64_t> want(run.layers_per_stage.begin(), run.layers_per_stage.end());
  std::vector<int64_t> split;
  // torchtitan's default (1, 1) first, then the rest in order.
  if (TorchtitanLayerSplit(stages, layers, 1, 1, &split) && split == want) {
    *first = *last = 1;
    return true;
  }
  for (*first = 0; *first <= layers; ++*first) {
    for (*last = 0; *last <= layers; ++*last) {
      if (TorchtitanLayerSplit(stages, layers, *first, *last, &split) && split == want) return true;
    }
  }
  return false;
}

Status ModelSection(const PreparedRun& run, Toml* toml) {
  for (const TorchtitanFlavor& f : TorchtitanFlavors()) {
    const TransformerSpec* preset = FindTransformerPreset(f.preset);
    if (preset != nullptr && SameShape(*preset, run.transformer)) {
      toml->Section("model");
      toml->Key("name", Quote(f.name));
      toml->Key("flavor", Quote(f.flavor));
      if (run.setup.dtype == Dtype::kFp8) toml->Key("converters", "[\"float8\"]");
      return Status();
    }
  }
  std::string known;
  for (const TorchtitanFlavor& f : TorchtitanFlavors()) {
    known += (known.empty() ? "" : ", ") + std::string(f.name) + " " + std::string(f.flavor);
  }
  return run.spec.where->Invalid("emit", "torchtitan has no model flavor of " + run.model +
                                             "'s shape; it has " + known +
                                             " (as ppsim maps them to presets)");
}

// The FSDP shard degree torchtitan runs a setup with: S with --zero 3, else 1 (no FSDP).
int32_t FsdpShards(const TrainingSetup& setup) {
  if (setup.zero_stage != 3) return 1;
  return setup.dp_shard > 0 ? setup.dp_shard : setup.layout.dp;
}

void Degrees(const PreparedRun& run, Toml* toml, FrameworkLaunch* launch) {
  const ParallelLayout& l = run.setup.layout;
  // FSDP (--zero 3 over S > 1): replicate dp / S, shard S (torchtitan's HSDP when both > 1).
  const int32_t shard = FsdpShards(run.setup);
  toml->Key("data_parallel_replicate_degree", l.dp / shard);
  toml->Key("data_parallel_shard_degree", shard);
  if (shard > 1 && run.setup.reshard_after_forward != TrainingSetup::Reshard::kDefault) {
    toml->Key(
        "fsdp_reshard_after_forward",
        Quote(run.setup.reshard_after_forward == TrainingSetup::Reshard::kOn ? "always" : "never"));
  }
  toml->Key("tensor_parallel_degree", l.tp);
  toml->Key("pipeline_parallel_degree", l.pp);
  if (l.cp > 1) {
    launch->notes.push_back(
        "torchtitan runs context parallelism under FSDP only (issue 30): --cp " +
        std::to_string(l.cp) + " kept as a ppsim flag");
  }
  if (l.ep > 1 && l.ep == l.tp) {
    toml->Key("expert_parallel_degree", l.ep);
  } else if (l.ep > 1) {
    launch->ppsim_fields.set_ep(l.ep);
    launch->notes.push_back(
        "without FSDP torchtitan shards experts over the tensor-parallel "
        "GPUs (expert_parallel_degree = tensor_parallel_degree): --ep kept as "
        "a ppsim flag");
  }
  if (l.tp > 1 && !run.setup.sequence_parallel) {
    launch->notes.push_back(
        "torchtitan's TP plan is sequence-parallel; ppsim simulated "
        "tensor parallelism without it");
  }
  if (run.spec.tp_comm_overlap && l.tp > 1) toml->Key("enable_async_tensor_parallel", "true");
  const int64_t world = run.platform.num_nodes * int64_t{run.platform.gpus_per_node};
  if (world != l.Gpus()) {
    launch->notes.push_back("torchtitan's degrees fill the world: launch on " +
                            std::to_string(l.Gpus()) + " GPUs (ppsim's platform has " +
                            std::to_string(world) + ")");
  }
}

void PipelineKeys(const PreparedRun& run, const std::string& csv_name, Toml* toml,
                  FrameworkLaunch* launch) {
  if (run.setup.layout.pp == 1) {
    if (!EqualsIgnoringCase(run.spec.schedule_name, "1F1B")) {
      launch->ppsim_fields.set_schedule(run.spec.schedule_name);
    }
    return;
  }
  bool by_name = false;
  const std::string name = NamedSchedule(run, &by_name);
  toml->Key("pipeline_parallel_microbatch_size", run.setup.microbatch_size);
  if (name.empty()) {
    launch->ppsim_fields.set_schedule(run.spec.schedule_name);
    // DualPipe's two model copies are split alike: the first copy's stages.
    std::string list;
    for (int32_t i = 0; i < run.setup.layout.pp; ++i) {
      list += (list.empty() ? "" : ",") + std::to_string(run.layers_per_stage[i]);
    }
    launch->ppsim_fields.set_layers_per_stage(list);
    if (run.spec.stages_per_rank > 0)
      launch->ppsim_fields.set_stages_per_rank(run.spec.stages_per_rank);
    launch->notes.push_back("torch.distributed.pipelining places stages looped or as a V; " +
                            run.spec.schedule_name +
                            " needs deepseek-ai/DualPipe: kept as a ppsim flag");
    return;
  }
  toml->Key("pipeline_parallel_schedule", Quote(name));
  if (!by_name) {
    launch->schedule_csv = FormatScheduleTorchCsv(run.schedule);
    launch->schedule_csv_name = csv_name;
    toml->Key("pipeline_parallel_schedule_csv", Quote(csv_name));
    launch->notes.push_back("the order of " + run.label + " as torch's schedule CSV (" + csv_name +
                            "), run by torch's _PipelineScheduleRuntime with " + name +
                            "'s stage placement");
  }
  const int32_t per_rank = run.schedule.num_stages / run.schedule.num_ranks;
  const int32_t named_per_rank = name == "1F1B" || name == "GPipe" ? 1 : 2;
  int64_t first = 1, last = 1;
  bool split = SplitWeights(run, &first, &last);
  if (split && per_rank != named_per_rank) {
    // torchtitan makes ceil(weighted layers / layers_per_stage) stages.
    const int64_t weighted = run.transformer.layers + first + last;
    const int64_t stages = run.schedule.num_stages;
    const int64_t per_stage = (weighted + stages - 1) / stages;
    split = (weighted + per_stage - 1) / per_stage == stages;
    if (split) toml->Key("pipeline_parallel_layers_per_stage", per_stage);
  }
  if (!split) {
    std::string list;
    for (int32_t n : run.layers_per_stage) list += (list.empty() ? "" : ",") + std::to_string(n);
    launch->ppsim_fields.set_layers_per_stage(list);
    if (by_name) launch->ppsim_fields.set_stages_per_rank(per_rank);
    launch->notes.push_back(
        "torchtitan's layers_per_stage and first/last-stage weights do not "
        "give the split " +
        list + ": kept as ppsim flags (torchtitan: module_fqns_per_model_part)");
    return;
  }
  if (first != 1) toml->Key("pipeline_parallel_first_stage_less_layers", first);
  if (last != 1) toml->Key("pipeline_parallel_last_stage_less_layers", last);
}

void TrainingKeys(const PreparedRun& run, Toml* toml, FrameworkLaunch* launch) {
  const TrainingSetup& s = run.setup;
  toml->Section("training");
  const int64_t microbatches = run.schedule.num_microbatches;
  if (s.layout.pp > 1) {
    toml->Key("local_batch_size", microbatches * s.microbatch_size);
  } else {
    toml->Key("local_batch_size", s.microbatch_size);
    if (microbatches > 1) {
      toml->Key("global_batch_size", microbatches * s.microbatch_size * s.layout.dp);
    }
  }
  toml->Key("seq_len", run.seq_len);
  const ParamBytes bytes = RecipeBytes(s);
  const bool fp32 = bytes.replicated == 8 && bytes.sharded == 8 && s.fp32_grads;
  const bool bf16 = bytes.replicated == 4 && bytes.sharded == 4 && !s.fp32_grads;
  toml->Key("mixed_precision_param", Quote("bfloat16"));
  toml->Key("dtype", Quote(bf16 ? "bfloat16" : "float32"));
  if (!fp32 && !bf16) {
    launch->ppsim_fields.set_bytes_per_param(std::to_string(bytes.replicated) + "," +
                                             std::to_string(bytes.sharded));
    launch->ppsim_fields.set_grad_dtype(s.fp32_grads ? "fp32" : "bf16");
    launch->notes.push_back(
        "torchtitan keeps fp32 parameters, gradients and moments (8 + 8 bytes per parameter) or "
        "all in bf16 (4 + 4); ppsim's bytes per parameter kept as ppsim flags");
  }
  if (s.dtype == Dtype::kFp16) {
    launch->ppsim_fields.set_dtype("fp16");
    launch->notes.push_back(
        "torchtitan computes in bf16 (mixed_precision_param); --dtype fp16 "
        "kept as a ppsim flag");
  }
  if (s.zero_stage > 0 && FsdpShards(s) == 1) {
    launch->ppsim_fields.set_zero(s.zero_stage);
    launch->notes.push_back(
        "torchtitan shards with FSDP (ZeRO-3, data_parallel_shard_degree > 1) or not at all: "
        "--zero " +
        std::to_string(s.zero_stage) + " kept as a ppsim flag");
    if (s.dp_shard > 0) launch->ppsim_fields.set_dp_shard(s.dp_shard);
    if (s.reshard_after_forward != TrainingSetup::Reshard::kDefault) {
      launch->ppsim_fields.set_reshard_after_forward(
          s.reshard_after_forward == TrainingSetup::Reshard::kOn ? "on" : "off");
    }
  }
  toml->Section("activation_checkpoint");
  if (s.recompute == Recompute::kSelective) {
    toml->Key("mode", Quote("selective"));
    toml->Key("selective_ac_option", Quote("op"));
  } else {
    toml->Key("mode", Quote(s.recompute == Recompute::kFull ? "full" : "none"));
  }
  if (!s.flash_attention) {
    launch->ppsim_fields.set_flash_attention("off");
    launch->notes.push_back(
        "torchtitan uses SDPA's fused attention; --flash-attention off kept "
        "as a ppsim flag");
  }
}

}  // namespace

Status EmitTorchtitan(const PreparedRun& run, const std::string& schedule_csv_name,
                      FrameworkLaunch* launch) {
  Toml toml;
  RETURN_IF_ERROR(ModelSection(run, &toml));
  TrainingKeys(run, &toml, launch);
  toml.Section("parallelism");
  Degrees(run, &toml, launch);
  PipelineKeys(run, schedule_csv_name, &toml, launch);
  if (run.spec.tp_comm_overlap && run.setup.layout.tp > 1) {
    toml.Section("compile");
    toml.Key("enable", "true");
    toml.Key("components", "[\"model\", \"loss\"]");
  }
  launch->text = "# torchtitan job file written by ppsim --emit torchtitan\n" + toml.text();
  return Status();
}

}  // namespace ppsim
