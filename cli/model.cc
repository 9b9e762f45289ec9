// `ppsim model`: the analytic model's per-stage costs without simulating.
#include <algorithm>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/names.h"
#include "base/numbers.h"
#include "cli/commands.h"
#include "base/flag_locator.h"
#include "cli/options.h"
#include "config/units.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run_output.h"
#include "experiments/run_phases.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kDefinition =
    "MFU = model FLOPs / (iteration time x GPUs x peak FLOP/s); model FLOPs = 3 x forward FLOPs "
    "(matmuls and attention) per microbatch and stage, without recompute";

po::options_description ModelOptions() {
  po::options_description d = RunConfigOptions(
      {proto::Flag::SCHEDULE, proto::Flag::MODEL, proto::Flag::CLUSTER, proto::Flag::PARALLELISM},
      {"pp", "stages_per_rank", "microbatches", "model", "seq_len", "microbatch_size", "dtype",
       "sequence_parallel", "recompute", "flash_attention", "zero", "layers_per_stage",
       "embedding_as_layer", "loss_as_layer", "efficiency", "platform", "set", "tp", "dp", "cp",
       "ep"});
  po::options_description own("output", 100);
  own.add_options()("format", po::value<std::string>()->value_name("NAME"),
                    "table (default) or json")("list", "list the model presets");
  d.add(own);
  return d;
}

// "8 routed experts (top-2) of ffn 14336, 1 shared; MLA" for a MoE model, "" for a dense one.
std::string MoeText(const TransformerSpec& m) {
  std::string text;
  if (m.moe()) {
    text = std::to_string(m.experts) + " routed experts (top-" +
           std::to_string(m.experts_per_token) + ") of ffn " +
           std::to_string(m.expert_ffn_hidden);
    if (m.shared_experts > 0) text += ", " + std::to_string(m.shared_experts) + " shared";
    if (m.first_dense_layers > 0) {
      text += "; first " + std::to_string(m.first_dense_layers) + " layers dense";
    }
  }
  if (m.mla) text += std::string(text.empty() ? "" : "; ") + "MLA";
  return text;
}

void ListPresets(std::ostream& out) {
  for (const TransformerSpec& m : TransformerPresets()) {
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%-16s %8.2fB params  %3d layers  h %6lld  ffn %6lld  heads %3d/%-3d  vocab %6lld  "
                  "seq %lld%s",
                  m.name.c_str(), m.TotalParameters() / 1e9, m.layers,
                  static_cast<long long>(m.hidden), static_cast<long long>(m.ffn_hidden), m.heads,
                  m.kv_heads, static_cast<long long>(m.vocab), static_cast<long long>(m.seq_len),
                  m.swiglu ? "  SwiGLU" : "");
    out << line;
    if (m.moe() || m.mla) {
      std::snprintf(line, sizeof(line), "  activated %.2fB (%.2fB without embedding)  ",
                    m.ActivatedParameters() / 1e9, m.ActivatedParametersWithoutEmbedding() / 1e9);
      out << (m.moe() ? line : "  ") << MoeText(m);
    }
    out << "\n";
  }
}

// "12.9B activated per token (12.7B without the input embedding); 8 routed experts (top-2) of ffn
// 14336; --ep 4: 2 experts per GPU per MoE layer" ("" for a dense model).
std::string ActivatedText(const TransformerSpec& m, const TrainingSetup& setup) {
  if (!m.moe()) return "";
  return HumanCount(static_cast<double>(m.ActivatedParameters())) + " activated per token (" +
         HumanCount(static_cast<double>(m.ActivatedParametersWithoutEmbedding())) +
         " without the input embedding); " + MoeText(m) + "; --ep " +
         std::to_string(setup.layout.ep) + ": " + std::to_string(m.experts / setup.layout.ep) +
         (m.experts / setup.layout.ep == 1 ? " expert" : " experts") + " per GPU per MoE layer\n";
}

// The optimizer step at the GPU's HBM bandwidth (0 when the platform lists none).
double OptimizerSeconds(const StageModel& stage, const PlatformSpec& platform) {
  const double hbm = platform.gpu.memory_bandwidth_bytes_per_s;
  return hbm > 0 ? static_cast<double>(stage.optimizer_step_bytes) / hbm : 0;
}

