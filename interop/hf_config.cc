#include "interop/hf_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/json.h"
#include "base/names.h"
#include "config/config_file.h"
#include "models/model.pb.h"

namespace ppsim {
namespace {

using Json = nlohmann::json;

enum class Arch { kLlama, kMistral, kMixtral, kQwen2, kQwen3, kQwen3Moe, kDeepseekV3 };

constexpr NamedValue<Arch> kArchitectures[] = {
    {"LlamaForCausalLM", Arch::kLlama},           {"MistralForCausalLM", Arch::kMistral},
    {"MixtralForCausalLM", Arch::kMixtral},       {"Qwen2ForCausalLM", Arch::kQwen2},
    {"Qwen3ForCausalLM", Arch::kQwen3},           {"Qwen3MoeForCausalLM", Arch::kQwen3Moe},
    {"DeepseekV3ForCausalLM", Arch::kDeepseekV3},
};
// transformers' model_type of each, for a config without "architectures".
constexpr NamedValue<Arch> kModelTypes[] = {
    {"llama", Arch::kLlama},
    {"mistral", Arch::kMistral},
    {"mixtral", Arch::kMixtral},
    {"qwen2", Arch::kQwen2},
    {"qwen3", Arch::kQwen3},
    {"qwen3_moe", Arch::kQwen3Moe},
    {"deepseek_v3", Arch::kDeepseekV3},
};

// Fields that change nothing ppsim counts: positions (rotary bases and scaling), dropout,
// initialisation, token ids, dtypes and caching, and the routers' scoring, grouping and loss
// weights (the routed work is top-k whatever the scores), and bookkeeping.
const std::set<std::string>& IgnoredFields() {
  static const auto* const kFields = new std::set<std::string>{"_name_or_path",
                                                               "architectures",
                                                               "attention_dropout",
                                                               "auto_map",
                                                               "aux_loss_alpha",
                                                               "bos_token_id",
                                                               "dtype",
                                                               "eos_token_id",
                                                               "ep_size",
                                                               "hidden_dropout",
                                                               "initializer_range",
                                                               "layer_types",
                                                               "max_window_layers",
                                                               "model_type",
                                                               "n_group",
                                                               "norm_topk_prob",
                                                               "output_router_logits",
                                                               "pad_token_id",
                                                               "pretraining_tp",
                                                               "rms_norm_eps",
                                                               "rope_parameters",
                                                               "rope_scaling",
                                                               "rope_theta",
                                                               "routed_scaling_factor",
                                                               "router_aux_loss_coef",
                                                               "router_jitter_noise",
                                                               "scoring_func",
                                                               "seq_aux",
                                                               "sliding_window",
                                                               "tokenizer_class",
                                                               "topk_group",
                                                               "topk_method",
                                                               "torch_dtype",
                                                               "transformers_version",
                                                               "use_cache",
                                                               "use_mrope",
                                                               "use_sliding_window"};
  return *kFields;
}

// A config nested deeper than kMaxDepth is refused before it is parsed (base/json.h).
constexpr int kMaxDepth = 100;

// "line:col" (1-based, columns in bytes) of a byte offset.
std::string LineColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(offset - start + 1);
}

// What the JSON value is, for messages: "a string", "a number with a fraction (1.5)", ...
std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string:
      return "a string (" + value.dump() + ")";
    case Json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case Json::value_t::number_float:
      return "a number with a fraction (" + value.dump() + ")";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    default:
      return value.dump();
  }
}

// Reads the fields of one config, collecting every error and which fields were read.
class Fields {
 public:
  Fields(const Json& config, const std::string& source) : config_(config), source_(source) {}

  void Error(std::string_view field, const std::string& what) {
    errors_.Add(source_ + ": " + std::string(field) + ": " + what);
  }
  // The field's value, null when absent or JSON null (transformers' "not set"); marks it read.
  const Json* Get(const std::string& field) {
    read_.insert(field);
    const auto it = config_.find(field);
    return it == config_.end() || it->is_null() ? nullptr : &*it;
  }
  bool Has(const std::string& field) { return Get(field) != nullptr; }
  // The same without marking it read.
  const Json* Peek(const std::string& field) const {
    const auto it = config_.find(field);
    return it == config_.end() || it->is_null() ? nullptr : &*it;
  }

