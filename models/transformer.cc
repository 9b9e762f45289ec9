#include "models/transformer.h"

#include <algorithm>
#include <cstdio>
#include <array>
#include <utility>

#include "base/names.h"
#include "models/op_costs.h"

namespace ppsim {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Width of the K (or V) projection: head size times KV heads.
int64_t KvWidth(const TransformerSpec& spec) { return spec.hidden / spec.heads * spec.kv_heads; }

// LayerNorm has a weight and a bias, RMSNorm a weight.
int64_t FinalNormParameters(const TransformerSpec& spec) {
  return spec.swiglu ? spec.hidden : 2 * spec.hidden;
}

// Sources of the numbers, per preset:
// - gpt3-1.5b .. gpt3-28.3b: the zero-bubble paper's experiment models (Qi et al. 2024, arXiv
//   2401.10241, Table 3: layers, heads, hidden, sequence length 1024), "analogous to GPT-3"
//   (Sec. 5.1). The paper gives no vocabulary; GPT-3's (GPT-2 BPE, 50257, tied) is assumed, with
//   f = 4h as in its Sec. 2.3. These give 1.52B, 6.25B, 14.74B and 28.41B: the paper's labels are
//   0.4-1.4% lower, and no single vocabulary matches all four.
// - gpt3-175b: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (96 layers,
//   d_model 12288, 96 heads, n_ctx 2048); vocabulary 50257 (GPT-2's, Radford et al. 2019), tied.
// - llama3-*: Dubey et al. 2024, "The Llama 3 Herd of Models", Table 3 (layers, model dimension,
//   FFN dimension, attention heads, 8 KV heads, vocabulary 128K), and the config.json of
//   meta-llama/Meta-Llama-3-8B, Meta-Llama-3-70B and Llama-3.1-405B on Hugging Face
//   (vocab_size 128256, tie_word_embeddings false, max_position_embeddings 8192; 405B's
//   pre-training sequence length 8192, Sec. 3.4.1).
// - llama3-8b-128k: meta-llama/Llama-3.1-8B config.json (the same shapes, max_position_embeddings
//   131072), the long-context model of Sec. 3.4.2.
std::vector<TransformerSpec> MakePresets() {
  auto gpt = [](std::string name, int32_t layers, int64_t hidden, int32_t heads, int64_t seq) {
    TransformerSpec s;
    s.name = std::move(name);
    s.layers = layers;
    s.hidden = hidden;
    s.ffn_hidden = 4 * hidden;
    s.heads = heads;
    s.kv_heads = heads;
    s.vocab = 50257;
    s.tied_embeddings = true;
    s.swiglu = false;
    s.seq_len = seq;
    return s;
  };
  auto llama = [](std::string name, int32_t layers, int64_t hidden, int64_t ffn, int32_t heads,
                  int64_t seq) {
    TransformerSpec s;
    s.name = std::move(name);
    s.layers = layers;
    s.hidden = hidden;
    s.ffn_hidden = ffn;
    s.heads = heads;
    s.kv_heads = 8;
    s.vocab = 128256;
    s.tied_embeddings = false;
    s.swiglu = true;
    s.seq_len = seq;
    return s;
  };
  return {
      gpt("gpt3-1.5b", 22, 2304, 24, 1024),
      gpt("gpt3-6.2b", 30, 4096, 32, 1024),
      gpt("gpt3-14.6b", 46, 5120, 40, 1024),
      gpt("gpt3-28.3b", 62, 6144, 48, 1024),
      gpt("gpt3-175b", 96, 12288, 96, 2048),
      llama("llama3-8b", 32, 4096, 14336, 32, 8192),
      llama("llama3-8b-128k", 32, 4096, 14336, 32, 131072),
      llama("llama3-70b", 80, 8192, 28672, 64, 8192),
      llama("llama3-405b", 126, 16384, 53248, 128, 8192),
  };
}

constexpr NamedValue<Dtype> kDtypes[] = {
    {"bf16", Dtype::kBf16},
    {"fp16", Dtype::kFp16},
    {"fp8", Dtype::kFp8},
};
constexpr NamedValue<Recompute> kRecomputes[] = {
    {"none", Recompute::kNone},
    {"selective", Recompute::kSelective},
    {"full", Recompute::kFull},
};

// The layer's matmul FLOPs on one GPU: the weight matmuls and the attention core.
struct LayerFlops {
  double weights = 0;
  double attention = 0;
};

LayerFlops LayerMatmulFlops(const TransformerSpec& spec, const TrainingSetup& setup) {
  const double b = static_cast<double>(setup.microbatch_size);
  const double s = static_cast<double>(setup.seq_len);
  const double h = static_cast<double>(spec.hidden);
  const double f = static_cast<double>(spec.ffn_hidden);
  const double kv = static_cast<double>(KvWidth(spec));
  const double t = static_cast<double>(setup.tp);
  const double qkv = 2 * b * s * h * (h + 2 * kv);
  const double projection = 2 * b * s * h * h;
  const double mlp = (spec.swiglu ? 6 : 4) * b * s * h * f;
  // Context parallelism: each GPU has s/c of the tokens (queries) and computes 1/c of the scores.
  const double c = static_cast<double>(setup.cp);
  LayerFlops flops;
  flops.weights = (qkv + projection + mlp) / t / c;
  flops.attention = 4 * b * s * s * h / t / c;
  return flops;
}

// Activation bytes of one layer on one GPU; the "replicated" parts are divided by t only with
// sequence parallelism. Dimensions are divided by t before multiplying, so the results are exact
// (t divides heads, kv_heads and ffn_hidden, hence hidden and the KV width).
struct LayerActivations {
  int64_t stored = 0;       // M_B
  int64_t weight_grad = 0;  // M_W
};

LayerActivations LayerActivationBytes(const TransformerSpec& spec, const TrainingSetup& setup) {
  const int64_t t = setup.tp;
  const int64_t sb = setup.seq_len / setup.cp * setup.microbatch_size;  // this GPU's tokens
  const int64_t h_t = spec.hidden / t;
  const int64_t kv_t = KvWidth(spec) / t;
  const int64_t f_t = spec.ffn_hidden / t;
  const int64_t a_t = spec.heads / t;
  const bool gpt = !spec.swiglu;
  // Outside the tensor-parallel region: norm inputs and outputs (16-bit), GPT's dropout masks
  // (1 byte), per element of s x b x h.
  const int64_t replicated_per_sbh = 8 + (gpt ? 2 : 0);
  const int64_t replicated =
      sb * (setup.sequence_parallel ? h_t : spec.hidden) * replicated_per_sbh;
  // Inside it: Q, K, V, the attention output, the MLP's intermediates.
  const int64_t sharded = sb * (2 * h_t + 4 * kv_t + 2 * h_t + (gpt ? 4 : 6) * f_t);
  // Softmax output (2), and for GPT the attention dropout's mask (1) and output (2), per score.
  const int64_t scores = (gpt ? 5 : 2) * a_t * setup.seq_len * sb;

  LayerActivations bytes;
  switch (setup.recompute) {
    case Recompute::kNone:
      bytes.stored = replicated + sharded + (setup.flash_attention ? 0 : scores);
      break;
    case Recompute::kSelective:
      bytes.stored = replicated + sharded;
      break;
    case Recompute::kFull:
      // Only the layer's input, which is sharded along the sequence with sequence parallelism.
      bytes.stored = 2 * sb * (setup.sequence_parallel ? h_t : spec.hidden);
      break;
  }
  // For W: the inputs of QKV and of the MLP's first matmul(s) and the output gradients of the
  // attention projection and of the last MLP matmul, replicated without sequence parallelism;
  // the output gradients of QKV and of the first MLP matmul(s) and the inputs of the projection
  // and of the last MLP matmul, sharded.
  const int64_t w_replicated = sb * (setup.sequence_parallel ? h_t : spec.hidden) * 8;
  const int64_t w_sharded =
      sb * (2 * (h_t + 2 * kv_t) + 2 * h_t + (gpt ? 2 * f_t + 2 * f_t : 4 * f_t + 2 * f_t));
  bytes.weight_grad = std::min(w_replicated + w_sharded, bytes.stored);
  return bytes;
}

}  // namespace

