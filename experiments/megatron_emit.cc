// --emit megatron: the inverse of interop/megatron_args.h's reading, argument by argument.
#include <algorithm>
#include <string>
#include <vector>

#include "base/names.h"
#include "experiments/framework_emit.h"
#include "models/offload.h"
#include "sim/task_graph.h"

namespace ppsim {
namespace {

class Arguments {
 public:
  void Add(std::string flag) { lines_.push_back(std::move(flag)); }
  void Add(std::string flag, const std::string& value) { lines_.push_back(flag + " " + value); }
  void Add(std::string flag, int64_t value) { Add(std::move(flag), std::to_string(value)); }
  std::string Text() const {
    std::string text;
    for (size_t i = 0; i < lines_.size(); ++i) {
      text += lines_[i] + (i + 1 < lines_.size() ? " \\\n" : "\n");
    }
    return text;
  }

 private:
  std::vector<std::string> lines_;
};

// The largest of 128, 64, ..., 1 that Megatron's padding (to a multiple of it x tp) leaves
// `vocab` unpadded with; 0 when none does (tp does not divide the vocabulary).
int64_t UnpaddedDivisor(int64_t vocab, int64_t tp) {
  for (int64_t d = 128; d >= 1; d /= 2) {
    if (vocab % (d * tp) == 0) return d;
  }
  return 0;
}

void ModelArgs(const PreparedRun& run, Arguments* args, FrameworkLaunch* launch) {
  const TransformerSpec& m = run.transformer;
  const int64_t tp = run.setup.layout.tp;
  args->Add("--num-layers", m.layers);
  args->Add("--hidden-size", m.hidden);
  args->Add("--ffn-hidden-size", m.ffn_hidden);
  args->Add("--num-attention-heads", m.heads);
  if (m.mla) {
    args->Add("--multi-latent-attention");
    if (m.q_lora_rank > 0) args->Add("--q-lora-rank", m.q_lora_rank);
    args->Add("--kv-lora-rank", m.kv_lora_rank);
    args->Add("--qk-head-dim", m.qk_nope_head_dim);
    args->Add("--qk-pos-emb-head-dim", m.qk_rope_head_dim);
    args->Add("--v-head-dim", m.v_head_dim);
  } else if (m.kv_heads != m.heads) {
    args->Add("--group-query-attention");
    args->Add("--num-query-groups", m.kv_heads);
  }
  if (m.head_dim > 0 && !m.mla && (m.hidden % m.heads != 0 || m.head_dim != m.hidden / m.heads)) {
    args->Add("--kv-channels", m.head_dim);
  }
  if (m.qkv_bias) args->Add("--add-qkv-bias");
  if (m.qk_norm) args->Add("--qk-layernorm");
  args->Add("--seq-length", run.seq_len);
  args->Add("--max-position-embeddings", m.seq_len);
  if (m.swiglu) {
    args->Add("--swiglu");
    args->Add("--disable-bias-linear");
    args->Add("--position-embedding-type", std::string("rope"));
  }
  args->Add("--normalization", std::string(m.rmsnorm ? "RMSNorm" : "LayerNorm"));
  if (!m.tied_embeddings) args->Add("--untie-embeddings-and-output-weights");
  args->Add("--vocab-size", m.vocab);
  const int64_t divisor = UnpaddedDivisor(m.vocab, tp);
  args->Add("--make-vocab-size-divisible-by", std::max<int64_t>(divisor, 1));
  if (divisor == 0) {
    launch->notes.push_back("the vocabulary of " + std::to_string(m.vocab) +
                            " does not divide by tensor-parallel size " + std::to_string(tp) +
                            ": Megatron-LM pads it to " +
                            std::to_string((m.vocab + tp - 1) / tp * tp) +
                            " (ppsim simulated it unpadded)");
  }
  if (m.moe()) {
    args->Add("--num-experts", m.experts);
    args->Add("--moe-router-topk", m.experts_per_token);
    args->Add("--moe-ffn-hidden-size", m.expert_ffn_hidden);
    if (m.shared_experts > 0) {
      args->Add("--moe-shared-expert-intermediate-size", m.shared_experts * m.expert_ffn_hidden);
    }
    if (m.first_dense_layers > 0) {
      args->Add("--moe-layer-freq", "'([0]*" + std::to_string(m.first_dense_layers) + "+[1]*" +
                                        std::to_string(m.MoeLayers()) + ")'");
    }
    if (m.router_bias) args->Add("--moe-router-enable-expert-bias");
    args->Add("--expert-tensor-parallel-size", 1);
    args->Add("--moe-token-dispatcher-type", std::string("alltoall"));
    args->Add("--moe-grouped-gemm");
  }
  if (m.mtp_layers > 0) args->Add("--mtp-num-layers", m.mtp_layers);
}

// Megatron's layout string of `layers` (per virtual stage, in order) with `mtp` MTP layers before
// the loss: "Et*2|t*3|t*2mL".
std::string Layout(const std::vector<int32_t>& layers, int32_t mtp) {
  std::string text;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i > 0) text += "|";
    if (i == 0) text += "E";
    if (layers[i] == 1) text += "t";
    if (layers[i] > 1) text += "t*" + std::to_string(layers[i]);
    if (i + 1 == layers.size()) text += std::string(mtp, 'm') + "L";
  }
  return text;
}

