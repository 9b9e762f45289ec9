#include "experiments/framework_emit.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <span>

#include "base/names.h"
#include "experiments/run_command.h"

namespace ppsim {
namespace {

// The request fields each framework's import sets (experiments/megatron_request.cc with
// interop/megatron_args.cc, interop/torchtitan_toml.cc): the emitter writes them as the
// framework's arguments, or as ppsim flags where the framework cannot say them.
constexpr std::string_view kMegatronFields[] = {"model",
                                                "seq_len",
                                                "tp",
                                                "pp",
                                                "cp",
                                                "cp_comm_type",
                                                "cp_a2a_size",
                                                "mtp_layers",
                                                "ep",
                                                "dp",
                                                "schedule",
                                                "schedule_file",
                                                "stage_to_rank",
                                                "stages_per_rank",
                                                "microbatch_group_size",
                                                "p2p_mode",
                                                "sequence_parallel",
                                                "tp_comm_overlap",
                                                "zero",
                                                "dtype",
                                                "grad_dtype",
                                                "recompute",
                                                "microbatch_size",
                                                "global_batch",
                                                "microbatches",
                                                "flash_attention",
                                                "layers_per_stage",
                                                "embedding_as_layer",
                                                "loss_as_layer",
                                                "grad_bucket"};
constexpr std::string_view kTorchtitanFields[] = {"model",
                                                  "seq_len",
                                                  "tp",
                                                  "pp",
                                                  "ep",
                                                  "dp",
                                                  "schedule",
                                                  "schedule_file",
                                                  "stage_to_rank",
                                                  "stages_per_rank",
                                                  "microbatch_group_size",
                                                  "sequence_parallel",
                                                  "tp_comm_overlap",
                                                  "dtype",
                                                  "grad_dtype",
                                                  "bytes_per_param",
                                                  "recompute",
                                                  "microbatch_size",
                                                  "global_batch",
                                                  "microbatches",
                                                  "layers_per_stage",
                                                  "embedding_as_layer",
                                                  "loss_as_layer",
                                                  "zero",
                                                  "flash_attention"};
// Never beside an import: the imports themselves and what only shapes the output.
constexpr std::string_view kOutputFields[] = {
    "megatron", "torchtitan",   "emit",     "emit_file",          "format",
    "trace",    "chrome_trace", "timeline", "trace_microbatches", "fail_on_oom"};

void ClearFields(std::span<const std::string_view> fields, proto::RunConfig* config) {
  const google::protobuf::Descriptor* descriptor = config->GetDescriptor();
  for (std::string_view name : fields) {
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(std::string(name));
    if (field != nullptr) config->GetReflection()->ClearField(config, field);
  }
}

}  // namespace

Status ParseFramework(const std::string& where, std::string_view text, Framework* framework) {
  constexpr NamedValue<Framework> kNames[] = {{"megatron", Framework::kMegatron},
                                              {"torchtitan", Framework::kTorchtitan}};
  return ParseNamed(kNames, "framework", where, text, framework);
}

std::string_view FrameworkName(Framework framework) {
  return framework == Framework::kMegatron ? "megatron" : "torchtitan";
}

Status EmitLaunch(const PreparedRun& run, Framework framework, const std::string& schedule_csv_name,
                  FrameworkLaunch* launch) {
  *launch = FrameworkLaunch();
  launch->framework = framework;
  if (run.model.empty()) {
    return run.spec.where->Invalid("emit", "a framework's launch describes a model; give " +
                                               run.spec.where->Name("model") +
                                               " (a run of costs alone has none)");
  }
  // The request's own fields that the framework leaves to ppsim, as given.
  if (run.spec.request != nullptr) launch->ppsim_fields = *run.spec.request;
  ClearFields(kOutputFields, &launch->ppsim_fields);
  ClearFields(framework == Framework::kMegatron
                  ? std::span<const std::string_view>(kMegatronFields)
                  : std::span<const std::string_view>(kTorchtitanFields),
              &launch->ppsim_fields);
  launch->gpus = run.setup.layout.Gpus();
  if (framework == Framework::kMegatron) return EmitMegatron(run, launch);
  return EmitTorchtitan(run, schedule_csv_name, launch);
}

std::string ImportCommand(const FrameworkLaunch& launch, const std::string& file,
                          const Locator& flags) {
  proto::RunConfig config = launch.ppsim_fields;
  if (launch.framework == Framework::kMegatron) {
    config.set_megatron("@" + file);
  } else {
    config.set_torchtitan(file);
  }
  return RunCommandLine(config, flags);
}

}  // namespace ppsim
