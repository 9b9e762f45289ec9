// One simulation run, end to end: describe -> compile -> execute -> metrics.
//
// The request (experiments/request.h) resolves every field into a RunSpec; PrepareRun turns it
// into a PreparedRun in named phases (experiments/run_phases.h): the workload, the schedule, the
// model, the platform, the costs, the parallel plans and the compiled task graph; ExecuteRun runs
// it on its engine and measures it (RunResult).
#ifndef PPSIM_EXPERIMENTS_RUN_H_
#define PPSIM_EXPERIMENTS_RUN_H_

#include <memory>
#include <optional>
#include <string>

#include "base/locator.h"
#include "base/parallel_layout.h"
#include "base/status.h"
#include "experiments/framework_launch.h"
#include "experiments/run_config.pb.h"
#include "models/op_costs.h"
#include "models/stage_costs.h"
#include "models/transformer.h"
#include "platforms/cluster.h"
#include "platforms/platform.h"
#include "schedules/generator.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"
#include "sim/collective_plans.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"

namespace ppsim {

inline constexpr int64_t kDefaultMaxTasks = 50'000'000;
inline constexpr int32_t kMaxActivationLimitP = 1024;  // --memory-limit Kp

// One run, resolved from the request (experiments/request.h): every value parsed and checked on
// its own; what depends on other values (costs per stage, the model on the platform) is checked
// by PrepareRun. Messages about a field start where it was written (`where`).
struct RunSpec {
  // Exactly one of schedule_name (a registry name) and schedule_file (text IR, or torch CSV when
  // the name ends in .csv) is set.
  std::string schedule_name;
  std::string schedule_file;
  // Microbatches per iteration, virtual stages per rank (0: the schedule's default) and
  // Megatron-Interleaved's group size (0: pp). The ranks are training.layout.pp. With
  // schedule_file, pp and microbatches are 0 unless the request gave them; then they must match
  // the file. With a global batch, microbatches may be 0 until PrepareRun sets it.
  int32_t microbatches = 0;
  int32_t stages_per_rank = 0;
  int32_t microbatch_group_size = 0;
  // With schedule_file: the rank of every stage; empty to infer it from the file.
  std::vector<RankIndex> stage_to_rank;
  CostValues costs;  // Each overrides the same field of the profile or the model.
  CostsPer costs_per = CostsPer::kRank;  // for `costs` and the profile's rows
  // Durations given without a unit, read as seconds, as written ("--f 1.2"): the output says so.
  std::vector<std::string> unitless_durations;
  std::string profile_file;  // measured costs (models/profile.h); empty: none.
  // A model preset name or a model file (models/transformer.h); empty: none. With a model the
  // costs come from the per-op cost model on the platform's GPU (models/op_costs.h), or with
  // `efficiency` > 0 from the model FLOPs at the GPU's peak FLOP/s times `efficiency`.
  std::string model;
  // A model built in code (--megatron's), used instead of looking `model` up; null: none.
  std::shared_ptr<const TransformerSpec> model_spec;
  // --mtp-layers: the model's multi-token prediction modules (LoadModel); -1: the model's own.
  int32_t mtp_layers = -1;
  // What the request's framework configuration (--megatron, --torchtitan) assumed or ignored, one
  // sentence each, prefixed by its framework ("megatron: ...", "torchtitan: ignored ...").
  std::vector<std::string> import_notes;
  // The setup, with the parallel layout (training.layout: pp, dp, tp, cp, ep); seq_len 0: the
  // model's own.
  TrainingSetup training;
  LayerSplit layer_split;
  double efficiency = 0;           // 0: the per-op model
  PlatformChoice platform;         // preset or file, nodes, set, placement, hosts
  int64_t memory_limit_bytes = 0;  // 0: the platform GPU's memory
  // --memory-limit Kp (ZB-auto only): each stage's activations within K x p x M_B instead of
  // what fits in memory_limit_bytes; 0: not given.
  int32_t activation_limit_p = 0;
  // Memory beyond the model's (sim/metrics.h MemoryReserve); -1: the defaults below when the run
  // counts memory at all (a model, a profile or sizes give static or activation bytes), else 0.
  int64_t memory_reserve_bytes = -1;
  double activation_overhead = -1;
  EngineKind engine = EngineKind::kSimGrid;
  P2pMode p2p_mode = P2pMode::kEager;
  // The tensor-parallel collectives of a model with --tp > 1 run alongside the compute of their
  // op (Transformer Engine's communication overlap) instead of after it.
  bool tp_comm_overlap = false;
  // SMs the expert-parallel all-to-alls occupy while they overlap computation (--comm-sms; checked
  // against the GPU's SMs by PrepareRun); 0: none.
  int32_t comm_sms = 0;
  // Megatron-LM's --overlap-moe-expert-parallel-comm (schedules/generator.h ScheduleParams::
  // moe_a2a_overlap) and --delay-wgrad-compute (models/stage_costs.h StageCosts::delay_wgrad).
  bool moe_a2a_overlap = false;
  bool delay_wgrad = false;
  // DeepSeek's node-limited routing (--moe-node-limit M; sim/task_graph.h Parallelism); 0: off.
  int32_t moe_node_limit = 0;
  // --replicas: simulate replica 0 for all (sim/task_graph.h Parallelism::fold_replicas), or
  // every replica; unset: folded on a cluster, every replica on a SimGrid XML platform.
  std::optional<bool> fold_replicas;
  // --collective-algorithm: forced; unset: NCCL's choice (sim/collective_plans.h).
  std::optional<CollectiveAlgorithm> collective_algorithm;
  // Data-parallel gradient buckets (sim/task_graph.h Parallelism); 0: one all-reduce per stage.
  int64_t grad_bucket_bytes = 0;
  // PrepareRun refuses a run that would compile into more tasks (sim/task_graph.h), before it
  // allocates them: 5e7 tasks are about 7 GB.
  int64_t max_tasks = kDefaultMaxTasks;
  // The workload. --global-batch: sequences (or, with global_batch_in_tokens, tokens) per
  // iteration over all replicas; 0: not given. PrepareRun turns it into microbatches of
  // training.microbatch_size sequences on each of training.layout.dp replicas (or checks the given
  // microbatches against it).
  int64_t global_batch = 0;
  bool global_batch_in_tokens = false;
  int64_t train_tokens = 0;   // --train-tokens; 0: not given
  double gpu_hour_cost = -1;  // --gpu-hour-cost; < 0: not given
  // --emit: the framework whose launch the run reports (experiments/framework_emit.h), and
  // --emit-file, where it is written ("": printed in the output only).
  std::optional<Framework> emit;
  std::string emit_file;
  // The request's fields this run was resolved from, after a framework's import (the fields
  // --emit keeps as ppsim flags); null when the run was not resolved from a request.
  std::shared_ptr<const proto::RunConfig> request;
  // Where each field was written, for messages ("--pp", "e.yaml:3:5: base.pp").
  std::shared_ptr<const Locator> where = std::make_shared<FieldNames>();
};

// The default reserve (README, Memory): CUDA context 0.3-0.7 GiB (PyTorch PR
// #86509, lazy loading), NCCL 0.5-2 GiB per rank (NVIDIA/nccl #864, #964; Megatron-LM PR #6479),
// so 3 GiB fixed; the caching allocator 10% of activations (between Megatron's 5% for temporaries
// and GMLake's, ASPLOS 2024, 15% average fragmentation).
inline constexpr int64_t kDefaultMemoryReserveBytes = int64_t{3} << 30;
inline constexpr double kDefaultActivationOverhead = 0.1;

// A run described, validated and compiled: ready to execute. PrepareRun fills it phase by phase.
struct PreparedRun {
  RunSpec spec;       // as requested, with the global batch's microbatches
  std::string label;  // the schedule's name or file
  // A schedule found from the costs (ZB-1p, ZB-2p, ZB-auto): until the costs phase generates it,
  // `schedule` has its shape (one stage per rank) but no orders. Null: any other schedule.
  const ScheduleInfo* from_costs = nullptr;
  Schedule schedule;
  // With a model: its name, the model itself, its setup (the model's sequence length unless the
  // request gives one) and each virtual stage's share of it.
  std::string model;
  TransformerSpec transformer;
  TrainingSetup setup;
  std::vector<StageModel> stages;
  double model_flops = 0;  // see RunResult
  double hardware_flops = 0;
  int64_t seq_len = 0;  // the model's or the request's; 0: unknown
  GpuModel gpu;         // with a model: the GPU as the op cost model times it
  std::vector<int32_t> layers_per_stage;
  PlatformSpec platform;  // the cluster with the run placed on it
  StageCosts costs;
  Parallelism parallelism;                 // how the compiler lays out the run's communication
  std::vector<CollectiveRow> collectives;  // the data-parallel collectives as planned
  TaskGraph graph;
};

struct RunResult {
  RunSpec spec;
  std::string label;
  int32_t num_ranks = 0;
  int32_t num_stages = 0;
  int32_t num_microbatches = 0;
  std::string platform;
  std::string model;  // the model's name, empty without --model
  // What the model's source stated that ppsim ignores or does not model (TransformerSpec::notes).
  std::vector<std::string> model_notes;
  // With --model: model FLOPs of the iteration (forward and backward, without recompute) and
  // MFU = model FLOPs / (makespan x GPUs x peak FLOP/s of the dtype).
  double model_flops = 0;
  double mfu = 0;
  // With --model and recomputation: hardware FLOPs (the model FLOPs plus the recomputed forward
  // work) and HFU, their share of the peak in the same way. 0 otherwise.
  double hardware_flops = 0;
  double hfu = 0;
  GpuModel gpu;  // with --model: the GPU constants the op cost model assumed
  std::vector<int32_t> layers_per_stage;  // with --model: each virtual stage's layers
  // The workload, per iteration (the makespan) over all replicas: the GPUs (ranks x tp x cp x
  // dp), sequences = microbatches x microbatch size x dp, samples (sequences) per second, and,
  // when the sequence length is known (a model or --seq-len; else seq_len 0), tokens per second.
  int64_t gpus = 0;
  // Data-parallel replicas simulated: dp, or 1 when replica 0 stood for all (--replicas one);
  // the task, transfer, all-reduce and link figures are then replica 0's.
  int32_t replicas_simulated = 1;
  std::vector<CollectiveRow> collectives;  // see PreparedRun
  int64_t sequences_per_iteration = 0;
  int64_t seq_len = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  // With --train-tokens (and tokens_per_s): the time to train on them and its GPU-hours; with
  // --gpu-hour-cost their cost. 0 otherwise.
  double time_to_train_s = 0;
  double gpu_hours = 0;
  double cost = 0;
  RunMetrics metrics;
  // With --emit: the framework's launch and the `ppsim run` command that imports it back.
  std::optional<FrameworkLaunch> launch;
  std::string import_command;
};

// A tensor-parallel ring step's latency on a cluster with tp > 1: GPU 0 to GPU 1 of replica 0's
// rank 0, uncontended and empty.
double TpStepLatencyS(const PlatformSpec& platform);

// The memory a run's ranks are checked against: each GPU's (--memory-limit, else the platform
// GPU's; 0: unlimited) and the reserve beyond the model's (RunSpec::memory_reserve_bytes, else
// the platform's calibration's, and activation_overhead, or their defaults when the run counts
// memory at all).
struct RunMemory {
  int64_t capacity_bytes = 0;
  MemoryReserve reserve;
};
RunMemory RunMemoryOf(const RunSpec& spec, const PlatformSpec& platform, const StageCosts& costs);

// The files a run reads: its schedule file, profile, model file, cluster or XML file and
// calibration.
std::vector<std::string> InputFiles(const RunSpec& spec);

// Whether replica 0 stands for all (RunSpec::fold_replicas): by default on a cluster, not on a
// SimGrid XML platform (whose routes ppsim cannot splice).
bool FoldsReplicas(const RunSpec& spec);

// Builds the schedule, costs and platform, checks them and (with `compile`) compiles the task
// graph, in the phases of experiments/run_phases.h. Returns InvalidInput for bad input and
// Deadlock for an order that cannot execute; never touches SimGrid. Without `compile` it only
// validates (a sweep checks every point first).
Status PrepareRun(const RunSpec& spec, PreparedRun* run, bool compile = true);
// What PrepareRun adds with `compile` to a run it validated without: the parallel plans and the
// task graph. PrepareRun(spec, run, false) then CompletePreparedRun(run) is PrepareRun(spec, run).
Status CompletePreparedRun(PreparedRun* run);

// Executes a prepared run with its engine and computes its metrics; the executed timeline goes
// to `timeline` when it is not null (for traces and pictures). `process` says where SimGrid runs
// (sim/engine.h): a sweep's point process runs it in itself.
// Without `link_figures` the per-link figures (RunMetrics::links, intra_node, inter_node) stay
// empty: a search ranks by the iteration alone.
Status ExecuteRun(const PreparedRun& run, RunResult* result, Timeline* timeline = nullptr,
                  SimGridProcess process = SimGridProcess::kChild, bool link_figures = true);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_H_