  // A whole number in [minimum, maximum]; `fallback` when absent (required without one).
  int64_t Int(const std::string& field, int64_t minimum, int64_t maximum,
              std::optional<int64_t> fallback = std::nullopt) {
    const Json* value = Get(field);
    if (value == nullptr) {
      if (!fallback) Error(field, "missing; give a whole number from " + Range(minimum, maximum));
      return fallback.value_or(0);
    }
    // A whole number beyond 64 bits is read as a double (1e+20): out of range, not a fraction.
    if (value->is_number_float() && std::isfinite(value->get<double>()) &&
        std::floor(value->get<double>()) == value->get<double>() &&
        std::abs(value->get<double>()) > 9e18) {
      Error(field,
            std::string(value->get<double>() < 0 ? "must be at least " + std::to_string(minimum)
                                                 : "must be at most " + std::to_string(maximum)) +
                "; got " + value->dump());
      return fallback.value_or(0);
    }
    if (!value->is_number_integer()) {
      Error(field, Describe(*value) + "; give a whole number from " + Range(minimum, maximum));
      return fallback.value_or(0);
    }
    if (value->is_number_unsigned() &&
        value->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Error(field, "must be at most " + std::to_string(maximum) + "; got " + value->dump());
      return fallback.value_or(0);
    }
    const int64_t n = value->get<int64_t>();
    if (n < minimum || n > maximum) {
      Error(field, std::string(n < minimum ? "must be at least " + std::to_string(minimum)
                                           : "must be at most " + std::to_string(maximum)) +
                       "; got " + std::to_string(n));
      return fallback.value_or(0);
    }
    return n;
  }
  bool Bool(const std::string& field, bool fallback) {
    const Json* value = Get(field);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) {
      Error(field, Describe(*value) + "; give true or false");
      return fallback;
    }
    return value->get<bool>();
  }
  // A flag ppsim cannot model when true: "attention_bias: true is not modelled ...".
  void MustBeFalse(const std::string& field, const std::string& why) {
    if (Bool(field, false)) Error(field, "true is not modelled (" + why + "); valid: false");
  }

  // The fields neither read nor known to be ignorable.
  std::vector<std::string> Unread() const {
    std::vector<std::string> names;
    for (const auto& [key, value] : config_.items()) {
      if (!read_.count(key) && !IgnoredFields().count(key)) names.push_back(key);
    }
    return names;
  }
  std::vector<std::string> Ignored() const {
    std::vector<std::string> names;
    for (const auto& [key, value] : config_.items()) {
      if (!read_.count(key) && IgnoredFields().count(key)) names.push_back(key);
    }
    return names;
  }
  ErrorList& errors() { return errors_; }

 private:
  static std::string Range(int64_t minimum, int64_t maximum) {
    return std::to_string(minimum) + " to " + std::to_string(maximum);
  }

  const Json& config_;
  const std::string& source_;
  std::set<std::string> read_;
  ErrorList errors_;
};

// The same bounds as the model files' (models/transformer_file.cc): widths and vocabulary up to
// 2^24, layers up to 10^5.
constexpr int64_t kMaxWidth = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 100'000;
constexpr int64_t kMaxExperts = int64_t{1} << 16;

// The architecture: the one entry of "architectures", or else "model_type".
std::optional<Arch> ArchitectureOf(Fields* fields) {
  std::vector<std::string> valid;
  for (const auto& entry : kArchitectures) valid.emplace_back(entry.name);
  if (const Json* list = fields->Get("architectures")) {
    if (!list->is_array() || list->size() != 1 || !(*list)[0].is_string()) {
      fields->Error("architectures",
                    Describe(*list) +
                        (list->is_array() ? " of " + std::to_string(list->size()) : "") +
                        "; give a list of one name: " + JoinNames(valid));
      return std::nullopt;
    }
    const std::string name = (*list)[0].get<std::string>();
    for (const auto& entry : kArchitectures) {
      if (entry.name == name) return entry.value;
    }
    fields->Error("architectures", UnknownName("architecture", name, valid));
    return std::nullopt;
  }
  const Json* type = fields->Get("model_type");
  std::vector<std::string> types;
  for (const auto& entry : kModelTypes) types.emplace_back(entry.name);
  if (type == nullptr || !type->is_string()) {
    fields->Error("architectures", "missing; give one of " + JoinNames(valid) +
                                       " (or model_type: " + JoinNames(types) + ")");
    return std::nullopt;
  }
  for (const auto& entry : kModelTypes) {
    if (entry.name == type->get<std::string>()) return entry.value;
  }
  fields->Error("model_type", UnknownName("model type", type->get<std::string>(), types));
  return std::nullopt;
}

