// torchtitan job files (TOML, as torchtitan's train_configs/*.toml were written until it replaced
// them by a Python config registry on 2026-02-23, pytorch/torchtitan 9810191; keys as of the
// commit before, 238fa9953e4a) read into ppsim request settings, for `ppsim run --torchtitan`.
//
// The reader is neutral of the request type (interop is below experiments): it gives a list of
// (ppsim request field, value text, the TOML key it came from) that experiments/ applies, and a
// note for every key it ignores or reads under a stated assumption. Every key of the file is
// either applied, ignored (noted), assumed (noted) or refused by name; a key torchtitan does not
// have is an error naming it. What torchtitan derives is derived the same way
// (torchtitan/distributed/pipeline_parallel.py, parallel_dims.py, train.py at 238fa9953e4a):
//   - data_parallel_shard_degree -1 is the rest of the world: world / (replicate x cp x tp x pp);
//     the degrees must multiply to the world size (the platform's GPUs).
//   - With pipeline_parallel_degree > 1: microbatches = local_batch_size /
//     pipeline_parallel_microbatch_size, of pipeline_parallel_microbatch_size sequences; stages
//     per rank 1 for GPipe and 1F1B, else 2, or from pipeline_parallel_layers_per_stage
//     (ceil((layers + first_less + last_less) / per_stage) stages); each stage's layers as
//     torchtitan's generate_llm_fqn_per_model_part splits them.
//   - Without a pipeline the local batch is one microbatch; training.global_batch_size adds
//     gradient accumulation steps (microbatches) then.
//   - data_parallel_shard_degree S > 1 is FSDP2 (parallelize.py apply_fsdp): zero 3, dp = R x S
//     with R = data_parallel_replicate_degree, dp_shard S when R > 1 (HSDP);
//     fsdp_reshard_after_forward default/always/never: reshard_after_forward default/on/off;
//     training.mixed_precision_reduce float32 (the default) only.
// Refused by name (exit 2): context_parallel_degree > 1 (torchtitan runs it under FSDP; not
// imported yet); experts sharded by FSDP; fp32 compute; partial activation checkpointing; MX
// formats; gradient accumulation around a pipeline; CPU offload.
// Messages: "SOURCE:LINE:COL: section.key: what is wrong; what is valid"; a TOML syntax error as
// "SOURCE:LINE:COL: TOML syntax error: ...".
#ifndef PPSIM_INTEROP_TORCHTITAN_TOML_H_
#define PPSIM_INTEROP_TORCHTITAN_TOML_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// One request setting: `field` is a RunConfig field name ("pp"), `value` its text as on the
// command line ("4"), `key` the TOML key it came from ("parallelism.pipeline_parallel_degree";
// several keys joined by " and " when derived from more than one).
struct TorchtitanSetting {
  std::string field;
  std::string value;
  std::string key;
};

struct TorchtitanJob {
  std::vector<TorchtitanSetting> settings;  // in request-field order of derivation
  // One sentence each: what was ignored ("[checkpoint] ignored: ...") or assumed.
  std::vector<std::string> notes;
};

// torchtitan's [model] name and flavor of a ppsim preset of the same shape (torchtitan's
// models/<name>/__init__.py flavors; the presets are the published configs of the same models).
struct TorchtitanFlavor {
  std::string_view name, flavor, preset;
};
std::span<const TorchtitanFlavor> TorchtitanFlavors();

// The schedules torch's get_schedule_class knows, as ppsim names them; the first two run one
// stage per rank (PipelineScheduleSingle), the others several (PipelineScheduleMulti);
// ZBVZeroBubble and DualPipeV place them as a V, the others looped.
std::span<const std::string_view> TorchtitanSchedules();

// torchtitan's generate_llm_fqn_per_model_part: the decoder layers of each of `stages` stages,
// the embedding and the output weighing `first` and `last` layers; stages of the weighted layers
// differ by at most one. False (and *split unspecified) where torchtitan refuses: a stage without
// layers, or an embedding or output heavier than a stage.
bool TorchtitanLayerSplit(int64_t stages, int32_t layers, int64_t first, int64_t last,
                          std::vector<int64_t>* split);

// torchtitan job files are small; larger files are refused before reading.
inline constexpr int64_t kMaxTorchtitanFileBytes = int64_t{1} << 20;

// Reads `text` (from `source`, named in messages). `world_gpus` is the run's GPUs (the platform's
// nodes x GPUs per node); 0 when the platform does not fix it (then data_parallel_shard_degree
// -1 is refused, and the degrees are not checked against it). `folder` ("" or ending in '/') is
// where a relative pipeline_parallel_schedule_csv is taken from. On error *job is unspecified.
Status ReadTorchtitanToml(std::string_view text, const std::string& source, int64_t world_gpus,
                          const std::string& folder, TorchtitanJob* job);

// ReadFile (UTF-8, at most kMaxTorchtitanFileBytes) then ReadTorchtitanToml with the file's folder.
Status ReadTorchtitanFile(const std::string& path, int64_t world_gpus, TorchtitanJob* job);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_TORCHTITAN_TOML_H_