int64_t TransformerSpec::LayerParameters() const {
  const int64_t kv = KvWidth(*this);
  if (swiglu) {
    // Q, K, V and output projections; gate, up and down; two RMSNorm weights.
    return hidden * (hidden + 2 * kv) + hidden * hidden + 3 * hidden * ffn_hidden + 2 * hidden;
  }
  // Each linear layer with its bias; two LayerNorms with weight and bias.
  return hidden * (hidden + 2 * kv) + (hidden + 2 * kv) + hidden * hidden + hidden +
         2 * hidden * ffn_hidden + ffn_hidden + hidden + 4 * hidden;
}

int64_t TransformerSpec::EmbeddingParameters() const {
  return vocab * hidden + (swiglu ? 0 : seq_len * hidden);
}

int64_t TransformerSpec::HeadParameters() const { return tied_embeddings ? 0 : vocab * hidden; }

int64_t TransformerSpec::TotalParameters() const {
  return layers * LayerParameters() + EmbeddingParameters() + HeadParameters() +
         FinalNormParameters(*this);
}

const std::vector<TransformerSpec>& TransformerPresets() {
  static const std::vector<TransformerSpec>* presets =
      new std::vector<TransformerSpec>(MakePresets());
  return *presets;
}

const TransformerSpec* FindTransformerPreset(std::string_view name) {
  for (const TransformerSpec& spec : TransformerPresets()) {
    if (EqualsIgnoringCase(spec.name, name)) return &spec;
  }
  return nullptr;
}

