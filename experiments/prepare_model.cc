// PrepareRun's model phase and the model's pieces other commands use (experiments/run_phases.h).
#include <algorithm>

#include "base/files.h"
#include "base/names.h"
#include "config/config_file.h"
#include "experiments/run_phases.h"
#include "interop/hf_config.h"
#include "platforms/cluster.h"
#include "platforms/cluster.pb.h"

namespace ppsim {

namespace {
Status LoadModelAsGiven(const RunSpec& spec, TransformerSpec* model) {
  // A preset that does not load (a broken file in this build) must not pass for an unknown name.
  RETURN_IF_ERROR(TransformerPresetsStatus());
  if (spec.model_spec != nullptr) {
    *model = *spec.model_spec;
    return Status();
  }
  if (const TransformerSpec* preset = FindTransformerPreset(spec.model)) {
    *model = *preset;
    return Status();
  }
  if (spec.model.find('.') == std::string::npos) {
    std::vector<std::string> names;
    for (const TransformerSpec& preset : TransformerPresets()) names.push_back(preset.name);
    return spec.where->Invalid("model", UnknownName("model", spec.model, names,
                                                    "or a model file (.textproto, .json, .yaml)"));
  }
  // A Hugging Face config.json is told by its content (interop/hf_config.h), whatever its name;
  // a file that cannot be read gets ReadConfigFile's message.
  if (std::string text;
      ReadFile(spec.model, &text, kMaxConfigBytes, "model").ok() && LooksLikeHfConfig(text)) {
    return ReadHfConfig(text, spec.model, model);
  }
  proto::TransformerModel message;
  ConfigLocations locations;
  RETURN_IF_ERROR(ReadConfigFile(spec.model, &message, &locations));
  RETURN_IF_ERROR(TransformerFromProto(message, locations, model));
  if (model->name.empty()) model->name = spec.model;
  return Status();
}
}  // namespace

Status LoadModel(const RunSpec& spec, TransformerSpec* model) {
  RETURN_IF_ERROR(LoadModelAsGiven(spec, model));
  if (spec.mtp_layers >= 0) model->mtp_layers = spec.mtp_layers;
  return Status();
}

Status BuildModelStages(const RunSpec& spec, const Schedule& schedule,
                        std::vector<StageModel>* stages, TransformerSpec* model,
                        TrainingSetup* setup) {
  RETURN_IF_ERROR(LoadModel(spec, model));
  *setup = spec.training;
  if (setup->seq_len == 0) setup->seq_len = model->seq_len;
  RETURN_IF_ERROR(CheckTrainingSetup(*model, *setup, *spec.where));
  stages->clear();
  for (const Pipeline& pipeline : schedule.AllPipelines()) {
    std::vector<int32_t> layers;
    RETURN_IF_ERROR(SplitLayers(*model, pipeline.last_stage - pipeline.first_stage + 1,
                                spec.layer_split, *spec.where, &layers));
    for (const StageModel& stage : BuildStageModels(*model, *setup, layers)) {
      stages->push_back(stage);
    }
  }
  return Status();
}

double PeakFlopsPerS(const PlatformSpec& platform, Dtype dtype) {
  return IsFp8(dtype) ? platform.gpu.dense_fp8_flops_per_s : platform.gpu.dense_bf16_flops_per_s;
}

// The presets' GPUs that run MXFP8 (gpu.mxfp8), for messages: "B200, GB200, GB300".
std::string Mxfp8Gpus() {
  std::vector<std::string> names;
  for (const ClusterPreset& preset : AllClusterPresets()) {
    proto::Cluster cluster;
    if (!ReadClusterPreset(preset, &cluster).ok() || !cluster.gpu().mxfp8()) continue;
    if (std::find(names.begin(), names.end(), cluster.gpu().name()) == names.end()) {
      names.push_back(cluster.gpu().name());
    }
  }
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

Status CheckDtypeOnGpu(const PlatformSpec& platform, Dtype dtype, const Locator& where) {
  if (dtype == Dtype::kMxfp8 && !platform.gpu.mxfp8) {
    return where.Invalid("dtype", "mxfp8 needs a Blackwell GPU (MXFP8 tensor cores); " +
                                      platform.gpu.name + " of " + platform.name +
                                      " has none (gpu.mxfp8); GPUs that do: " + Mxfp8Gpus() +
                                      "; use fp8 or bf16");
  }
  if (PeakFlopsPerS(platform, dtype) > 0) return Status();
  return where.Invalid("dtype", std::string(DtypeName(dtype)) +
                                    " needs a GPU with that "
                                    "precision; " +
                                    platform.gpu.name + " of " + platform.name +
                                    " has no peak for it (gpu.dense_fp8); use bf16 or " +
                                    where.Name("set") + " gpu.dense_fp8=...");
}

// TE's userbuffers give the 'pipeline' and 'bulk' overlaps 16 SMs (num_sm in TE's
// initialize_ub defaults, models/measured/overheads.csv "te-ub").
constexpr int32_t kTpOverlapSms = 16;

GpuModel GpuModelOf(const PlatformSpec& platform, const RunSpec& spec) {
  const Dtype dtype = spec.training.dtype;
  GpuModel gpu;
  gpu.matmul_flops_per_s = PeakFlopsPerS(platform, dtype);
  gpu.attention_flops_per_s = platform.gpu.dense_bf16_flops_per_s;
  gpu.sms = platform.gpu.sms;
  gpu.matmul_efficiency =
      IsFp8(dtype) ? platform.gpu.matmul_efficiency_fp8 : platform.gpu.matmul_efficiency;
  gpu.matmul_16bit_efficiency = platform.gpu.matmul_efficiency;
  if (spec.tp_comm_overlap && gpu.sms > kTpOverlapSms) {
    gpu.tp_overlapped_sm_share = static_cast<double>(gpu.sms - kTpOverlapSms) / gpu.sms;
  }
  gpu.attention_efficiency = platform.gpu.attention_efficiency;
  gpu.memory_bytes_per_s = platform.gpu.memory_bandwidth_bytes_per_s;
  gpu.memory_efficiency = platform.gpu.memory_efficiency;
  return gpu;
}

std::vector<PassSeconds> ModelStageSeconds(const RunSpec& spec, const TransformerSpec& model,
                                           const TrainingSetup& setup, const PlatformSpec& platform,
                                           const std::vector<StageModel>& stages) {
  return StagePassSeconds(model, setup, stages, GpuModelOf(platform, spec), spec.efficiency);
}

double ModelFlopsPerIteration(const std::vector<StageModel>& stages, const Schedule& schedule,
                              int32_t tp, int32_t dp, bool hardware) {
  const std::vector<Pipeline> pipelines = schedule.AllPipelines();
  double flops = 0;
  for (size_t stage = 0; stage < stages.size(); ++stage) {
    // The pipelines cover every stage.
    Pipeline pipeline;
    for (const Pipeline& p : pipelines) {
      if (static_cast<int32_t>(stage) >= p.first_stage &&
          static_cast<int32_t>(stage) <= p.last_stage) {
        pipeline = p;
        break;
      }
    }
    const int32_t microbatches = pipeline.last_microbatch - pipeline.first_microbatch + 1;
    const StageModel& m = stages[stage];
    const double per_microbatch =
        hardware ? m.forward_flops + m.backward_input_flops + m.backward_weight_flops
                 : 3 * m.forward_flops;
    flops += per_microbatch * microbatches * tp * dp;
  }
  return flops;
}

Status PrepareModel(PreparedRun* run) {
  const RunSpec& spec = run->spec;
  const Locator& where = *spec.where;
  if (!spec.model.empty() && !spec.profile_file.empty()) {
    return where.Invalid(
        "profile", "give " + where.Name("profile") + " or " + where.Name("model") + ", not both");
  }
  if (spec.model.empty()) return Status();
  // The model's own checks (--tp divides the heads, ...) come before the platform's (--tp fits in
  // a node).
  RETURN_IF_ERROR(
      BuildModelStages(spec, run->schedule, &run->stages, &run->transformer, &run->setup));
  const int32_t gpus = spec.training.GpusPerRank();
  const int32_t dp = spec.training.layout.dp;
  run->model = run->transformer.name;
  run->model_flops = ModelFlopsPerIteration(run->stages, run->schedule, gpus, dp);
  if (spec.training.recompute != Recompute::kNone) {
    run->hardware_flops =
        ModelFlopsPerIteration(run->stages, run->schedule, gpus, dp, /*hardware=*/true);
  }
  run->seq_len = run->setup.seq_len;
  // The model's layers: a last stage's MTP modules' layers are not among them.
  for (const StageModel& stage : run->stages) {
    run->layers_per_stage.push_back(stage.layers -
                                    (stage.lm_head ? run->transformer.mtp_layers : 0));
  }
  return Status();
}

}  // namespace ppsim