// Whether the run's split over `stages` is no split Megatron makes by itself (an even split, with
// the embedding and loss accounting flags): a layout must give it.
bool NeedsLayout(const PreparedRun& run, int32_t stages) {
  const LayerSplit& split = run.spec.layer_split;
  const int32_t slots =
      run.transformer.layers + (split.embedding_as_layer ? 1 : 0) + (split.loss_as_layer ? 1 : 0);
  return !split.layers_per_stage.empty() || slots % stages != 0;
}

// The layer split: Megatron's even split (with the embedding and loss accounting flags), or a
// layout of every stage's layers.
void Split(const PreparedRun& run, int32_t stages, Arguments* args) {
  const LayerSplit& split = run.spec.layer_split;
  if (NeedsLayout(run, stages)) {
    args->Add("--pipeline-model-parallel-layout",
              "'" + Layout(run.layers_per_stage, run.transformer.mtp_layers) + "'");
    return;
  }
  if (split.embedding_as_layer) args->Add("--account-for-embedding-in-pipeline-split");
  if (split.loss_as_layer) args->Add("--account-for-loss-in-pipeline-split");
}

// The schedule Megatron-LM runs: 1F1B without virtual stages, Megatron-Interleaved with them;
// with pipeline size 1 its loop without pipelining. Others stay ppsim flags.
void ScheduleArgs(const PreparedRun& run, Arguments* args, FrameworkLaunch* launch) {
  const int32_t pp = run.setup.layout.pp;
  const int32_t per_rank = run.schedule.num_stages / std::max(1, run.schedule.num_ranks);
  const std::string& name = run.spec.schedule_name;
  const bool interleaved = EqualsIgnoringCase(name, "Megatron-Interleaved");
  const bool megatron =
      pp == 1 ? EqualsIgnoringCase(name, "1F1B") : EqualsIgnoringCase(name, "1F1B") || interleaved;
  // The virtual stages: a layout places them itself (Megatron refuses both); otherwise the flag,
  // which for a schedule Megatron does not run gives the split of its stages.
  const bool one_pipeline = run.schedule.pipelines.size() <= 1;
  if (per_rank > 1 && one_pipeline && (interleaved || !megatron) &&
      !NeedsLayout(run, run.schedule.num_stages)) {
    args->Add("--num-virtual-stages-per-pipeline-rank", per_rank);
  }
  if (interleaved && per_rank > 1 && run.spec.microbatch_group_size > 0) {
    args->Add("--microbatch-group-size-per-virtual-pipeline-stage", run.spec.microbatch_group_size);
  }
  if (pp > 1 && run.schedule.pipelines.size() <= 1) {
    Split(run, run.schedule.num_stages, args);
  } else if (pp > 1) {
    // DualPipe's two model copies, split alike: Megatron's layout of the first copy's stages.
    const std::vector<int32_t> first(run.layers_per_stage.begin(),
                                     run.layers_per_stage.begin() + pp);
    args->Add("--pipeline-model-parallel-layout",
              "'" + Layout(first, run.transformer.mtp_layers) + "'");
  }
  if (run.spec.p2p_mode == P2pMode::kMegatronNoOverlap) {
    args->Add("--no-overlap-p2p-communication");
  } else if (run.spec.p2p_mode != P2pMode::kMegatron) {
    launch->ppsim_fields.set_p2p_mode(std::string(P2pModeName(run.spec.p2p_mode)));
    if (megatron && pp > 1) {
      launch->notes.push_back("Megatron-LM issues its own p2p calls; ppsim simulated --p2p-mode " +
                              std::string(P2pModeName(run.spec.p2p_mode)));
    }
  }
  if (megatron) return;
  const std::string label = run.spec.schedule_file.empty() ? name : run.spec.schedule_file;
  if (!run.spec.schedule_file.empty()) {
    launch->ppsim_fields.set_schedule_file(run.spec.schedule_file);
  } else {
    launch->ppsim_fields.set_schedule(name);
    if (run.spec.stages_per_rank > 0) launch->ppsim_fields.set_stages_per_rank(per_rank);
    if (run.spec.microbatch_group_size > 0) {
      launch->ppsim_fields.set_microbatch_group_size(run.spec.microbatch_group_size);
    }
  }
  std::string runtime = "torch.distributed.pipelining (--emit torchtitan)";
  if (EqualsIgnoringCase(name, "DualPipe")) runtime = "deepseek-ai/DualPipe";
  if (name.starts_with("ZB-") || EqualsIgnoringCase(name, "V-Half") ||
      EqualsIgnoringCase(name, "V-Min")) {
    runtime = "sail-sg/zero-bubble-pipeline-parallelism (a Megatron-LM fork) or " + runtime;
  }
  launch->notes.push_back("Megatron-LM does not run " + label + " (it runs 1F1B and " +
                          "Megatron-Interleaved); " + runtime + " does: kept as a ppsim flag");
}