std::string TransformerPresetNames() {
  std::string names;
  for (const TransformerSpec& spec : TransformerPresets()) {
    if (!names.empty()) names += ", ";
    names += spec.name;
  }
  return names;
}

Status TransformerFromProto(const proto::TransformerModel& model, const ConfigLocations& locations,
                            TransformerSpec* spec) {
  std::vector<std::string> errors;
  auto error = [&](const std::string& field, const std::string& what) {
    errors.push_back(locations.Where(field) + ": " + field + ": " + what);
  };
  // The largest sizes keep every parameter and FLOP count of the model well inside 64 bits:
  // 2^24 (16.7M) for widths and the vocabulary, 10^5 layers (the largest models have ~10^2).
  auto at_least = [&](const std::string& field, int64_t value, int64_t minimum,
                      int64_t maximum = int64_t{1} << 24) {
    if (value >= minimum && value <= maximum) return true;
    error(field, (value < minimum ? "must be at least " + std::to_string(minimum)
                                  : "must be at most " + std::to_string(maximum)) +
                     "; got " + std::to_string(value));
    return false;
  };

  *spec = TransformerSpec();
  spec->name = model.name().empty() ? locations.Where("name") : model.name();
  // In the proto's field order.
  at_least("layers", model.layers(), 1, 100'000);
  const bool hidden_ok = at_least("hidden", model.hidden(), 1);
  at_least("ffn_hidden", model.ffn_hidden(), 0);
  if (at_least("heads", model.heads(), 1) && hidden_ok && model.hidden() % model.heads() != 0) {
    error("heads", std::to_string(model.heads()) + " does not divide hidden " +
                       std::to_string(model.hidden()));
  }
  if (at_least("kv_heads", model.kv_heads(), 0) && model.kv_heads() > 0 && model.heads() > 0 &&
      model.heads() % model.kv_heads() != 0) {
    error("kv_heads", std::to_string(model.kv_heads()) + " does not divide heads " +
                          std::to_string(model.heads()));
  }
  at_least("vocab", model.vocab(), 1);
  switch (model.mlp()) {
    case proto::TransformerModel::MLP_UNSPECIFIED:
    case proto::TransformerModel::GELU:
      spec->swiglu = false;
      break;
    case proto::TransformerModel::SWIGLU:
      spec->swiglu = true;
      break;
    default:
      error("mlp", "unknown value " + std::to_string(model.mlp()) + "; valid: GELU, SWIGLU");
  }
  at_least("seq_len", model.seq_len(), 1, int64_t{1} << 30);
  if (!errors.empty()) {
    std::string message;
    for (const std::string& e : errors) {
      if (!message.empty()) message += '\n';
      message += e;
    }
    return Status::InvalidInput(std::move(message));
  }
  spec->layers = model.layers();
  spec->hidden = model.hidden();
  spec->ffn_hidden = model.ffn_hidden() > 0 ? model.ffn_hidden() : 4 * model.hidden();
  spec->heads = model.heads();
  spec->kv_heads = model.kv_heads() > 0 ? model.kv_heads() : model.heads();
  spec->vocab = model.vocab();
  spec->tied_embeddings = model.tied_embeddings();
  spec->seq_len = model.seq_len();
  return Status();
}

Status ParseDtype(std::string_view what, std::string_view text, Dtype* dtype) {
  return ParseNamed(kDtypes, "value", what, text, dtype, /*ignore_case=*/true);
}

Status ParseRecompute(std::string_view what, std::string_view text, Recompute* recompute) {
  return ParseNamed(kRecomputes, "value", what, text, recompute, /*ignore_case=*/true);
}

std::string_view DtypeName(Dtype dtype) { return NameOf(kDtypes, dtype); }

std::string_view RecomputeName(Recompute recompute) { return NameOf(kRecomputes, recompute); }

int64_t DtypeBytes(Dtype dtype) { return dtype == Dtype::kFp8 ? 1 : 2; }

ParamBytes RecipeBytes(const TrainingSetup& setup) {
  ParamBytes bytes = setup.fp32_grads ? ParamBytes{6, 12} : ParamBytes{4, 16};
  if (setup.replicated_bytes_per_param >= 0) bytes.replicated = setup.replicated_bytes_per_param;
  if (setup.sharded_bytes_per_param >= 0) bytes.sharded = setup.sharded_bytes_per_param;
  return bytes;
}

Status CheckTrainingSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                          const Locator& where) {
  auto at_least_one = [&](std::string_view field, int64_t value) {
    return where.Invalid(field, "must be at least 1; got " + std::to_string(value));
  };
  if (setup.seq_len < 1) return at_least_one("seq_len", setup.seq_len);
  if (setup.microbatch_size < 1) return at_least_one("microbatch_size", setup.microbatch_size);
  if (setup.tp < 1) return at_least_one("tp", setup.tp);
  if (setup.dp < 1) return at_least_one("dp", setup.dp);
  if (setup.cp < 1) return at_least_one("cp", setup.cp);
  if (setup.cp > 1 && setup.seq_len % (2 * setup.cp) != 0) {
    return where.Invalid("cp", std::to_string(setup.cp) + " GPUs hold 2 x " +
                                   std::to_string(setup.cp) + " chunks of each sequence; " +
                                   std::to_string(2 * setup.cp) + " does not divide the " +
                                   "sequence length " + std::to_string(setup.seq_len));
  }
  if (setup.cp > 1 && !setup.flash_attention) {
    return where.Invalid("cp", "context parallelism runs ring attention on flash attention "
                               "(Transformer Engine); drop --flash-attention off");
  }
  if (setup.zero_stage != 0 && setup.zero_stage != 1) {
    return where.Invalid("zero", std::to_string(setup.zero_stage) +
                                     " is not supported; valid: 0, 1");
  }
  auto divides = [&](const char* what, int64_t count) {
    return where.Invalid("tp", std::to_string(setup.tp) + " does not divide the " +
                                   std::to_string(count) + " " + what + " of " + spec.name);
  };
  // Sizes are counted in 64-bit integers: the largest one — a layer's attention scores and
  // activations, the head's fp32 logits, for all layers — must stay well inside them.
  const double sb = static_cast<double>(setup.seq_len) * static_cast<double>(setup.microbatch_size);
  const double layer_bytes =
      sb * (64.0 * spec.hidden + 5.0 * spec.heads * static_cast<double>(setup.seq_len)) +
      sb * 4.0 * spec.vocab;
  constexpr double kMaxCountedBytes = 1152921504606846976.0;  // 2^60, 1 EiB
  if (layer_bytes * (spec.layers + 2) > kMaxCountedBytes) {
    std::string fields;
    auto blame = [&](std::string_view field, int64_t value) {
      fields += (fields.empty() ? where.Where(field) : ", " + where.Name(field)) + " " +
                std::to_string(value);
    };
    if (setup.seq_len != spec.seq_len) blame("seq_len", setup.seq_len);
    if (setup.microbatch_size > 1) blame("microbatch_size", setup.microbatch_size);
    if (fields.empty()) fields = where.Where("model") + " " + spec.name;
    char text[160];
    std::snprintf(text, sizeof(text),
                  ": a microbatch of %.3g tokens needs about %.2g bytes of activations in %s; "
                  "sizes are counted up to 2^60 bytes (1 EiB)",
                  sb, layer_bytes * spec.layers, spec.name.c_str());
    return Status::InvalidInput(fields + text);
  }
  if (spec.heads % setup.tp != 0) return divides("heads", spec.heads);
  if (spec.kv_heads % setup.tp != 0) return divides("KV heads", spec.kv_heads);
  if (spec.ffn_hidden % setup.tp != 0) return divides("FFN channels", spec.ffn_hidden);
  return Status();
}