// The sequence length: rope_scaling's original_max_position_embeddings (the pre-training
// context before a long-context extension), else max_position_embeddings.
int64_t SequenceLength(Fields* fields, std::vector<std::string>* notes) {
  constexpr int64_t kMaxSeq = int64_t{1} << 30;
  const Json* scaling = fields->Get("rope_scaling");
  if (scaling != nullptr && scaling->is_object() &&
      scaling->contains("original_max_position_embeddings")) {
    const Json& value = (*scaling)["original_max_position_embeddings"];
    if (value.is_number_integer() && value.get<int64_t>() >= 1 && value.get<int64_t>() <= kMaxSeq) {
      notes->push_back("default sequence length " + value.dump() +
                       " from rope_scaling.original_max_position_embeddings (the pre-training "
                       "context; max_position_embeddings is the extended one; --seq-len "
                       "overrides)");
      fields->Get("max_position_embeddings");
      return value.get<int64_t>();
    }
    fields->Error("rope_scaling.original_max_position_embeddings",
                  Describe(value) + "; give a whole number from 1 to " + std::to_string(kMaxSeq));
    return 0;
  }
  const int64_t seq = fields->Int("max_position_embeddings", 1, kMaxSeq);
  if (seq > 0) {
    notes->push_back("default sequence length " + std::to_string(seq) +
                     " from max_position_embeddings (--seq-len overrides)");
  }
  return seq;
}

// The experts of Mixtral, Qwen3-MoE and DeepSeek-V3.
void ReadExperts(Arch arch, Fields* fields, proto::TransformerModel* model) {
  const int64_t layers = model->layers();
  if (arch == Arch::kMixtral) {
    model->set_experts(static_cast<int32_t>(fields->Int("num_local_experts", 1, kMaxExperts)));
    model->set_expert_ffn_hidden(model->ffn_hidden());
  } else if (arch == Arch::kQwen3Moe) {
    model->set_experts(static_cast<int32_t>(fields->Int("num_experts", 1, kMaxExperts)));
    model->set_expert_ffn_hidden(fields->Int("moe_intermediate_size", 1, kMaxWidth));
    if (const Json* shared = fields->Get("shared_expert_intermediate_size");
        shared != nullptr && !(shared->is_number_integer() && shared->get<int64_t>() == 0)) {
      fields->Error("shared_expert_intermediate_size",
                    shared->dump() +
                        ": Qwen3-MoE's layers have no shared expert (Qwen2-MoE's "
                        "do, another architecture); valid: 0 or absent");
    }
    // A layer i is sparse unless it is in mlp_only_layers or (i + 1) % decoder_sparse_step != 0:
    // ppsim's dense layers are the first ones, so only a prefix of dense layers is modelled.
    if (const int64_t step = fields->Int("decoder_sparse_step", 1, kMaxLayers, 1); step != 1) {
      fields->Error("decoder_sparse_step", std::to_string(step) +
                                               " interleaves dense and MoE layers; ppsim models "
                                               "the dense layers first only; valid: 1");
    }
    int32_t dense = 0;
    if (const Json* only = fields->Get("mlp_only_layers")) {
      bool prefix = only->is_array();
      for (size_t i = 0; prefix && i < only->size(); ++i) {
        prefix = (*only)[i].is_number_integer() && (*only)[i].get<int64_t>() == int64_t(i);
      }
      if (!prefix || int64_t(only->size()) >= std::max<int64_t>(layers, 1)) {
        fields->Error("mlp_only_layers", only->dump() +
                                             " is not the first layers; ppsim models the dense "
                                             "layers first only; valid: [] or [0, 1, ..., k - 1]");
      }
      dense = only->is_array() ? static_cast<int32_t>(only->size()) : 0;
    }
    model->set_first_dense_layers(dense);
  } else {
    model->set_experts(static_cast<int32_t>(fields->Int("n_routed_experts", 1, kMaxExperts)));
    model->set_shared_experts(
        static_cast<int32_t>(fields->Int("n_shared_experts", 0, kMaxExperts, 0)));
    model->set_expert_ffn_hidden(fields->Int("moe_intermediate_size", 1, kMaxWidth));
    model->set_first_dense_layers(
        static_cast<int32_t>(fields->Int("first_k_dense_replace", 0, kMaxLayers, 0)));
    if (const int64_t freq = fields->Int("moe_layer_freq", 1, kMaxLayers, 1); freq != 1) {
      fields->Error("moe_layer_freq", std::to_string(freq) +
                                          " interleaves dense and MoE layers; ppsim models the "
                                          "dense layers first only; valid: 1");
    }
    // DeepSeek-V3's router has a score correction bias per expert (its noaux_tc routing).
    model->set_router_bias(true);
    // Its multi-token prediction modules (one in DeepSeek-V3), on the last stage.
    model->set_mtp_layers(
        static_cast<int32_t>(fields->Int("num_nextn_predict_layers", 0, kMaxLayers, 0)));
  }
  model->set_experts_per_token(
      static_cast<int32_t>(fields->Int("num_experts_per_tok", 1, kMaxExperts)));
}