// "18 bytes per parameter: 6 on every GPU + 12 sharded by --zero 1 (not sharded)".
std::string ParamBytesText(const TrainingSetup& setup) {
  const ParamBytes bytes = RecipeBytes(setup);
  return std::to_string(bytes.replicated + bytes.sharded) +
         " bytes per parameter: " + std::to_string(bytes.replicated) + " on every GPU + " +
         std::to_string(bytes.sharded) +
         (setup.zero_stage == 1
              ? " sharded over dp " + std::to_string(setup.layout.dp) + " (--zero 1)"
              : " for the optimizer (shard it with --zero 1)");
}

// The ops of a layer, the embedding and the head, timed on the GPU (the op model's breakdown).
struct OpGroup {
  const char* name;
  std::vector<ModelOp> ops;
};

// A MoE model's layers are "dense layer" (when it has any) and "moe layer", with each op's part.
std::vector<OpGroup> OpGroups(const TransformerSpec& model, const TrainingSetup& setup) {
  std::vector<OpGroup> groups;
  if (!model.moe()) {
    groups.push_back({"layer", LayerOps(model, setup)});
  } else {
    if (model.DenseLayers() > 0) groups.push_back({"dense layer", LayerOps(model, setup)});
    groups.push_back({"moe layer", LayerOps(model, setup, LayerKind::kMoe)});
  }
  groups.push_back({"embedding", EmbeddingOps(model, setup)});
  groups.push_back({"head", HeadOps(model, setup)});
  return groups;
}

// "A100 SXM4 80GB: 108 SMs; matmul 0.8, attention 0.6 of 312 TFLOP/s; memory 0.85 of 2.04 TB/s"
std::string GpuText(const PlatformSpec& platform, const GpuModel& gpu, double efficiency) {
  const GpuSpec& g = platform.gpu;
  if (efficiency > 0) {
    return g.name + ": model FLOPs at " + FormatNumber(efficiency) + " of " +
           HumanFlops(gpu.matmul_flops_per_s) + "/s (--efficiency; element-wise work not counted)";
  }
  return g.name + ": " + (g.sms > 0 ? std::to_string(g.sms) + " SMs (256x128 GEMM tiles)"
                                    : std::string("no wave quantization (gpu.sms unset)")) +
         "; matmul " + FormatNumber(g.matmul_efficiency) + " of " +
         HumanFlops(gpu.matmul_flops_per_s) + "/s, attention " +
         FormatNumber(g.attention_efficiency) + " of " + HumanFlops(gpu.attention_flops_per_s) +
         "/s, element-wise " + FormatNumber(g.memory_efficiency) + " of " +
         HumanBytes(gpu.memory_bytes_per_s) + "/s";
}

