#include "experiments/torchtitan_run.h"

#include "config/config_values.h"
#include "interop/torchtitan_toml.h"
#include "platforms/cluster.h"

namespace ppsim {
namespace {

// The GPUs the run's platform has (0 when it fixes none: the ideal platform).
Status WorldGpus(const proto::RunConfig& config, const Locator& where,
                 const ResolveOptions& options, int64_t* gpus) {
  // The cluster alone: the request's degrees (an --ep or --cp beside the file) need the file's
  // model, which is not read yet.
  proto::RunConfig cluster;
  cluster.set_platform(config.platform());
  if (config.has_nodes()) cluster.set_nodes(config.nodes());
  *cluster.mutable_set() = config.set();
  cluster.set_hosts(config.hosts());
  cluster.set_calibration(config.calibration());
  RunSpec scratch;
  RETURN_IF_ERROR(ResolvePlatform(cluster, where, options, &scratch));
  PlatformSpec platform;
  RETURN_IF_ERROR(LoadCluster(scratch.platform, where, &platform));
  *gpus = int64_t{platform.gpus_per_node} * platform.num_nodes;
  return Status();
}

// What the request gives itself replaces what the file derived together with it.
void DropReplaced(const proto::RunConfig& config, proto::RunConfig* from_file) {
  if (!config.schedule().empty() || !config.schedule_file().empty()) {
    from_file->clear_schedule();
    from_file->clear_schedule_file();
    from_file->clear_stages_per_rank();
  }
  if (config.has_microbatches() || !config.global_batch().empty()) {
    from_file->clear_microbatches();
  }
  if (!config.model().empty() || config.has_pp() || config.has_stages_per_rank() ||
      !config.schedule_file().empty()) {
    from_file->clear_layers_per_stage();
  }
}

}  // namespace

Status ApplyTorchtitan(const proto::RunConfig& config, const Locator& where,
                       const ResolveOptions& options, proto::RunConfig* merged,
                       std::vector<std::string>* notes, std::vector<std::string>* sources) {
  *merged = config;
  if (config.torchtitan().empty()) return Status();
  const std::string path =
      config.torchtitan()[0] == '/' ? config.torchtitan() : options.directory + config.torchtitan();
  int64_t gpus = 0;
  RETURN_IF_ERROR(WorldGpus(config, where, options, &gpus));
  TorchtitanJob job;
  Status read = ReadTorchtitanFile(path, gpus, &job);
  if (!read.ok()) return Status::InvalidInput(where.Where("torchtitan") + ": " + read.message());
  proto::RunConfig from_file;
  for (const TorchtitanSetting& s : job.settings) {
    RETURN_IF_ERROR(SetFieldFromText(s.field, s.value, path + ": " + s.key, &from_file));
  }
  DropReplaced(config, &from_file);
  from_file.MergeFrom(config);
  from_file.clear_torchtitan();
  *merged = std::move(from_file);
  for (const std::string& note : job.notes) notes->push_back("torchtitan: " + note);
  sources->push_back(path);
  return Status();
}

}  // namespace ppsim
