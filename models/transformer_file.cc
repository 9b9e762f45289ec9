// Model files (models/model.proto) read into TransformerSpecs: the user's --model FILE and the
// presets compiled into the program (models/transformer.h).
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "base/embedded.h"
#include "base/escape.h"
#include "base/names.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

// The presets: models/presets/NAME.textproto (each citing its sources), embedded at build time,
// read as a user's model file is (ParseConfig, then TransformerFromProto), all at once on first
// use. A file that does not load is a bug in this build: it is left out of the lists and
// TransformerPresetsStatus reports it.
struct PresetTable {
  std::vector<TransformerSpec> presets;
  Status status;
};

const PresetTable& Presets() {
  static const PresetTable* const kTable = [] {
    auto* table = new PresetTable;
    std::string errors;
    for (const EmbeddedFile& file : TransformerPresetFiles()) {
      TransformerSpec spec;
      if (const Status status = ReadTransformerPresetFile(file, &spec); !status.ok()) {
        errors += (errors.empty() ? "" : "\n") + status.message();
      } else {
        table->presets.push_back(std::move(spec));
      }
    }
    if (!errors.empty()) table->status = Status::Internal(std::move(errors));
    return table;
  }();
  return *kTable;
}

}  // namespace

Status ReadTransformerPresetFile(const EmbeddedFile& file, TransformerSpec* spec) {
  const std::string name(EmbeddedFileStem(file));
  const std::string path = "models/" + std::string(file.name);
  proto::TransformerModel model;
  ConfigLocations locations;
  Status status = ParseConfig(file.bytes, ConfigFormat::kTextProto, path, &model, &locations);
  std::string errors;
  if (status.ok()) {
    if (model.name() != name) {
      errors = locations.Where("name") + ": name: " + Quoted(model.name()) +
               " differs from the file's name, " + name + "\n";
    }
    status = TransformerFromProto(model, locations, spec);
  }
  if (!status.ok()) errors += status.message() + "\n";
  if (errors.empty()) return Status();
  errors.pop_back();
  return Status::Internal("the model preset " + name +
                          " does not load (a bug in this build of ppsim):\n" + errors);
}

const std::vector<TransformerSpec>& TransformerPresets() { return Presets().presets; }

Status TransformerPresetsStatus() { return Presets().status; }

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

namespace {

// Every error of a model description, each at its field, in the order they were found.
class ModelErrors {
 public:
  explicit ModelErrors(const ConfigLocations& locations) : locations_(locations) {}

  void Add(const std::string& field, const std::string& what) {
    errors_.Add(locations_.Where(field) + ": " + field + ": " + what);
  }
  // The largest sizes keep every parameter and FLOP count of the model well inside 64 bits:
  // 2^24 (16.7M) for widths and the vocabulary, 10^5 layers (the largest models have ~10^2).
  bool InRange(const std::string& field, int64_t value, int64_t minimum,
               int64_t maximum = int64_t{1} << 24) {
    if (value >= minimum && value <= maximum) return true;
    Add(field, (value < minimum ? "must be at least " + std::to_string(minimum)
                                : "must be at most " + std::to_string(maximum)) +
                   "; got " + std::to_string(value));
    return false;
  }
  bool empty() const { return errors_.empty(); }
  Status ToStatus() const { return errors_.ToStatus(); }