std::string ModelJson(const TransformerSpec& model, const PlatformSpec& platform,
                      const TrainingSetup& setup, const GpuModel& gpu, double efficiency,
                      double iteration_flops, const std::vector<StageModel>& stages,
                      const std::vector<PassSeconds>& seconds) {
  nlohmann::ordered_json j;
  j["model"] = model.name;
  j["parameters"] = model.TotalParameters();
  if (model.moe()) {
    j["activated_parameters"] = model.ActivatedParameters();
    j["activated_parameters_without_embedding"] = model.ActivatedParametersWithoutEmbedding();
    j["experts"] = model.experts;
    j["experts_per_token"] = model.experts_per_token;
    j["shared_experts"] = model.shared_experts;
    j["ep"] = setup.layout.ep;
    j["experts_per_gpu"] = model.experts / setup.layout.ep;
  }
  if (!model.notes.empty()) j["model_notes"] = model.notes;
  j["gpu"] = platform.gpu.name;
  j["cost_model"] = efficiency > 0 ? "efficiency" : "ops";
  if (efficiency > 0) {
    j["flops_per_s"] = JsonNumber(gpu.matmul_flops_per_s * efficiency);
  } else {
    j["sms"] = platform.gpu.sms;
    j["matmul_flops_per_s"] = JsonNumber(gpu.matmul_flops_per_s * gpu.matmul_efficiency);
    j["attention_flops_per_s"] = JsonNumber(gpu.attention_flops_per_s * gpu.attention_efficiency);
    j["memory_bytes_per_s"] = JsonNumber(gpu.memory_bytes_per_s * gpu.memory_efficiency);
  }
  j["model_flops_per_iteration"] = JsonNumber(iteration_flops);
  j["mfu_definition"] = kDefinition;
  j["stages"] = nlohmann::ordered_json::array();
  for (size_t k = 0; k < stages.size(); ++k) {
    const StageModel& st = stages[k];
    nlohmann::ordered_json stage;
    stage["stage"] = k;
    stage["layers"] = st.layers;
    stage["parameters"] = st.parameters;
    stage["f_s"] = JsonNumber(seconds[k].forward_s);
    stage["i_s"] = JsonNumber(seconds[k].backward_input_s);
    stage["w_s"] = JsonNumber(seconds[k].backward_weight_s);
    stage["activation_bytes"] = st.activation_bytes;
    stage["activation_w_bytes"] = st.activation_w_bytes;
    stage["message_bytes"] = st.message_bytes;
    stage["static_bytes"] = st.static_bytes;
    stage["optimizer_s"] = JsonNumber(OptimizerSeconds(st, platform));
    if (model.moe()) {
      stage["moe_layers"] = st.moe_layers;
      stage["expert_parameters"] = st.expert_parameters;
      stage["expert_gradient_bytes"] = st.expert_gradient_bytes;
      stage["dispatch_bytes"] = st.dispatch_bytes;
      stage["combine_bytes"] = st.combine_bytes;
      const MoeLayerSeconds& p = seconds[k].moe_layer;
      stage["moe_layer_s"] = {{"forward_attention", JsonNumber(p.forward_attention_s)},
                              {"forward_mlp", JsonNumber(p.forward_mlp_s)},
                              {"input_attention", JsonNumber(p.input_attention_s)},
                              {"input_mlp", JsonNumber(p.input_mlp_s)},
                              {"weight_attention", JsonNumber(p.weight_attention_s)},
                              {"weight_mlp", JsonNumber(p.weight_mlp_s)}};
    }
    j["stages"].push_back(std::move(stage));
  }
  if (efficiency == 0) {
    nlohmann::ordered_json ops;
    for (const OpGroup& group : OpGroups(model, setup)) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const ModelOp& op : group.ops) {
        const OpTime time = TimeOp(op, gpu);
        nlohmann::ordered_json o;
        o["op"] = op.name;
        o["pass"] = OpPassName(op.pass);
        if (model.moe() && op.part != LayerPart::kNone) o["part"] = LayerPartName(op.part);
        o["kind"] = KernelKindName(op.kind);
        if (op.kind == KernelKind::kMatmul) {
          o["m"] = op.m;
          o["n"] = op.n;
          o["k"] = op.k;
          o["batch"] = op.batch;
          o["tile_utilization"] = JsonNumber(time.quantization);
        }
        o["flops"] = JsonNumber(op.flops);
        o["bytes"] = JsonNumber(op.bytes);
        o["time_s"] = JsonNumber(time.seconds);
        o["bound"] = time.memory_bound ? "memory" : "compute";
        list.push_back(std::move(o));
      }
      ops[group.name] = std::move(list);
    }
    j["ops"] = std::move(ops);
  }
  return FormatJsonPretty(j) + "\n";
}