// DeepSeek-V3's multi-head latent attention.
void ReadMla(Fields* fields, proto::TransformerModel* model) {
  model->set_attention(proto::TransformerModel::MLA);
  model->set_q_lora_rank(fields->Int("q_lora_rank", 1, kMaxWidth, 0));
  model->set_kv_lora_rank(fields->Int("kv_lora_rank", 1, kMaxWidth));
  model->set_qk_nope_head_dim(fields->Int("qk_nope_head_dim", 1, kMaxWidth));
  model->set_qk_rope_head_dim(fields->Int("qk_rope_head_dim", 0, kMaxWidth));
  model->set_v_head_dim(fields->Int("v_head_dim", 1, kMaxWidth));
  // MLA gives every head its key and value; num_key_value_heads is informational.
  fields->Get("num_key_value_heads");
  fields->Get("head_dim");
}

// The notes of what the config states that is not modelled.
void StatedAssumptions(Arch arch, Fields* fields, std::vector<std::string>* notes) {
  // Mistral's and Mixtral's windows apply when set; Qwen's only with use_sliding_window true.
  const Json* use = fields->Peek("use_sliding_window");
  if (const Json* window = fields->Peek("sliding_window");
      window != nullptr && (arch == Arch::kMistral || arch == Arch::kMixtral ||
                            (use != nullptr && use->is_boolean() && use->get<bool>()))) {
    fields->Get("sliding_window");
    fields->Get("use_sliding_window");
    notes->push_back("sliding_window " + window->dump() +
                     ": attention modelled as full causal attention (the same up to that many "
                     "tokens)");
  }
  if (fields->Has("quantization_config")) {
    notes->push_back("quantization_config ignored: weights and compute are in --dtype");
  }
}

// Everything from the architecture on, into *model.
void Convert(Arch arch, Fields* fields, proto::TransformerModel* model,
             std::vector<std::string>* notes) {
  model->set_mlp(proto::TransformerModel::SWIGLU);
  model->set_norm(proto::TransformerModel::RMSNORM);
  if (const Json* act = fields->Get("hidden_act");
      act != nullptr && !(act->is_string() && act->get<std::string>() == "silu")) {
    fields->Error("hidden_act", Describe(*act) +
                                    " is not modelled (ppsim's gated MLP is "
                                    "SwiGLU); valid: \"silu\"");
  }
  model->set_hidden(fields->Int("hidden_size", 1, kMaxWidth));
  model->set_ffn_hidden(fields->Int("intermediate_size", 1, kMaxWidth));
  model->set_layers(static_cast<int32_t>(fields->Int("num_hidden_layers", 1, kMaxLayers)));
  model->set_heads(static_cast<int32_t>(fields->Int("num_attention_heads", 1, kMaxWidth)));
  model->set_vocab(fields->Int("vocab_size", 1, kMaxWidth));
  model->set_tied_embeddings(fields->Bool("tie_word_embeddings", false));
  model->set_seq_len(SequenceLength(fields, notes));
  if (arch == Arch::kDeepseekV3) {
    ReadMla(fields, model);
  } else {
    model->set_kv_heads(
        static_cast<int32_t>(fields->Int("num_key_value_heads", 1, kMaxWidth, model->heads())));
    model->set_head_dim(fields->Int("head_dim", 1, kMaxWidth, 0));
  }
  const std::string bias_reason = "biases on the attention's output projection";
  switch (arch) {
    case Arch::kQwen2:
      model->set_qkv_bias(true);      // Qwen2Attention: q, k, v with bias=True, o without
      fields->Get("attention_bias");  // not read by Qwen2's classes
      break;
    case Arch::kQwen3:
    case Arch::kQwen3Moe:
      model->set_qk_norm(true);
      fields->MustBeFalse("attention_bias", bias_reason);
      break;
    case Arch::kLlama:
      fields->MustBeFalse("mlp_bias", "biases on the MLP");
      [[fallthrough]];
    default:
      fields->MustBeFalse("attention_bias", bias_reason);
  }
  if (arch == Arch::kMixtral || arch == Arch::kQwen3Moe || arch == Arch::kDeepseekV3) {
    ReadExperts(arch, fields, model);
  }
  StatedAssumptions(arch, fields, notes);
}