LayerCosts TransformerLayerCosts(const TransformerSpec& spec, const TrainingSetup& setup) {
  const LayerFlops flops = LayerMatmulFlops(spec, setup);
  LayerCosts costs;
  costs.forward_flops = flops.weights + flops.attention;
  costs.backward_input_flops = flops.weights + 2 * flops.attention;
  costs.backward_weight_flops = flops.weights;
  switch (setup.recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kSelective:
      costs.backward_input_flops += flops.attention;
      break;
    case Recompute::kFull:
      costs.backward_input_flops += costs.forward_flops;
      break;
  }
  const LayerActivations bytes = LayerActivationBytes(spec, setup);
  costs.activation_bytes = bytes.stored;
  costs.activation_w_bytes = bytes.weight_grad;
  return costs;
}

Status SplitLayers(const TransformerSpec& spec, int32_t num_stages, const LayerSplit& split,
                   const Locator& where, std::vector<int32_t>* layers_per_stage) {
  layers_per_stage->clear();
  if (num_stages < 1) {
    return where.Invalid("pp", "must be at least 1 stage; got " + std::to_string(num_stages));
  }
  if (!split.layers_per_stage.empty()) {
    const std::vector<int32_t>& given = split.layers_per_stage;
    if (split.embedding_as_layer || split.loss_as_layer) {
      return where.Invalid("layers_per_stage",
                           "an explicit split cannot be combined with counting the embedding or "
                           "the loss as a layer");
    }
    if (static_cast<int64_t>(given.size()) != num_stages) {
      return where.Invalid("layers_per_stage", std::to_string(given.size()) + " entries for " +
                                                   std::to_string(num_stages) +
                                                   " stages; give one per stage");
    }
    int64_t sum = 0;
    for (size_t s = 0; s < given.size(); ++s) {
      if (given[s] < 0) {
        return where.Invalid("layers_per_stage", "stage " + std::to_string(s) + " has " +
                                                     std::to_string(given[s]) +
                                                     " layers; must be at least 0");
      }
      sum += given[s];
    }
    if (sum != spec.layers) {
      return where.Invalid("layers_per_stage", "the entries sum to " + std::to_string(sum) +
                                                   "; the model has " +
                                                   std::to_string(spec.layers) + " layers");
    }
    *layers_per_stage = given;
    return Status();
  }
  const int64_t slots =
      int64_t{spec.layers} + (split.embedding_as_layer ? 1 : 0) + (split.loss_as_layer ? 1 : 0);
  if (slots < num_stages) {
    std::string extra;
    if (split.embedding_as_layer && split.loss_as_layer) {
      extra = " plus the embedding and the loss";
    } else if (split.embedding_as_layer) {
      extra = " plus the embedding";
    } else if (split.loss_as_layer) {
      extra = " plus the loss";
    }
    return where.Invalid("pp", std::to_string(num_stages) + " stages for the " +
                                   std::to_string(spec.layers) + " layers of " + spec.name + extra +
                                   "; each stage needs at least one");
  }
  const int64_t base = slots / num_stages;
  const int64_t extra = slots % num_stages;
  for (int32_t s = 0; s < num_stages; ++s) {
    layers_per_stage->push_back(static_cast<int32_t>(base + (s < extra ? 1 : 0)));
  }
  if (split.embedding_as_layer) --layers_per_stage->front();
  if (split.loss_as_layer) --layers_per_stage->back();
  return Status();
}

