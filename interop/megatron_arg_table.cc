// The one table of Megatron-LM arguments (interop/megatron_args.h): how many values each takes and
// what ppsim does with it. README's `--megatron` mapping table and `ppsim run`'s hint for a
// Megatron flag given as a ppsim flag both come from it. Arities are argparse's in
// megatron/training/arguments.py (and the config dataclasses it builds flags from) at d98e8a64.
#include "interop/megatron_args.h"

namespace ppsim {
namespace {

using A = MegatronArity;
using U = MegatronUse;

constexpr std::string_view kData = "data and tokenizer files";
constexpr std::string_view kLog = "logging, profiling and timing";
constexpr std::string_view kCkpt = "checkpointing";
constexpr std::string_view kOptim = "learning rate and optimizer hyper-parameters";
constexpr std::string_view kInit = "initialisation and numerics";
constexpr std::string_view kEval = "evaluation and run length";
constexpr std::string_view kLaunch = "process and launch settings";

constexpr MegatronArgument kTable[] = {
    // The model's shape.
    {"--num-layers", A::kValue, U::kApplied, "model: layers", ""},
    {"--hidden-size", A::kValue, U::kApplied, "model: hidden", ""},
    {"--ffn-hidden-size", A::kValue, U::kApplied,
     "model: ffn_hidden (default 4h; SwiGLU int(8h/3/64) x 64)", ""},
    {"--num-attention-heads", A::kValue, U::kApplied, "model: heads", ""},
    {"--group-query-attention", A::kSwitch, U::kApplied, "model: kv_heads = --num-query-groups",
     ""},
    {"--num-query-groups", A::kValue, U::kApplied,
     "model: kv_heads (with --group-query-attention; default 1)", ""},
    {"--kv-channels", A::kValue, U::kApplied, "model: head_dim (default h / heads)", ""},
    {"--seq-length", A::kValue, U::kApplied, "--seq-len", ""},
    {"--max-position-embeddings", A::kValue, U::kApplied, "model: seq_len (learned positions)", ""},
    {"--swiglu", A::kSwitch, U::kApplied, "model: mlp SWIGLU (else GELU)", ""},
    {"--untie-embeddings-and-output-weights", A::kSwitch, U::kApplied,
     "model: tied_embeddings false", ""},
    {"--normalization", A::kValue, U::kApplied, "model: norm (LayerNorm, RMSNorm)", ""},
    {"--position-embedding-type", A::kValue, U::kApplied,
     "checked: learned_absolute (GELU) or rope", ""},
    {"--no-position-embedding", A::kSwitch, U::kApplied, "checked: with rope only, as Megatron",
     ""},
    {"--vocab-size", A::kValue, U::kApplied, "model: vocab, padded", ""},
    {"--make-vocab-size-divisible-by", A::kValue, U::kApplied, "model: vocab padded to this x TP",
     ""},
    {"--tokenizer-type", A::kValue, U::kApplied,
     "model: vocab (GPT2BPETokenizer 50,257; others need --vocab-size)", ""},
    {"--disable-bias-linear", A::kSwitch, U::kApplied, "checked: the SwiGLU layer has no biases",
     ""},
    {"--add-qkv-bias", A::kSwitch, U::kApplied, "model: qkv_bias (SwiGLU)", ""},
    {"--qk-layernorm", A::kSwitch, U::kApplied, "model: qk_norm (per-head query and key norms)",
     ""},
    {"--attention-backend", A::kValue, U::kApplied, "--flash-attention (unfused, local: off)", ""},
    {"--use-flash-attn", A::kSwitch, U::kAssumed, "", "flash attention (ppsim's default)"},
    // The batch.
    {"--micro-batch-size", A::kValue, U::kApplied, "--microbatch-size", ""},
    {"--global-batch-size", A::kValue, U::kApplied, "--global-batch (default mbs x dp)", ""},
    {"--rampup-batch-size", A::kList, U::kAssumed, "",
     "a batch-size ramp; the steady state at --global-batch-size is simulated"},
    {"--step-batch-size-schedule", A::kValue, U::kAssumed, "",
     "a batch-size schedule; the steady state at --global-batch-size is simulated"},
    // Parallelism.
    {"--tensor-model-parallel-size", A::kValue, U::kApplied, "--tp", ""},
    {"--pipeline-model-parallel-size", A::kValue, U::kApplied, "--pp", ""},
    {"--num-layers-per-virtual-pipeline-stage", A::kValue, U::kApplied,
     "--stages-per-rank (layers / (pp x N))", ""},
    {"--num-virtual-stages-per-pipeline-rank", A::kValue, U::kApplied, "--stages-per-rank", ""},
    {"--microbatch-group-size-per-virtual-pipeline-stage", A::kValue, U::kApplied,
     "--microbatch-group-size", ""},
    {"--context-parallel-size", A::kValue, U::kApplied, "--cp", ""},
    {"--cp-comm-type", A::kList, U::kApplied,
     "--cp-comm-type (p2p, a2a, allgather, a2a+p2p; one value, or one per layer all equal)", ""},
    {"--hierarchical-context-parallel-sizes", A::kList, U::kApplied,
     "--cp-a2a-size A (of A B, A x B = --context-parallel-size; with a2a+p2p)", ""},
    {"--expert-model-parallel-size", A::kValue, U::kApplied, "--ep", ""},
    {"--expert-tensor-parallel-size", A::kValue, U::kApplied,
     "1 only (every expert whole on one GPU)", ""},
    {"--sequence-parallel", A::kSwitch, U::kApplied,
     "--sequence-parallel (off at TP 1, as Megatron)", ""},
    {"--use-distributed-optimizer", A::kSwitch, U::kApplied, "--zero 1", ""},
    {"--use-torch-fsdp2", A::kSwitch, U::kApplied,
     "--zero 3 (PyTorch FSDP2 per layer, costed as torchtitan runs it)", ""},
    {"--use-megatron-fsdp", A::kSwitch, U::kApplied, "--zero by --data-parallel-sharding-strategy",
     ""},
    {"--data-parallel-sharding-strategy", A::kValue, U::kApplied,
     "with --use-megatron-fsdp: no_shard --zero 0 (1 with --use-distributed-optimizer), optim 1, "
     "optim_grads 2, optim_grads_params 3",
     ""},
    {"--hybrid-context-parallel", A::kSwitch, U::kRefused, "",
     "hybrid context parallelism is not modelled"},
    // Layer placement.
    {"--decoder-first-pipeline-num-layers", A::kValue, U::kApplied, "--layers-per-stage", ""},
    {"--decoder-last-pipeline-num-layers", A::kValue, U::kApplied, "--layers-per-stage", ""},
    {"--account-for-embedding-in-pipeline-split", A::kSwitch, U::kApplied, "--embedding-as-layer",
     ""},
    {"--account-for-loss-in-pipeline-split", A::kSwitch, U::kApplied, "--loss-as-layer", ""},
    {"--pipeline-model-parallel-layout", A::kValue, U::kApplied,
     "--layers-per-stage (interop/megatron_layout)", ""},
    // Recomputation.
    {"--recompute-granularity", A::kValue, U::kApplied, "--recompute (full, selective)", ""},
    {"--recompute-method", A::kValue, U::kApplied, "--recompute-method (uniform, block)", ""},
    {"--recompute-num-layers", A::kValue, U::kApplied, "--recompute-num-layers", ""},
    {"--recompute-activations", A::kSwitch, U::kApplied, "--recompute selective", ""},
    {"--recompute-modules", A::kList, U::kApplied, "--recompute-modules", ""},
    {"--distribute-saved-activations", A::kSwitch, U::kRefused, "",
     "recomputed layer inputs split over TP are not modelled"},
    {"--cpu-offloading", A::kSwitch, U::kRefused, "",
     "layer-level activation offloading to the CPU is not modelled (fine-grained is)"},
    {"--fine-grained-activation-offloading", A::kSwitch, U::kApplied,
     "--offload-modules (models/offload.h)", ""},
    {"--offload-modules", A::kList, U::kApplied, "--offload-modules", ""},
    {"--min-offloaded-tensor-size", A::kValue, U::kAssumed, "",
     "every saved input of a listed module is offloaded, whatever its size"},
    {"--activation-offload-fraction", A::kValue, U::kAssumed, "",
     "every eligible offload group is offloaded (fraction 1)"},
    {"--delta-offload-bytes-across-pp-ranks", A::kValue, U::kAssumed, "",
     "every pipeline rank offloads the same modules"},
    // Overlaps.
    {"--overlap-grad-reduce", A::kSwitch, U::kApplied,
     "--grad-bucket (Megatron's bucket, max(40M, 1M x dp) parameters)", ""},
    {"--ddp-bucket-size", A::kValue, U::kApplied, "--grad-bucket (parameters x gradient bytes)",
     ""},
    {"--overlap-param-gather", A::kSwitch, U::kAssumed, "",
     "ZeRO-1's parameter all-gather is simulated after the optimizer step, not overlapped with "
     "the next iteration's forward (an upper bound)"},
    {"--tp-comm-overlap", A::kSwitch, U::kApplied, "--tp-comm-overlap", ""},
    {"--no-overlap-p2p-communication", A::kSwitch, U::kApplied,
     "--p2p-mode megatron-no-overlap (default megatron)", ""},
    {"--overlap-moe-expert-parallel-comm", A::kSwitch, U::kApplied,
     "--overlap-moe-expert-parallel-comm (combined 1F1B: OVERLAP_F_B pairs; --p2p-mode eager, "
     "noted)",
     ""},
    {"--delay-wgrad-compute", A::kSwitch, U::kApplied, "--delay-wgrad-compute", ""},
    // Precision.
    {"--bf16", A::kSwitch, U::kApplied, "--dtype bf16", ""},
    {"--fp16", A::kSwitch, U::kApplied, "--dtype fp16", ""},
    {"--fp8-format", A::kValue, U::kApplied, "--dtype fp8", ""},
    {"--fp8-recipe", A::kValue, U::kAssumed, "",
     "mxfp8 is --dtype mxfp8; the others one FP8 model: matmuls at the GPU's FP8 rate, the "
     "recipe's scaling work not counted"},
    {"--fp8-param-gather", A::kSwitch, U::kAssumed, "",
     "FP8 parameter all-gather: the parameters' bytes are the precision recipe's"},
    {"--fp4-format", A::kValue, U::kRefused, "", "FP4 training is not modelled"},
    {"--grad-reduce-in-bf16", A::kSwitch, U::kApplied, "--grad-dtype bf16", ""},
    {"--accumulate-allreduce-grads-in-fp32", A::kSwitch, U::kApplied, "--grad-dtype fp32", ""},
    // Mixture of experts.
    {"--num-experts", A::kValue, U::kApplied, "model: experts", ""},
    {"--moe-router-topk", A::kValue, U::kApplied, "model: experts_per_token", ""},
    {"--moe-ffn-hidden-size", A::kValue, U::kApplied,
     "model: expert_ffn_hidden (default ffn_hidden)", ""},
    {"--moe-shared-expert-intermediate-size", A::kValue, U::kApplied,
     "model: shared_experts (this / expert_ffn_hidden)", ""},
    {"--moe-layer-freq", A::kValue, U::kApplied,
     "model: first_dense_layers (1, or [0]*k+[1]*(L-k))", ""},
    {"--moe-token-dispatcher-type", A::kValue, U::kApplied, "alltoall (the dispatcher modelled)",
     ""},
    {"--moe-grouped-gemm", A::kSwitch, U::kAssumed, "",
     "the experts' matmuls are timed alike with or without grouped GEMM"},
    {"--moe-router-load-balancing-type", A::kValue, U::kAssumed, "",
     "routing is assumed balanced whatever the balancing loss"},
    {"--moe-aux-loss-coeff", A::kValue, U::kIgnored, "", "a loss coefficient"},
    {"--moe-router-enable-expert-bias", A::kSwitch, U::kApplied, "model: router_bias", ""},
    {"--moe-router-score-function", A::kValue, U::kIgnored, "", "routing scores"},
    {"--moe-router-topk-scaling-factor", A::kValue, U::kIgnored, "", "routing scores"},
    {"--moe-router-dtype", A::kValue, U::kIgnored, "", "routing numerics"},
    {"--moe-z-loss-coeff", A::kValue, U::kIgnored, "", "a loss coefficient"},
    // Multi-head latent attention and multi-token prediction.
    {"--multi-latent-attention", A::kSwitch, U::kApplied, "model: attention MLA", ""},
    {"--q-lora-rank", A::kValue, U::kApplied, "model: q_lora_rank", ""},
    {"--kv-lora-rank", A::kValue, U::kApplied, "model: kv_lora_rank", ""},
    {"--qk-head-dim", A::kValue, U::kApplied, "model: qk_nope_head_dim (default 128)", ""},
    {"--qk-pos-emb-head-dim", A::kValue, U::kApplied, "model: qk_rope_head_dim (default 64)", ""},
    {"--v-head-dim", A::kValue, U::kApplied, "model: v_head_dim (default 128)", ""},
    {"--mtp-num-layers", A::kValue, U::kApplied,
     "model: mtp_layers (on the last stage; --pipeline-model-parallel-layout's m there)", ""},
    // Kernel choices that ppsim's per-op model does not tell apart.
    {"--no-masked-softmax-fusion", A::kSwitch, U::kAssumed, "",
     "softmax timed as one fused kernel"},
    {"--no-bias-gelu-fusion", A::kSwitch, U::kAssumed, "",
     "element-wise work timed as fused kernels"},
    {"--no-bias-dropout-fusion", A::kSwitch, U::kAssumed, "",
     "element-wise work timed as fused kernels"},
    {"--no-gradient-accumulation-fusion", A::kSwitch, U::kAssumed, "",
     "weight gradients accumulated in the matmul, as with the fusion"},
    {"--cross-entropy-loss-fusion", A::kSwitch, U::kAssumed, "",
     "the loss timed as one fused kernel"},
    {"--use-mcore-models", A::kSwitch, U::kIgnored, "",
     "Megatron-core models are the ones modelled"},
    {"--transformer-impl", A::kValue, U::kAssumed, "", "Transformer Engine layers"},
    // What does not change an iteration's time or memory.
    {"--apply-layernorm-1p", A::kSwitch, U::kIgnored, "", kInit},
    {"--init-method-std", A::kValue, U::kIgnored, "", kInit},
    {"--attention-dropout", A::kValue, U::kIgnored, "", kInit},
    {"--hidden-dropout", A::kValue, U::kIgnored, "", kInit},
    {"--rotary-base", A::kValue, U::kIgnored, "", kInit},
    {"--rotary-percent", A::kValue, U::kIgnored, "", kInit},
    {"--norm-epsilon", A::kValue, U::kIgnored, "", kInit},
    {"--seed", A::kValue, U::kIgnored, "", kInit},
    {"--calculate-per-token-loss", A::kSwitch, U::kIgnored, "", kInit},
    {"--fp8-amax-history-len", A::kValue, U::kIgnored, "", kInit},
    {"--fp8-amax-compute-algo", A::kValue, U::kIgnored, "", kInit},
    {"--lr", A::kValue, U::kIgnored, "", kOptim},
    {"--min-lr", A::kValue, U::kIgnored, "", kOptim},
    {"--decoupled-lr", A::kValue, U::kIgnored, "", kOptim},
    {"--decoupled-min-lr", A::kValue, U::kIgnored, "", kOptim},
    {"--lr-decay-style", A::kValue, U::kIgnored, "", kOptim},
    {"--lr-decay-iters", A::kValue, U::kIgnored, "", kOptim},
    {"--lr-decay-samples", A::kValue, U::kIgnored, "", kOptim},
    {"--lr-warmup-fraction", A::kValue, U::kIgnored, "", kOptim},
    {"--lr-warmup-iters", A::kValue, U::kIgnored, "", kOptim},
    {"--lr-warmup-samples", A::kValue, U::kIgnored, "", kOptim},
    {"--weight-decay", A::kValue, U::kIgnored, "", kOptim},
    {"--adam-beta1", A::kValue, U::kIgnored, "", kOptim},
    {"--adam-beta2", A::kValue, U::kIgnored, "", kOptim},
    {"--adam-eps", A::kValue, U::kIgnored, "", kOptim},
    {"--clip-grad", A::kValue, U::kIgnored, "", kOptim},
    {"--loss-scale", A::kValue, U::kIgnored, "", kOptim},
    {"--initial-loss-scale", A::kValue, U::kIgnored, "", kOptim},
    {"--train-iters", A::kValue, U::kIgnored, "", kEval},
    {"--train-samples", A::kValue, U::kIgnored, "", kEval},
    {"--exit-duration-in-mins", A::kValue, U::kIgnored, "", kEval},
    {"--eval-iters", A::kValue, U::kIgnored, "", kEval},
    {"--eval-interval", A::kValue, U::kIgnored, "", kEval},
    {"--data-path", A::kList, U::kIgnored, "", kData},
    {"--mock-data", A::kSwitch, U::kIgnored, "", kData},
    {"--split", A::kValue, U::kIgnored, "", kData},
    {"--vocab-file", A::kValue, U::kIgnored, "", kData},
    {"--merge-file", A::kValue, U::kIgnored, "", kData},
    {"--tokenizer-model", A::kValue, U::kIgnored, "", kData},
    {"--tiktoken-pattern", A::kValue, U::kIgnored, "", kData},
    {"--data-cache-path", A::kValue, U::kIgnored, "", kData},
    {"--num-workers", A::kValue, U::kIgnored, "", kData},
    {"--no-create-attention-mask-in-dataloader", A::kSwitch, U::kIgnored, "", kData},
    {"--no-mmap-bin-files", A::kSwitch, U::kIgnored, "", kData},
    {"--log-interval", A::kValue, U::kIgnored, "", kLog},
    {"--log-throughput", A::kSwitch, U::kIgnored, "", kLog},
    {"--tensorboard-dir", A::kValue, U::kIgnored, "", kLog},
    {"--wandb-project", A::kValue, U::kIgnored, "", kLog},
    {"--wandb-exp-name", A::kValue, U::kIgnored, "", kLog},
    {"--profile", A::kSwitch, U::kIgnored, "", kLog},
    {"--profile-step-start", A::kValue, U::kIgnored, "", kLog},
    {"--profile-step-end", A::kValue, U::kIgnored, "", kLog},
    {"--save", A::kValue, U::kIgnored, "", kCkpt},
    {"--load", A::kValue, U::kIgnored, "", kCkpt},
    {"--save-interval", A::kValue, U::kIgnored, "", kCkpt},
    {"--ckpt-format", A::kValue, U::kIgnored, "", kCkpt},
    {"--no-load-optim", A::kSwitch, U::kIgnored, "", kCkpt},
    {"--no-load-rng", A::kSwitch, U::kIgnored, "", kCkpt},
    {"--distributed-timeout-minutes", A::kValue, U::kIgnored, "", kLaunch},
    {"--manual-gc", A::kSwitch, U::kIgnored, "", kLaunch},
    {"--empty-unused-memory-level", A::kValue, U::kIgnored, "", kLaunch},
};

}  // namespace

std::span<const MegatronArgument> MegatronArguments() { return kTable; }

const MegatronArgument* FindMegatronArgument(std::string_view flag) {
  for (const MegatronArgument& row : kTable) {
    if (row.flag == flag) return &row;
  }
  return nullptr;
}

std::string MegatronFlagHint(std::string_view flag) {
  const MegatronArgument* row = FindMegatronArgument(flag);
  if (row == nullptr) return "";
  const std::string pass = "pass Megatron-LM arguments whole with --megatron '" +
                           std::string(flag) + " ...' (or --megatron @FILE)";
  if (row->use == MegatronUse::kApplied && row->ppsim.starts_with("--")) {
    const std::string_view ppsim = row->ppsim.substr(0, row->ppsim.find(' '));
    return std::string(flag) + " is Megatron-LM's; ppsim's flag is " + std::string(ppsim) +
           ", or " + pass;
  }
  return std::string(flag) + " is Megatron-LM's; " + pass;
}

}  // namespace ppsim