void ParallelArgs(const PreparedRun& run, Arguments* args, FrameworkLaunch* launch) {
  const ParallelLayout& l = run.setup.layout;
  args->Add("--tensor-model-parallel-size", l.tp);
  args->Add("--pipeline-model-parallel-size", l.pp);
  if (l.cp > 1) args->Add("--context-parallel-size", l.cp);
  if (l.cp > 1 && run.setup.cp_comm_type != CpCommType::kP2p) {
    args->Add("--cp-comm-type", std::string(CpCommTypeName(run.setup.cp_comm_type)));
  }
  if (l.cp > 1 && run.setup.cp_comm_type == CpCommType::kA2aP2p) {
    args->Add(
        "--hierarchical-context-parallel-sizes",
        std::to_string(run.setup.cp_a2a_size) + " " + std::to_string(l.cp / run.setup.cp_a2a_size));
  }
  if (l.ep > 1) args->Add("--expert-model-parallel-size", l.ep);
  // Only with Megatron's schedules and ep > 1 (experiments/request.cc ResolveMoeOverlap).
  if (run.spec.moe_a2a_overlap) args->Add("--overlap-moe-expert-parallel-comm");
  if (run.spec.delay_wgrad) args->Add("--delay-wgrad-compute");
  if (run.setup.sequence_parallel) args->Add("--sequence-parallel");
  if (run.spec.tp_comm_overlap) {
    if (run.setup.sequence_parallel && l.tp > 1) {
      args->Add("--tp-comm-overlap");
    } else {
      launch->ppsim_fields.set_tp_comm_overlap(true);
      launch->notes.push_back(
          "Megatron-LM's --tp-comm-overlap needs --sequence-parallel with TP 2 or more: kept as "
          "a ppsim flag");
    }
  }
  if (run.setup.zero_stage == 1) args->Add("--use-distributed-optimizer");
  if (run.setup.zero_stage >= 2) {
    // Megatron-FSDP's strategies (interop/megatron_args.cc); HSDP and the reshard policy are
    // FSDP2's (torchtitan's) and stay ppsim flags.
    args->Add("--use-megatron-fsdp");
    args->Add("--data-parallel-sharding-strategy",
              run.setup.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    if (run.setup.dp_shard > 0) launch->ppsim_fields.set_dp_shard(run.setup.dp_shard);
    if (run.setup.reshard_after_forward != TrainingSetup::Reshard::kDefault) {
      launch->ppsim_fields.set_reshard_after_forward(
          run.setup.reshard_after_forward == TrainingSetup::Reshard::kOn ? "on" : "off");
    }
  }
  const int64_t world = run.platform.num_nodes * int64_t{run.platform.gpus_per_node};
  if (world != l.Gpus()) {
    launch->ppsim_fields.set_dp(l.dp);
    launch->notes.push_back(
        "Megatron-LM takes the data-parallel size from the world size: launch "
        "on " +
        std::to_string(l.Gpus()) + " GPUs for dp " + std::to_string(l.dp));
  }
}

void TrainingArgs(const PreparedRun& run, Arguments* args, FrameworkLaunch* launch) {
  const TrainingSetup& s = run.setup;
  args->Add("--micro-batch-size", s.microbatch_size);
  args->Add("--global-batch-size",
            int64_t{run.schedule.num_microbatches} * s.microbatch_size * s.layout.dp);
  args->Add(s.dtype == Dtype::kFp16 ? "--fp16" : "--bf16");
  if (IsFp8(s.dtype)) {
    args->Add("--fp8-format", std::string("hybrid"));
    args->Add("--fp8-recipe", std::string(s.dtype == Dtype::kMxfp8 ? "mxfp8" : "delayed"));
  }
  if (!s.fp32_grads) args->Add("--grad-reduce-in-bf16");
  if (s.recompute == Recompute::kSelective) {
    args->Add("--recompute-granularity", std::string("selective"));
    if (s.recompute_modules != 0) {
      // Megatron's list is space-separated (nargs='*').
      std::string modules = RecomputeModulesName(s.recompute_modules);
      std::replace(modules.begin(), modules.end(), ',', ' ');
      args->Add("--recompute-modules", modules);
    }
  } else if (s.recompute == Recompute::kFull) {
    args->Add("--recompute-granularity", std::string("full"));
    const bool all = s.recompute_method == RecomputeMethod::kAll;
    args->Add("--recompute-method",
              std::string(all ? "uniform" : RecomputeMethodName(s.recompute_method)));
    args->Add("--recompute-num-layers", all ? 1 : s.recompute_num_layers);
  }
  if (!s.flash_attention) args->Add("--attention-backend", std::string("unfused"));
  if (s.offload_modules != 0) {
    args->Add("--fine-grained-activation-offloading");
    std::string modules = OffloadModulesName(s.offload_modules);  // space-separated (nargs='+')
    std::replace(modules.begin(), modules.end(), ',', ' ');
    args->Add("--offload-modules", modules);
  }
  const int64_t bucket = run.spec.grad_bucket_bytes;
  const int64_t per_param = s.fp32_grads ? 4 : 2;
  if (bucket > 0 && bucket % per_param == 0) {
    args->Add("--overlap-grad-reduce");
    args->Add("--ddp-bucket-size", bucket / per_param);
  } else if (bucket > 0) {
    launch->ppsim_fields.set_grad_bucket(std::to_string(bucket));
    launch->notes.push_back("gradient buckets of " + std::to_string(bucket) +
                            " bytes are no whole number of parameters: kept as a ppsim flag");
  }
}

}  // namespace

Status EmitMegatron(const PreparedRun& run, FrameworkLaunch* launch) {
  Arguments args;
  ModelArgs(run, &args, launch);
  ParallelArgs(run, &args, launch);
  ScheduleArgs(run, &args, launch);
  TrainingArgs(run, &args, launch);
  launch->text = args.Text();
  return Status();
}

}  // namespace ppsim
