// The phases of PrepareRun (experiments/run.h), in order, each filling its part of a PreparedRun
// from the spec and what the phases before it filled, and the pieces other commands use alone
// (`ppsim schedule` builds a schedule, `ppsim model` a model's stages, the search a model).
//
// Every message about a field starts where the field was written (run->spec.where); nothing here
// knows a command-line flag. No phase touches SimGrid.
#ifndef PPSIM_EXPERIMENTS_RUN_PHASES_H_
#define PPSIM_EXPERIMENTS_RUN_PHASES_H_

#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/run.h"
#include "models/op_costs.h"
#include "models/transformer.h"
#include "platforms/platform.h"
#include "schedules/schedule.h"

namespace ppsim {

// 1. The workload: run->spec = `request`, its global batch (sequences, or tokens of the model's
// or the request's sequence length) turned into microbatches of training.microbatch_size
// sequences on each of dp replicas, or checked against the microbatches given.
Status PrepareWorkload(const RunSpec& request, PreparedRun* run);

// 2. The schedule: checks that a run of the requested size fits the task budget (max_tasks)
// before anything is allocated, then generates the named schedule or reads the file (checked:
// CheckSchedule), and checks its size again. A schedule found from costs (ZB-1p, ZB-2p, ZB-auto)
// gets its shape only (run->from_costs); the costs phase generates it.
Status PrepareSchedule(PreparedRun* run);

// 3. The model (with one): loads it, checks the setup against it, splits each pipeline's layers
// over its stages and models every virtual stage; records the model FLOPs of an iteration.
Status PrepareModel(PreparedRun* run);

// 4. The platform: the cluster (a preset or a file, with nodes and settings) or the SimGrid XML
// platform, the run placed on it, and what needs a cluster (folded replicas, expert parallelism,
// the critical-path engine) or fits the GPU (the SMs the all-to-alls take).
Status PreparePlatform(PreparedRun* run);

// 5. The costs: the model's on the platform's GPU (every field of StageCosts), overridden by a
// profile's rows and the request's values (models/stage_costs.h OverrideStageCosts); a schedule
// found from costs generated from them; a duration for every kind of op the schedule runs; the
// optimizer step's seconds at the GPU's HBM bandwidth.
Status PrepareCosts(PreparedRun* run);

// 6. What the workload needs of the costs: whole tokens within 1e18 per iteration, a sequence
// length for --train-tokens, gradients for data parallelism.
Status CheckWorkload(const PreparedRun& run);

// 7. Expert routing: with node-limited routing, the nodes each expert-parallel group spans and
// the bytes its all-to-alls send between nodes (StageCosts::moe).
Status PrepareExpertRouting(PreparedRun* run);

// 8. The parallel plans: how the compiler lays out the run's communication (Parallelism), the
// size checks of what expert parallelism and gradient buckets add, and each stage's data-parallel
// collectives as NCCL would run them (sim/collective_plans.h).
Status PrepareParallelism(PreparedRun* run);

// 9. Compiles the task graph. InvalidInput (at p2p_mode) when the order cannot run with the p2p
// mode; Deadlock when it cannot execute at all.
Status CompileRun(PreparedRun* run);

// The schedule generator's parameters the request gives: ranks (training.layout.pp),
// microbatches, virtual stages per rank and group size, located where the request wrote them.
ScheduleParams ScheduleParamsOf(const RunSpec& spec);

// InvalidInput when the schedule the request names would have more actions than the task budget
// allows (spec.max_tasks, about 140 bytes each), before anything is allocated. Nothing to check
// for a schedule file (its size is bounded by the file's).
Status CheckScheduleSize(const RunSpec& spec);

// Generates (or reads) and checks the schedule alone; `label` is its name or file.
Status BuildSchedule(const RunSpec& spec, Schedule* schedule, std::string* label);

// The request's model: a preset or a model file. InvalidInput, located, for an unknown name or a
// bad file.
Status LoadModel(const RunSpec& spec, TransformerSpec* model);

// The analytic model's stages for `schedule` (one set per pipeline, each split over its stages),
// the model and the setup it used (the model's sequence length unless given). For `ppsim model`
// and PrepareModel.
Status BuildModelStages(const RunSpec& spec, const Schedule& schedule,
                        std::vector<StageModel>* stages, TransformerSpec* model,
                        TrainingSetup* setup);

// The platform's GPU as the op cost model times it, for the request's dtype (and its TP overlap:
// the SMs TE's userbuffers take from the overlapped GEMMs).
GpuModel GpuModelOf(const PlatformSpec& platform, const RunSpec& spec);
// F, I and W of every stage on the platform's GPU: the op cost model, or the model FLOPs at the
// peak x spec.efficiency when the request gives one (models/op_costs.h StagePassSeconds).
std::vector<PassSeconds> ModelStageSeconds(const RunSpec& spec, const TransformerSpec& model,
                                           const TrainingSetup& setup, const PlatformSpec& platform,
                                           const std::vector<StageModel>& stages);

// The platform GPU's peak dense FLOP/s for `dtype` (fp8, or bf16/fp16).
double PeakFlopsPerS(const PlatformSpec& platform, Dtype dtype);
// InvalidInput where the dtype was written when the GPU has no peak for `dtype` (fp8 on an A100).
Status CheckDtypeOnGpu(const PlatformSpec& platform, Dtype dtype, const Locator& where);

// Model FLOPs of one iteration of `schedule` with `stages` (from BuildModelStages): forward and
// backward without recompute, 3 x the forward, for every microbatch on every stage of its
// pipeline, on all `tp` GPUs of a rank, in each of `dp` replicas. MFU divides it by makespan x
// GPUs x PeakFlopsPerS. With `hardware`, the FLOPs the GPUs execute: F + I + W of each stage,
// recomputation included (HFU).
double ModelFlopsPerIteration(const std::vector<StageModel>& stages, const Schedule& schedule,
                              int32_t tp, int32_t dp, bool hardware = false);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_PHASES_H_