std::string OpsTable(const TransformerSpec& model, const TrainingSetup& setup,
                     const GpuModel& gpu) {
  std::string out;
  for (const OpGroup& group : OpGroups(model, setup)) {
    std::vector<std::vector<std::string>> rows = {
        {group.name, "pass", "kind", "shape", "FLOPs", "bytes", "time", "bound"}};
    // A MoE model's layer ops show their part.
    const bool parts = model.moe() && !group.ops.empty() && group.ops[0].part != LayerPart::kNone;
    if (parts) rows[0].insert(rows[0].begin() + 2, "part");
    for (const ModelOp& op : group.ops) {
      const OpTime time = TimeOp(op, gpu);
      std::string shape;
      if (op.kind == KernelKind::kMatmul) {
        shape = (op.batch > 1 ? std::to_string(op.batch) + " x " : std::string()) +
                std::to_string(op.m) + "x" + std::to_string(op.n) + "x" + std::to_string(op.k) +
                " (tiles " + std::to_string(static_cast<int>(100 * time.quantization + 0.5)) +
                "% used)";
      }
      rows.push_back({op.name, std::string(OpPassName(op.pass)), std::string(KernelKindName(op.kind)),
                      shape, op.flops > 0 ? HumanFlops(op.flops) : "", HumanBytes(op.bytes),
                      HumanDuration(time.seconds), time.memory_bound ? "memory" : "compute"});
      if (parts) {
        rows.back().insert(rows.back().begin() + 2, std::string(LayerPartName(op.part)));
      }
    }
    out += "\n" + FormatColumns(rows);
  }
  return out;
}

std::string ModelTable(const TransformerSpec& model, const PlatformSpec& platform,
                       const TrainingSetup& setup, const GpuModel& gpu, double efficiency,
                       int32_t stage_count, int32_t microbatches, double iteration_flops,
                       const std::vector<StageModel>& stages,
                       const std::vector<PassSeconds>& seconds) {
  std::string out = model.name + ": " + HumanCount(static_cast<double>(model.TotalParameters())) +
                    " parameters; " + std::to_string(stage_count) + " stages; per GPU of the "
                    "tensor-parallel group, per microbatch of " +
                    std::to_string(setup.microbatch_size) + " x " + std::to_string(setup.seq_len) +
                    " tokens\n" + ActivatedText(model, setup) + GpuText(platform, gpu, efficiency) +
                    "\n";
  // What the model's source stated that ppsim ignores or does not model (a Hugging Face config).
  for (const std::string& note : model.notes) out += "model: " + note + "\n";
  out += "\n";
  std::vector<std::vector<std::string>> rows = {{"stage", "layers", "parameters", "F", "I", "W",
                                                 "activation", "activation W", "message",
                                                 "static", "optimizer"}};
  for (size_t k = 0; k < stages.size(); ++k) {
    const StageModel& st = stages[k];
    rows.push_back({std::to_string(k) + (st.embedding ? " (emb)" : "") + (st.lm_head ? " (head)" : ""),
                    std::to_string(st.layers), HumanCount(static_cast<double>(st.parameters)),
                    HumanDuration(seconds[k].forward_s),
                    HumanDuration(seconds[k].backward_input_s),
                    HumanDuration(seconds[k].backward_weight_s),
                    HumanBytes(static_cast<double>(st.activation_bytes)),
                    HumanBytes(static_cast<double>(st.activation_w_bytes)),
                    HumanBytes(static_cast<double>(st.message_bytes)),
                    HumanBytes(static_cast<double>(st.static_bytes)),
                    HumanDuration(OptimizerSeconds(st, platform))});
    if (model.moe()) {
      rows.back().insert(rows.back().begin() + 2, std::to_string(st.moe_layers));
      rows.back().insert(rows.back().begin() + 4,
                         HumanCount(static_cast<double>(st.expert_parameters)));
    }
  }
  if (model.moe()) {
    rows[0].insert(rows[0].begin() + 2, "MoE layers");
    rows[0].insert(rows[0].begin() + 4, "of them experts");
  }
  std::string moe_notes;
  if (model.moe()) {
    int64_t dispatch = 0, combine = 0;
    for (const StageModel& st : stages) {
      dispatch = std::max(dispatch, st.dispatch_bytes);
      combine = std::max(combine, st.combine_bytes);
    }
    const int64_t expert_shards =
        int64_t{setup.layout.dp} * setup.layout.tp * setup.layout.cp / setup.layout.ep;
    moe_notes = "experts: E/ep whole experts per GPU (expert tensor parallelism 1), their state " +
                std::string(setup.zero_stage == 1 ? "sharded over dp x tp x cp / ep = " +
                                                        std::to_string(expert_shards)
                                                  : "not sharded (--zero 0)") +
                "; all-to-all per MoE layer and GPU" +
                (setup.layout.ep > 1
                     ? ": dispatch " + HumanBytes(static_cast<double>(dispatch)) + ", combine " +
                           HumanBytes(static_cast<double>(combine)) + " (balanced routing)"
                     : ": none with --ep 1 (all experts local)") +
                "\n";
  }
  out += FormatColumns(rows) + "\n" + moe_notes + "static: " + ParamBytesText(setup) +
         "; optimizer: Adam's step at the HBM bandwidth\nmodel FLOPs per iteration (" +
         std::to_string(microbatches) + " microbatches): " + HumanFlops(iteration_flops) + "\n" +
         kDefinition + "\n";
  if (efficiency == 0) out += "\nops per microbatch (a stage's F, I, W sum them)\n" + OpsTable(model, setup, gpu);
  return out;
}

}  // namespace

int ModelCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = ModelOptions();
  ParsedArgs parsed;
  Status status = ParseArgs("model", args, options, 0, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << "usage: ppsim model --model NAME|FILE [--pp P --stages-per-rank V ...]\n"
           "       ppsim model --list\n\n" << options;
    return kExitOk;
  }
  if (parsed.values.count("list")) {
    if (status = TransformerPresetsStatus(); !status.ok()) return Fail(err, status);
    ListPresets(out);
    return kExitOk;
  }
  proto::RunConfig config;
  status = FillRunConfig(parsed.values, &config);
  if (!status.ok()) return Fail(err, status);
  const FlagLocator where;
  if (config.model().empty()) {
    return Fail(err, where.Invalid("model", "required; give a preset (" +
                                                TransformerPresetNames() + ") or a model file"));
  }
  RunSpec spec;
  spec.where = std::make_shared<FlagLocator>();
  status = ResolveModel(config, where, {}, &spec);
  if (status.ok()) status = ResolvePlatform(config, where, {}, &spec);
  const int32_t p = config.has_pp() ? config.pp() : 1;
  const int32_t v = config.has_stages_per_rank() ? config.stages_per_rank() : 1;
  const int32_t m = config.has_microbatches() ? config.microbatches() : 1;
  for (auto [field, value] : {std::pair{"pp", p}, {"stages_per_rank", v}, {"microbatches", m}}) {
    if (status.ok() && value < 1) {
      status = where.Invalid(field, "must be at least 1; got " + std::to_string(value));
    }
  }
  if (!status.ok()) return Fail(err, status);
  const std::string format =
      parsed.values.count("format") ? OptionText(parsed, "format") : "table";
  if (format != "table" && format != "json") {
    return Fail(err, Status::InvalidInput("--format: " +
                                          UnknownName("format", format, {"table", "json"})));
  }
  PlatformSpec platform;
  status = LoadCluster(spec.platform, where, &platform);
  if (status.ok()) status = CheckDtypeOnGpu(platform, spec.training.dtype, where);
  if (!status.ok()) return Fail(err, status);
  Schedule shape;  // One pipeline of p * v stages; no order is needed.
  shape.num_ranks = p;
  shape.num_stages = p * v;
  shape.num_microbatches = m;
  std::vector<StageModel> stages;
  TransformerSpec model;
  TrainingSetup setup;
  status = BuildModelStages(spec, shape, &stages, &model, &setup);
  if (!status.ok()) return Fail(err, status);
  const GpuModel gpu = GpuModelOf(platform, spec);
  const std::vector<PassSeconds> seconds = ModelStageSeconds(spec, model, setup, platform, stages);
  const double iteration_flops = ModelFlopsPerIteration(stages, shape, setup.GpusPerRank(), 1);
  out << (format == "json" ? ModelJson(model, platform, setup, gpu, spec.efficiency,
                                       iteration_flops, stages, seconds)
                           : ModelTable(model, platform, setup, gpu, spec.efficiency, p * v, m,
                                        iteration_flops, stages, seconds));
  return kExitOk;
}

}  // namespace ppsim::cli