std::vector<StageModel> BuildStageModels(const TransformerSpec& spec, const TrainingSetup& setup,
                                         const std::vector<int32_t>& layers_per_stage) {
  const int64_t t = setup.tp;
  const int64_t sb = setup.seq_len / setup.cp * setup.microbatch_size;  // this GPU's tokens
  const int64_t h_per_gpu = setup.sequence_parallel ? spec.hidden / t : spec.hidden;
  const int64_t vocab_shard = CeilDiv(spec.vocab, t);
  const LayerCosts layer = TransformerLayerCosts(spec, setup);
  const double head_flops = 2.0 * static_cast<double>(sb) * static_cast<double>(spec.hidden) *
                            static_cast<double>(vocab_shard);
  const int32_t num_stages = static_cast<int32_t>(layers_per_stage.size());

  std::vector<StageModel> stages;
  for (int32_t s = 0; s < num_stages; ++s) {
    StageModel stage;
    stage.layers = layers_per_stage[s];
    stage.embedding = s == 0;
    stage.lm_head = s == num_stages - 1;
    const int64_t n = stage.layers;
    stage.forward_flops = static_cast<double>(n) * layer.forward_flops;
    stage.backward_input_flops = static_cast<double>(n) * layer.backward_input_flops;
    stage.backward_weight_flops = static_cast<double>(n) * layer.backward_weight_flops;
    stage.activation_bytes = n * layer.activation_bytes;
    stage.activation_w_bytes = n * layer.activation_w_bytes;
    int64_t parameters = n * spec.LayerParameters();
    if (stage.embedding) {
      parameters += spec.EmbeddingParameters();
      // GPT's embedding dropout mask (1 byte per element); the lookup keeps nothing else.
      if (!spec.swiglu) stage.activation_bytes += sb * h_per_gpu;
    }
    if (stage.lm_head) {
      parameters += FinalNormParameters(spec) + spec.HeadParameters();
      if (spec.tied_embeddings && !stage.embedding) parameters += spec.vocab * spec.hidden;
      stage.forward_flops += head_flops;
      stage.backward_input_flops += head_flops;
      stage.backward_weight_flops += head_flops;
      stage.activation_bytes += 4 * sb * h_per_gpu + 4 * sb * vocab_shard;
      stage.activation_w_bytes += 2 * sb * h_per_gpu + 2 * sb * vocab_shard;
    }
    stage.parameters = CeilDiv(parameters, t);
    // Megatron's distributed optimizer shards over the data-parallel group with its context-
    // parallel GPUs (they hold the same parameters).
    const int64_t optimizer_shards = setup.zero_stage == 1 ? int64_t{setup.dp} * setup.cp : 1;
    const ParamBytes bytes = RecipeBytes(setup);
    stage.static_bytes = bytes.replicated * stage.parameters +
                         CeilDiv(bytes.sharded * stage.parameters, optimizer_shards);
    // The rank's whole boundary tensor (all its GPUs' tokens).
    stage.message_bytes = sb * setup.cp * spec.hidden * DtypeBytes(setup.dtype);
    stage.gradient_bytes = (setup.fp32_grads ? 4 : 2) * stage.parameters;
    stage.optimizer_bytes =
        (setup.fp32_grads ? 30 : 36) * CeilDiv(stage.parameters, optimizer_shards);
    if (t > 1) {
      const int32_t all_reduce = 2 * (setup.tp - 1);
      const int32_t half = setup.tp - 1;  // a reduce-scatter or an all-gather
      const int32_t layers = stage.layers * (setup.recompute == Recompute::kFull ? 2 : 1);
      stage.tp_forward_steps = 2 * stage.layers * all_reduce;
      stage.tp_backward_steps = 2 * layers * all_reduce;
      // Sequence parallelism keeps only the shard of a column-parallel layer's input and gathers
      // it again in the backward for the weight gradient: QKV's and the MLP's.
      if (setup.sequence_parallel) stage.tp_backward_steps += 2 * stage.layers * half;
      // The vocabulary-parallel embedding's output: all-reduced, or reduce-scattered (and its
      // gradient all-gathered) with sequence parallelism. The head's input: all-reduced in the
      // backward, or all-gathered in F and reduce-scattered in I with sequence parallelism, which
      // also gathers it again for the head's weight gradient.
      if (stage.embedding) {
        stage.tp_forward_steps += setup.sequence_parallel ? half : all_reduce;
        stage.tp_backward_steps += setup.sequence_parallel ? half : 0;
      }
      if (stage.lm_head) {
        stage.tp_forward_steps += setup.sequence_parallel ? half : 0;
        stage.tp_backward_steps += setup.sequence_parallel ? 2 * half : all_reduce;
      }
      stage.tp_step_bytes = CeilDiv(sb * spec.hidden * 2, t);
    }
    if (setup.cp > 1) {
      const int64_t kv_block = 4 * sb * (KvWidth(spec) / t);  // K and V of this GPU's tokens
      const int64_t forward = (setup.cp - 1) * kv_block;
      const int64_t recompute = setup.recompute == Recompute::kNone ? 0 : 1;
      stage.cp_forward_bytes = stage.layers * forward;
      stage.cp_backward_bytes = stage.layers * (2 + recompute) * forward;
    }
    stages.push_back(stage);
  }
  return stages;
}

StageCosts StageModelsToCosts(const std::vector<StageModel>& stages,
                              const std::vector<PassSeconds>& seconds) {
  StageCosts costs;
  for (size_t k = 0; k < stages.size(); ++k) {
    const StageModel& stage = stages[k];
    costs.forward_s.push_back(seconds[k].forward_s);
    costs.backward_input_s.push_back(seconds[k].backward_input_s);
    costs.backward_weight_s.push_back(seconds[k].backward_weight_s);
    costs.backward_s.push_back(seconds[k].backward_input_s + seconds[k].backward_weight_s);
    costs.activation_bytes.push_back(stage.activation_bytes);
    costs.activation_w_bytes.push_back(stage.activation_w_bytes);
    costs.message_bytes.push_back(stage.message_bytes);
    costs.static_bytes.push_back(stage.static_bytes);
    costs.gradient_bytes.push_back(stage.gradient_bytes);
    costs.optimizer_bytes.push_back(stage.optimizer_bytes);
  }
  return costs;
}

}  // namespace ppsim