 private:
  const ConfigLocations& locations_;
  ErrorList errors_;
};

struct SizeField {
  const char* field;
  int64_t value;
  int64_t minimum;
};

bool IsMla(const proto::TransformerModel& model) {
  return model.attention() == proto::TransformerModel::MLA;
}

// The fields with no default: what each is and the values it takes, for the message naming it.
void CheckRequired(const proto::TransformerModel& model, ModelErrors* errors) {
  if (!model.has_tied_embeddings()) {
    errors->Add("tied_embeddings",
                "missing; give true (the LM head is the input embedding, as GPT and Megatron's "
                "default) or false (a separate head, as Llama)");
  }
  if (model.mlp() == proto::TransformerModel::MLP_UNSPECIFIED) {
    errors->Add("mlp",
                "missing; give GELU (GPT's layer: biases, learned positions, dropout) or SWIGLU "
                "(Llama's: gate, up and down, no biases, rotary positions)");
  }
  if (model.norm() == proto::TransformerModel::NORM_UNSPECIFIED) {
    errors->Add("norm",
                "missing; give LAYERNORM (a weight and a bias, GPT) or RMSNORM (a weight, "
                "Llama)");
  }
}

// Layers, widths, heads, vocabulary, MLP and sequence, in the proto's field order.
void CheckShape(const proto::TransformerModel& model, ModelErrors* errors) {
  errors->InRange("layers", model.layers(), 1, 100'000);
  errors->InRange("mtp_layers", model.mtp_layers(), 0, 100);
  const bool hidden_ok = errors->InRange("hidden", model.hidden(), 1);
  errors->InRange("ffn_hidden", model.ffn_hidden(), 0);
  // MLA's head sizes are its own: its heads need not divide hidden, and every head has its key
  // and value.
  const bool mla = IsMla(model);
  // With head_dim given, the heads' width a d is the file's and need not be hidden.
  if (errors->InRange("heads", model.heads(), 1) && hidden_ok && !mla && model.head_dim() == 0 &&
      model.hidden() % model.heads() != 0) {
    errors->Add("heads", std::to_string(model.heads()) + " does not divide hidden " +
                             std::to_string(model.hidden()));
  }
  if (errors->InRange("kv_heads", model.kv_heads(), 0) && model.kv_heads() > 0 &&
      model.heads() > 0) {
    if (mla && model.kv_heads() != model.heads()) {
      errors->Add("kv_heads", std::to_string(model.kv_heads()) + " with attention MLA, whose " +
                                  std::to_string(model.heads()) +
                                  " heads each have a key and value; " +
                                  "leave kv_heads unset or give " + std::to_string(model.heads()));
    } else if (model.heads() % model.kv_heads() != 0) {
      errors->Add("kv_heads", std::to_string(model.kv_heads()) + " does not divide heads " +
                                  std::to_string(model.heads()));
    }
  }
  errors->InRange("vocab", model.vocab(), 1);
  switch (model.mlp()) {
    case proto::TransformerModel::MLP_UNSPECIFIED:
    case proto::TransformerModel::GELU:
    case proto::TransformerModel::SWIGLU:
      break;
    default:
      errors->Add("mlp", "unknown value " + std::to_string(model.mlp()) + "; valid: GELU, SWIGLU");
  }
  errors->InRange("seq_len", model.seq_len(), 1, int64_t{1} << 30);
  switch (model.norm()) {
    case proto::TransformerModel::NORM_UNSPECIFIED:
    case proto::TransformerModel::LAYERNORM:
    case proto::TransformerModel::RMSNORM:
      break;
    default:
      errors->Add("norm",
                  "unknown value " + std::to_string(model.norm()) + "; valid: LAYERNORM, RMSNORM");
  }
}

// Multi-head attention's own fields: head_dim, Q/K/V biases (SwiGLU layers) and q/k norms.
void CheckHeads(const proto::TransformerModel& model, ModelErrors* errors) {
  const bool mla = IsMla(model);
  if (mla && model.head_dim() != 0) {
    errors->Add("head_dim",
                "applies with attention MHA only (MLA's heads have qk_nope_head_dim, "
                "qk_rope_head_dim and v_head_dim); got " +
                    std::to_string(model.head_dim()));
  } else {
    errors->InRange("head_dim", model.head_dim(), 0);
  }
  if (model.qkv_bias() && model.mlp() == proto::TransformerModel::GELU) {
    errors->Add("qkv_bias",
                "GELU layers have biases on every linear layer already; drop it or "
                "give mlp SWIGLU");
  } else if (model.qkv_bias() && mla) {
    errors->Add("qkv_bias", "applies with attention MHA only");
  }
  if (model.qk_norm() && mla) errors->Add("qk_norm", "applies with attention MHA only");
}

// The attention kind and MLA's sizes, which apply with MLA only.
void CheckAttention(const proto::TransformerModel& model, ModelErrors* errors) {
  switch (model.attention()) {
    case proto::TransformerModel::ATTENTION_UNSPECIFIED:
    case proto::TransformerModel::MHA:
      break;
    case proto::TransformerModel::MLA:
      if (model.mlp() != proto::TransformerModel::SWIGLU) {
        errors->Add("attention",
                    "MLA comes with DeepSeek's layer (RMSNorm, no biases); give mlp SWIGLU");
      }
      break;
    default:
      errors->Add("attention",
                  "unknown value " + std::to_string(model.attention()) + "; valid: MHA, MLA");
  }
  for (const SizeField& f : {SizeField{"q_lora_rank", model.q_lora_rank(), 0},
                             SizeField{"kv_lora_rank", model.kv_lora_rank(), 1},
                             SizeField{"qk_nope_head_dim", model.qk_nope_head_dim(), 1},
                             SizeField{"qk_rope_head_dim", model.qk_rope_head_dim(), 0},
                             SizeField{"v_head_dim", model.v_head_dim(), 1}}) {
    if (IsMla(model)) {
      errors->InRange(f.field, f.value, f.minimum);
    } else if (f.value != 0) {
      errors->Add(f.field, "applies with attention MLA only; got " + std::to_string(f.value));
    }
  }
}

// The experts' fields, which apply with experts only.
void CheckExperts(const proto::TransformerModel& model, ModelErrors* errors) {
  constexpr int64_t kMaxExperts = int64_t{1} << 16;
  if (errors->InRange("experts", model.experts(), 0, kMaxExperts) && model.experts() > 0) {
    if (errors->InRange("experts_per_token", model.experts_per_token(), 1) &&
        model.experts_per_token() > model.experts()) {
      errors->Add("experts_per_token", std::to_string(model.experts_per_token()) + " exceeds the " +
                                           std::to_string(model.experts()) +
                                           " experts; valid: 1 to " +
                                           std::to_string(model.experts()));
    }
    errors->InRange("shared_experts", model.shared_experts(), 0, kMaxExperts);
    errors->InRange("expert_ffn_hidden", model.expert_ffn_hidden(), 0);
    if (errors->InRange("first_dense_layers", model.first_dense_layers(), 0, 100'000) &&
        model.layers() >= 1 && model.first_dense_layers() >= model.layers()) {
      errors->Add("first_dense_layers", std::to_string(model.first_dense_layers()) +
                                            " leaves no MoE layer of the " +
                                            std::to_string(model.layers()) + "; valid: 0 to " +
                                            std::to_string(model.layers() - 1));
    }
  } else if (model.experts() == 0) {
    for (const SizeField& f : {SizeField{"experts_per_token", model.experts_per_token(), 0},
                               SizeField{"shared_experts", model.shared_experts(), 0},
                               SizeField{"expert_ffn_hidden", model.expert_ffn_hidden(), 0},
                               SizeField{"first_dense_layers", model.first_dense_layers(), 0}}) {
      if (f.value != 0) {
        errors->Add(f.field,
                    "applies with experts only (a dense model); got " + std::to_string(f.value));
      }
    }
    if (model.router_bias()) {
      errors->Add("router_bias", "applies with experts only (a dense model)");
    }
  }
}

// Parameter counts are 64-bit: a bound on them (every matrix at the widest of its sizes) must
// stay well inside. REQUIRES: the sizes passed the other checks.
void CheckParameterBound(const proto::TransformerModel& model, ModelErrors* errors) {
  const double h = static_cast<double>(model.hidden());
  const double f = static_cast<double>(std::max(model.ffn_hidden(), model.expert_ffn_hidden()));
  const double heads = static_cast<double>(model.heads());
  const double width =
      std::max({h, heads * static_cast<double>(model.head_dim()),
                heads * static_cast<double>(model.qk_nope_head_dim() + model.qk_rope_head_dim()),
                heads * static_cast<double>(model.v_head_dim()),
                static_cast<double>(model.q_lora_rank() + model.kv_lora_rank())});
  const double experts = static_cast<double>(model.experts()) + model.shared_experts() + 1;
  const double bound = static_cast<double>(model.layers()) *
                           (8 * width * (h + width) + experts * 3 * h * (f > 0 ? f : 4 * h)) +
                       2 * h * (static_cast<double>(model.vocab()) + model.seq_len());
  constexpr double kMaxParameters = 1152921504606846976.0;  // 2^60
  if (bound > kMaxParameters) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "the model's sizes allow up to %.2g parameters; counts are kept up to 2^60",
                  bound);
    errors->Add(model.experts() > 0 ? "experts" : "layers", text);
  }
}

// The spec of a checked model, with its defaults filled in.
TransformerSpec SpecOf(const proto::TransformerModel& model, const std::string& name) {
  TransformerSpec spec;
  spec.name = name;
  spec.layers = model.layers();
  spec.hidden = model.hidden();
  spec.ffn_hidden = model.ffn_hidden() > 0 ? model.ffn_hidden() : 4 * model.hidden();
  spec.heads = model.heads();
  spec.kv_heads = model.kv_heads() > 0 ? model.kv_heads() : model.heads();
  spec.vocab = model.vocab();
  spec.tied_embeddings = model.tied_embeddings();
  spec.seq_len = model.seq_len();
  spec.swiglu = model.mlp() == proto::TransformerModel::SWIGLU;
  spec.rmsnorm = model.norm() == proto::TransformerModel::RMSNORM;
  spec.mla = IsMla(model);
  spec.head_dim = spec.mla ? 0 : model.head_dim() > 0 ? model.head_dim() : spec.hidden / spec.heads;
  spec.qkv_bias = model.qkv_bias();
  spec.qk_norm = model.qk_norm();
  spec.q_lora_rank = model.q_lora_rank();
  spec.kv_lora_rank = model.kv_lora_rank();
  spec.qk_nope_head_dim = model.qk_nope_head_dim();
  spec.qk_rope_head_dim = model.qk_rope_head_dim();
  spec.v_head_dim = model.v_head_dim();
  spec.experts = model.experts();
  spec.experts_per_token = model.experts_per_token();
  spec.shared_experts = model.shared_experts();
  spec.expert_ffn_hidden = model.experts() == 0            ? 0
                           : model.expert_ffn_hidden() > 0 ? model.expert_ffn_hidden()
                                                           : spec.ffn_hidden;
  spec.first_dense_layers = model.first_dense_layers();
  spec.router_bias = model.router_bias();
  spec.mtp_layers = model.mtp_layers();
  return spec;
}

}  // namespace

Status TransformerFromProto(const proto::TransformerModel& model, const ConfigLocations& locations,
                            TransformerSpec* spec) {
  ModelErrors errors(locations);
  CheckRequired(model, &errors);
  CheckShape(model, &errors);
  CheckHeads(model, &errors);
  CheckAttention(model, &errors);
  CheckExperts(model, &errors);
  if (errors.empty()) CheckParameterBound(model, &errors);
  RETURN_IF_ERROR(errors.ToStatus());
  *spec = SpecOf(model, model.name().empty() ? locations.Where("name") : model.name());
  return Status();
}

}  // namespace ppsim