// The model checks' messages ("SOURCE: layers: ...") in the config's own field names.
std::string InHfTerms(const std::string& messages, const std::string& source) {
  static constexpr std::pair<const char*, const char*> kNames[] = {
      {"layers", "num_hidden_layers"},
      {"hidden", "hidden_size"},
      {"ffn_hidden", "intermediate_size"},
      {"heads", "num_attention_heads"},
      {"kv_heads", "num_key_value_heads"},
      {"vocab", "vocab_size"},
      {"seq_len", "max_position_embeddings"},
      {"experts", "num_experts (num_local_experts, n_routed_experts)"},
      {"experts_per_token", "num_experts_per_tok"},
      {"expert_ffn_hidden", "moe_intermediate_size"},
      {"first_dense_layers", "first_k_dense_replace (mlp_only_layers)"},
  };
  std::string out;
  size_t start = 0;
  while (start <= messages.size()) {
    size_t end = messages.find('\n', start);
    if (end == std::string::npos) end = messages.size();
    std::string line = messages.substr(start, end - start);
    for (const auto& [ours, theirs] : kNames) {
      const std::string prefix = source + ": " + ours + ": ";
      if (line.rfind(prefix, 0) == 0) {
        line = source + ": " + theirs + ": " + line.substr(prefix.size());
        break;
      }
    }
    out += (out.empty() ? "" : "\n") + line;
    start = end + 1;
  }
  return out;
}

}  // namespace

bool LooksLikeHfConfig(std::string_view text) {
  if (JsonNestingDepth(text) > kMaxDepth) {
    return text.find("\"architectures\"") != std::string_view::npos ||
           text.find("\"model_type\"") != std::string_view::npos;
  }
  const Json config = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) {
    return text.find("\"architectures\"") != std::string_view::npos ||
           text.find("\"model_type\"") != std::string_view::npos;
  }
  return config.is_object() && (config.contains("architectures") || config.contains("model_type"));
}

Status ReadHfConfig(std::string_view text, const std::string& source, TransformerSpec* spec) {
  if (JsonNestingDepth(text) > kMaxDepth) {
    return Status::InvalidInput(source + ": nested deeper than " + std::to_string(kMaxDepth) +
                                " levels; a Hugging Face config.json is an object of fields");
  }
  Json config;
  try {
    config = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line L, column
    // C: "; ppsim's position format replaces it.
    std::string what = e.what();
    if (const size_t colon = what.find(": "); colon != std::string::npos) {
      what = what.substr(colon + 2);
    }
    const size_t at = e.byte > 0 ? e.byte - 1 : 0;
    return Status::InvalidInput(source + ":" + LineColumn(text, at) + ": " + what +
                                "; a Hugging Face config.json is one JSON object");
  } catch (const Json::exception& e) {
    // A number beyond a double ("[json.exception.out_of_range.406] number overflow parsing ..."):
    // nlohmann gives no position for it.
    return Status::InvalidInput(source + ": " + JsonExceptionText(e) +
                                "; a Hugging Face config.json is one JSON object");
  }
  if (!config.is_object()) {
    return Status::InvalidInput(source + ": " + Describe(config) +
                                "; a Hugging Face config.json is one JSON object");
  }
  Fields fields(config, source);
  const std::optional<Arch> arch = ArchitectureOf(&fields);
  if (!arch) return fields.errors().ToStatus();
  proto::TransformerModel model;
  std::vector<std::string> notes;
  Convert(*arch, &fields, &model, &notes);
  RETURN_IF_ERROR(fields.errors().ToStatus());
  if (const std::vector<std::string> ignored = fields.Ignored(); !ignored.empty()) {
    notes.push_back("ignored (no effect on the cost): " + JoinNames(ignored));
  }
  if (const std::vector<std::string> unknown = fields.Unread(); !unknown.empty()) {
    notes.push_back("not recognised, ignored: " + JoinNames(unknown));
  }
  ConfigLocations locations;
  locations.set_source(source);
  if (const Status status = TransformerFromProto(model, locations, spec); !status.ok()) {
    return Status::InvalidInput(InHfTerms(status.message(), source));
  }
  spec->notes = std::move(notes);
  return Status();
}

}  // namespace ppsim
