#include "experiments/megatron_request.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <map>

#include "config/config_values.h"
#include "experiments/request.h"
#include "interop/megatron_args.h"
#include "platforms/cluster.h"

namespace ppsim {
namespace {

// The request's places, but a field the Megatron arguments set is named by its argument.
class MegatronLocator : public Locator {
 public:
  MegatronLocator(std::shared_ptr<const Locator> inner, std::map<std::string, std::string> flags)
      : inner_(std::move(inner)), flags_(std::move(flags)) {}
  std::string Where(std::string_view field) const override {
    const auto it = flags_.find(std::string(field));
    if (it == flags_.end()) return inner_->Where(field);
    return inner_->Where("megatron") + ": " + it->second + " (ppsim's " + inner_->Name(field) + ")";
  }
  std::string Name(std::string_view field) const override { return inner_->Name(field); }

 private:
  std::shared_ptr<const Locator> inner_;
  std::map<std::string, std::string> flags_;
};

bool Gave(const proto::RunConfig& config, const std::string& field) {
  const google::protobuf::FieldDescriptor* f = config.GetDescriptor()->FindFieldByName(field);
  const google::protobuf::Reflection* reflection = config.GetReflection();
  return f->is_repeated() ? reflection->FieldSize(config, f) > 0 : reflection->HasField(config, f);
}

// The GPUs of one pipeline, tp x pp x cp, as the request now gives them (the arguments' degrees or
// the request's own).
int64_t PipelineGpus(const proto::RunConfig& c) {
  return int64_t{c.has_tp() ? c.tp() : 1} * (c.has_pp() ? c.pp() : 1) * (c.has_cp() ? c.cp() : 1);
}

// Megatron's data-parallel size: the platform's GPUs over one pipeline's.
Status DataParallel(const proto::RunConfig& c, const Locator& where, int64_t per_pipeline,
                    int64_t* dp, std::string* note) {
  RunSpec scratch;
  RETURN_IF_ERROR(ResolvePlatform(c, where, {}, &scratch));
  PlatformSpec cluster;
  RETURN_IF_ERROR(LoadCluster(scratch.platform, where, &cluster));
  const int64_t gpus = int64_t{cluster.gpus_per_node} * cluster.num_nodes;
  if (per_pipeline < 1) return Status();  // ResolveSchedule reports the bad --pp
  if (gpus == 0) {
    return where.Invalid("megatron", cluster.name + " has as many GPUs as a run needs: give " +
                                         where.Name("dp") + " for the data-parallel size");
  }
  if (gpus % per_pipeline != 0) {
    return where.Invalid(
        "megatron", "the " + std::to_string(gpus) + " GPUs of " + cluster.name +
                        " are not a multiple of tp x pp x cp = " + std::to_string(per_pipeline) +
                        " (one pipeline); give " + where.Name("nodes") + " or " + where.Name("dp"));
  }
  *dp = gpus / per_pipeline;
  *note = "world size " + std::to_string(gpus) + " GPUs of " + cluster.name + ": dp " +
          std::to_string(*dp) + " = " + std::to_string(gpus) + " / (tp x pp x cp " +
          std::to_string(per_pipeline) + ")";
  return Status();
}

}  // namespace

Status ApplyMegatron(const proto::RunConfig& config, std::shared_ptr<const Locator> where,
                     const std::string& directory, MegatronRequest* out) {
  *out = MegatronRequest();
  std::string text = config.megatron();
  if (text.starts_with('@') && text.size() > 1 && text[1] != '/') {
    text = "@" + directory + text.substr(1);
  }
  if (text.starts_with('@')) out->file = text.substr(1);
  MegatronRun run;
  MegatronDegrees degrees;
  if (config.has_tp() && config.tp() > 0) degrees.tp = config.tp();
  if (config.has_pp() && config.pp() > 0) degrees.pp = config.pp();
  if (config.has_cp() && config.cp() > 0) degrees.cp = config.cp();
  if (config.has_ep() && config.ep() > 0) degrees.ep = config.ep();
  RETURN_IF_ERROR(ReadMegatronArgs(text, where->Where("megatron"), &run, degrees));
  proto::RunConfig& c = out->config;
  std::map<std::string, std::string> flags;
  for (const MegatronSetting& s : run.settings) {
    RETURN_IF_ERROR(
        SetFieldFromText(s.field, s.value, where->Where("megatron") + ": " + s.flag, &c));
    if (!Gave(config, s.field)) flags[s.field] = s.flag;
  }
  out->notes = run.notes;
  if (config.model().empty()) {
    c.set_model("megatron");
    out->model = std::make_shared<TransformerSpec>(run.model);
  } else {
    out->notes.push_back(where->Name("model") + " " + config.model() +
                         " replaces the model of the Megatron-LM arguments");
  }
  c.MergeFrom(config);  // the request's own fields win
  if (c.sequence_parallel() && (!c.has_tp() || c.tp() <= 1) && !config.sequence_parallel()) {
    c.clear_sequence_parallel();
    out->notes.push_back(
        "--sequence-parallel: off at tensor-parallel size 1, as Megatron turns it off");
  }
  if (!config.has_dp()) {
    int64_t dp = 0;
    std::string note;
    RETURN_IF_ERROR(DataParallel(c, MegatronLocator(where, flags), PipelineGpus(c), &dp, &note));
    flags["dp"] = "the world size / (tp x pp x cp)";
    if (dp > 0) {
      c.set_dp(static_cast<int32_t>(dp));
      out->notes.push_back(note);
    }
  }
  if (run.overlap_grad_reduce && config.grad_bucket().empty()) {
    const int64_t members = int64_t{c.dp()} * std::max(1, c.cp());
    if (members < 2) {
      out->notes.push_back("--overlap-grad-reduce: one data-parallel replica, nothing to reduce");
    } else {
      // distributed_data_parallel.py: bucket_size = max(40000000, 1000000 * dp_group.size()).
      const int64_t params = run.bucket_params > 0
                                 ? run.bucket_params
                                 : std::max<int64_t>(40'000'000, 1'000'000 * members);
      c.set_grad_bucket(std::to_string(params * run.grad_bytes_per_param));
      flags["grad_bucket"] = "--overlap-grad-reduce";
      out->notes.push_back("--overlap-grad-reduce: gradient buckets of " + std::to_string(params) +
                           " parameters");
    }
  }
  out->where = std::make_shared<MegatronLocator>(where, std::move(flags));
  return Status();
}

}  // namespace ppsim
