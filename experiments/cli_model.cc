// `ppsim model`: the analytic model's per-stage costs without simulating.
#include <cstdio>
#include <string>
#include <vector>

#include "experiments/cli_flags.h"
#include "experiments/report.h"
#include "models/units.h"

namespace ppsim::cli {
namespace {

po::options_description ModelOptions() {
  po::options_description d("ppsim model options", 100);
  AddModelOptions(d);
  AddValue(d, "pp", "P", "pipeline ranks (default 1)");
  AddValue(d, "stages-per-rank", "V", "virtual stages per rank (default 1)");
  AddValue(d, "microbatches", "M", "microbatches per iteration, for the totals (default 1)");
  AddValue(d, "platform", "NAME|FILE", "platform whose GPU runs it (default h100-node)");
  AddRepeated(d, "set", "PATH=VALUE", "override a cluster field, e.g. --set gpu.dense_bf16=1PFLOP/s");
  AddValue(d, "tp", "T", "tensor-parallel degree (default 1)");
  AddValue(d, "dp", "D", "data-parallel degree, for ZeRO-1 (default 1)");
  AddValue(d, "format", "NAME", "table (default) or json");
  d.add_options()("list", "list the model presets");
  d.add_options()("help", "show these options");
  return d;
}

}  // namespace

// `ppsim model`: the analytic model's per-stage costs without simulating.
int ModelCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = ModelOptions();
  po::variables_map vm;
  Status status = ParseOptions("model", args, options, &vm);
  if (!status.ok()) return Fail(err, status);
  if (vm.count("help")) {
    out << "usage: ppsim model --model NAME|FILE [--pp P --stages-per-rank V ...]\n\n" << options;
    return kExitOk;
  }
  if (vm.count("list")) {
    for (const TransformerSpec& m : TransformerPresets()) {
      char line[256];
      std::snprintf(line, sizeof(line),
                    "%-16s %8.2fB params  %3d layers  h %6lld  ffn %6lld  heads %3d/%-3d  vocab %6lld  "
                    "seq %lld%s\n",
                    m.name.c_str(), m.TotalParameters() / 1e9, m.layers,
                    static_cast<long long>(m.hidden), static_cast<long long>(m.ffn_hidden), m.heads,
                    m.kv_heads, static_cast<long long>(m.vocab), static_cast<long long>(m.seq_len),
                    m.swiglu ? "  SwiGLU" : "");
      out << line;
    }
    return kExitOk;
  }
  if (!vm.count("model")) {
    return Fail(err, Status::InvalidInput("--model: required; give a preset (" +
                                          TransformerPresetNames() + ") or a model file"));
  }
  RunSpec spec;
  status = ReadPlatformChoice(vm, &spec);
  if (status.ok()) status = ReadModelChoice(vm, &spec);
  int32_t p = 1, v = 1, m = 1;
  auto count = [&](const char* flag, int32_t* value) {
    if (status.ok() && vm.count(flag)) {
      status = ParseCount((std::string("--") + flag).c_str(), Get(vm, flag), value);
    }
  };
  count("pp", &p);
  count("stages-per-rank", &v);
  count("microbatches", &m);
  if (!status.ok()) return Fail(err, status);
  const std::string format = vm.count("format") ? Get(vm, "format") : "table";
  if (format != "table" && format != "json") {
    return Usage(err, "--format: unknown format '" + format + "'; valid: table, json");
  }
  PlatformSpec platform;
  status = LoadCluster(spec.platform, &platform);
  if (status.ok()) status = CheckDtypeOnGpu(platform, spec.training.dtype);
  if (!status.ok()) return Fail(err, status);
  Schedule shape;  // One pipeline of p * v stages; no order is needed.
  shape.num_ranks = p;
  shape.num_stages = p * v;
  shape.num_microbatches = m;
  std::vector<StageModel> stages;
  TransformerSpec model;
  status = BuildModelStages(spec, shape, &stages, &model);
  if (!status.ok()) return Fail(err, status);
  const double flops_per_s = PeakFlopsPerS(platform, spec.training.dtype) * spec.efficiency;
  const double iteration_flops = ModelFlopsPerIteration(stages, shape, spec.training.tp, 1);
  const std::string definition =
      "MFU = model FLOPs / (iteration time x GPUs x peak FLOP/s); model FLOPs = 3 x forward FLOPs "
      "(matmuls and attention) per microbatch and stage, without recompute";
  if (format == "json") {
    out << "{\n  \"model\": \"" << model.name << "\",\n  \"parameters\": "
        << model.TotalParameters() << ",\n  \"gpu\": \"" << platform.gpu.name
        << "\",\n  \"flops_per_s\": " << FormatNumber(flops_per_s)
        << ",\n  \"model_flops_per_iteration\": " << FormatNumber(iteration_flops)
        << ",\n  \"mfu_definition\": \"" << definition << "\",\n  \"stages\": [";
    for (size_t k = 0; k < stages.size(); ++k) {
      const StageModel& st = stages[k];
      out << (k ? ",\n" : "\n") << "    {\"stage\": " << k << ", \"layers\": " << st.layers
          << ", \"parameters\": " << st.parameters
          << ", \"f_s\": " << FormatNumber(st.forward_flops / flops_per_s)
          << ", \"i_s\": " << FormatNumber(st.backward_input_flops / flops_per_s)
          << ", \"w_s\": " << FormatNumber(st.backward_weight_flops / flops_per_s)
          << ", \"activation_bytes\": " << st.activation_bytes
          << ", \"activation_w_bytes\": " << st.activation_w_bytes
          << ", \"message_bytes\": " << st.message_bytes
          << ", \"static_bytes\": " << st.static_bytes << "}";
    }
    out << "\n  ]\n}\n";
    return kExitOk;
  }
  out << model.name << ": " << HumanCount(static_cast<double>(model.TotalParameters()))
      << " parameters; "
      << p * v << " stages on " << platform.gpu.name << " at " << HumanFlops(flops_per_s) << "/s"
      << " (" << FormatNumber(spec.efficiency) << " of peak); per GPU of the tensor-parallel group\n\n";
  std::vector<std::vector<std::string>> rows = {{"stage", "layers", "parameters", "F", "I", "W",
                                                 "activation", "activation W", "message",
                                                 "static"}};
  for (size_t k = 0; k < stages.size(); ++k) {
    const StageModel& st = stages[k];
    rows.push_back({std::to_string(k) + (st.embedding ? " (emb)" : "") + (st.lm_head ? " (head)" : ""),
                    std::to_string(st.layers), HumanCount(static_cast<double>(st.parameters)),
                    HumanDuration(st.forward_flops / flops_per_s),
                    HumanDuration(st.backward_input_flops / flops_per_s),
                    HumanDuration(st.backward_weight_flops / flops_per_s),
                    HumanBytes(static_cast<double>(st.activation_bytes)),
                    HumanBytes(static_cast<double>(st.activation_w_bytes)),
                    HumanBytes(static_cast<double>(st.message_bytes)),
                    HumanBytes(static_cast<double>(st.static_bytes))});
  }
  out << FormatColumns(rows) << "\nmodel FLOPs per iteration (" << m << " microbatches): "
      << HumanFlops(iteration_flops) << "\n"
      << definition << "\n";
  return kExitOk;
}

}  // namespace ppsim::cli
