// `--emit megatron|torchtitan`: a run given back in a framework's terms. The Megatron-LM
// arguments (pretrain_gpt.py's) or the torchtitan job file (TOML) that run the same configuration,
// and the `ppsim run` command that imports them back into the same run.
//
// The emitted configuration is the inverse of the import (--megatron, experiments/
// megatron_request.h; --torchtitan, experiments/torchtitan_run.h): every field that the import
// sets is written as the framework's argument or key, so that importing it gives the run's own
// value. What the framework cannot say stays a ppsim flag beside the import (ppsim's flags override
// an import) with a note saying why, so the round trip is exact:
//   ppsim run --megatron @ARGS <ppsim_flags>   and   ppsim run --torchtitan JOB.toml <ppsim_flags>
// give the same run as the original request: the same output byte for byte but for the words that
// name where the run came from (the model's name, the schedule file's name, the import's notes).
// Every field the framework's import does not touch (the platform, the cluster's settings, the
// memory reserve, measured costs, the engine, ...) is among the ppsim flags as the request gave it.
//
// Megatron-LM runs 1F1B (Megatron's schedule with its p2p calls) and Megatron-Interleaved (virtual
// stages); with pipeline size 1 any schedule is its forward-backward loop without pipelining. The
// vocabulary is kept as ppsim simulated it: --make-vocab-size-divisible-by is the largest of 128,
// 64, ..., 1 with which Megatron pads nothing (a note when Megatron must pad it, the vocabulary not
// dividing by the tensor-parallel size). The layer split is an even split, the embedding and loss
// accounting flags, or a --pipeline-model-parallel-layout.
// torchtitan runs the schedules of torch.distributed.pipelining (GPipe, 1F1B, Interleaved1F1B,
// LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV) by name; any other order runs as
// torch's schedule CSV (pipeline_parallel_schedule_csv, written beside the job file) under the
// named schedule whose stage placement it has (looped or V). Models: torchtitan's flavors that
// ppsim has presets of (llama3 8B/70B/405B, deepseek_v3 671B). The layer split is the
// first/last-stage weights that make torchtitan's own split equal the run's.
// A schedule neither runs (DualPipe's two directions, a Megatron emission of ZB-H1) is emitted with
// the ppsim flag that names it and a note naming the runtime that does run it.
#ifndef PPSIM_EXPERIMENTS_FRAMEWORK_EMIT_H_
#define PPSIM_EXPERIMENTS_FRAMEWORK_EMIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/framework_launch.h"
#include "experiments/run.h"
#include "experiments/run_config.pb.h"

namespace ppsim {

// The launch of a prepared run (PrepareRun, compiled or not) with a model. `request`: the
// request's fields as resolved (RunSpec::request: after any import, before defaults).
// `schedule_csv_name`: what the job file calls its schedule CSV when one is needed (torchtitan).
// InvalidInput, located at the `emit` field, when the framework cannot describe the run at all:
// no model (costs alone), or a model torchtitan has no flavor of.
Status EmitLaunch(const PreparedRun& run, Framework framework, const std::string& schedule_csv_name,
                  FrameworkLaunch* launch);

// The `ppsim run` command that imports `launch` from `file` ("ARGS" when it was printed): "ppsim
// run --megatron @FILE <flags>" or "ppsim run --torchtitan FILE <flags>", flags spelled by
// `flags`.
std::string ImportCommand(const FrameworkLaunch& launch, const std::string& file,
                          const Locator& flags);

// The two emitters (experiments/megatron_emit.cc, torchtitan_emit.cc), for EmitLaunch. Each
// fills text, notes and ppsim_fields' overrides of what it sets; EmitLaunch adds the rest.
Status EmitMegatron(const PreparedRun& run, FrameworkLaunch* launch);
Status EmitTorchtitan(const PreparedRun& run, const std::string& schedule_csv_name,
                      FrameworkLaunch* launch);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_FRAMEWORK_EMIT_H_
