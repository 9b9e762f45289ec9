// `ppsim search`: the best configuration of a model on a cluster for a global batch, found by an
// exact branch and bound over tensor, context, pipeline, data and expert parallelism, ZeRO,
// microbatch size, schedule, virtual stages, recomputation, offload and the layer split.
//
// The space (batch/search_space.h enumerates it). With G GPUs of n per node: tp divides n (the
// model's rules, e.g. tp divides the heads, are PrepareRun's); cp 1, and from 32K tokens also 2, 4,
// ... while each GPU keeps 8K tokens (across nodes too); pp with tp x cp x pp dividing G and
// pp <= the layers; dp = G / (tp x cp x pp); microbatch size b in {1, 2, 4, 8, 16} dividing the
// batch over the replicas; every schedule of the registry but aliases (a generator that rejects
// the pp, microbatches and V makes an invalid candidate); V the schedule's own, and for the
// interleaved ones (ScheduleInfo::any_stages_per_rank) every V >= 2 dividing a rank's layers
// (even split) or its layers with the embedding and loss counted (balanced); layer splits even,
// balanced or Megatron layout strings; ZeRO 1, 2 (in Megatron's default gradient bucket) and 3
// (with the listed HSDP shard degrees); EP for a MoE model; recompute none, selective, full and
// module sets; offload and Megatron-Interleaved's group size when listed (the fields' comments
// below give each default). Sequence parallelism is on whenever tp > 1 (Megatron's
// recommendation; it only removes activation memory). Every axis can be restricted to a list.
// Each candidate is one proto::RunConfig, resolved by ResolveRun and checked by PrepareRun
// (compile = false): what those refuse is invalid, counted with its reason; a candidate whose
// schedule, split and memory settings come out equal to an earlier one's (an explicit V equal to
// the default, a balanced split equal to the even one) is a duplicate and dropped.
//
// The evaluation, in tiers, each a bound on the next:
//   memory   static bytes + the order's peak activations + the reserve (sim/metrics.h
//            PeakMemoryBytes, the figure every engine reports; with offload a lower bound,
//            sim/host_copies.h, and SimGrid's timeline decides) above the GPU's capacity: OOM,
//            counted and not ranked (OOM candidates are excluded from the ranking and the front);
//            less than the headroom free: counted apart, not ranked.
//   work     the longest path through the schedule's actions: each rank's in its order, each
//            after the actions whose outputs it needs (sim/dependencies.h), with the pipeline
//            transfers between ranks and the tensor-parallel rings on the group's first link,
//            uncontended, then each rank's optimizer step; the data-parallel collectives left
//            out. Where they are none (dp 1) it is the critical path (checked by a test).
//   critical the critical-path engine: the DAG's longest path with uncontended transfers.
//   simgrid  SimGrid with contention: the iteration time ranked.
// work <= critical path <= SimGrid (contention only delays; checked by a test). Candidates are
// taken in increasing order of their current bound (ties: peak memory, then enumeration order) and
// refined one tier at a time; one is dropped once its bound can neither reach the top K nor the
// Pareto front of throughput against peak memory, given the candidates simulated so far: its key
// (bound, memory, index) is not below the K-th best simulated key, and a simulated candidate has
// peak memory <= its own and time <= its bound, better in one of them. So the top K and the front
// are exact: equal to evaluating every candidate with SimGrid. Every candidate has the same global
// batch, so a shorter iteration is a higher tokens/s.
//
// The baseline (--baseline, optional): a `ppsim run` request to compare the candidates with. Its
// own fields stand; the base fills platform, nodes (from --gpus too), calibration, memory_reserve
// and the set entries whose PATH it does not set, and model, global_batch and seq_len unless it
// imports a framework's configuration (megatron or torchtitan), which then gives them (a note says
// so). It is evaluated as a candidate is, by the same functions (resolve, prepare, memory,
// critical path, SimGrid), even when it does not fit (it is then flagged oom); it must use the
// search's GPUs (tp x pp x cp x dp), set no output field (trace, chrome_trace, timeline,
// trace_microbatches, engine, format, fail_on_oom, train_tokens, gpu_hour_cost) and be a request
// that ResolveRun and PrepareRun accept; else InvalidInput, every message starting with
// "--baseline: " (as SearchSpace::baseline_where places it). Each candidate's speedup is its
// tokens/s over the baseline's.
//
// Determinism: candidates are refined in rounds of a fixed size, decided from the results of
// earlier rounds only, so the same inputs give the same rankings, fronts and counts for any -j.
// With --shard I/N a shard evaluates the candidates of every N-th group (the same tp, pp,
// microbatch size and schedule, so that duplicates fall in one shard); the top K over all shards
// is the top K of the shards' top Ks together, the front the front of their fronts.
#ifndef PPSIM_BATCH_SEARCH_H_
#define PPSIM_BATCH_SEARCH_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/framework_launch.h"
#include "experiments/run_config.pb.h"

namespace ppsim {

// What to search. `base` holds the fields every candidate shares as the request gave them: model,
// platform, nodes, global_batch, and optionally seq_len, memory_reserve, set, calibration.
// An empty axis list means the whole default range above.
struct SearchSpace {
  // Where the space's fields were written (the base's run fields and the search's own: gpus,
  // schedules, recompute, ...), for messages and for each candidate's run. Default: names as is.
  std::shared_ptr<const Locator> where = std::make_shared<FieldNames>();
  proto::RunConfig base;
  int32_t gpus = 0;  // --gpus instead of base.nodes: nodes = gpus / GPUs per node; 0: not given
  std::vector<int32_t> tp;
  std::vector<int32_t> cp;  // default: 1 only
  std::vector<int32_t> pp;
  std::vector<int32_t> microbatch_size;
  std::vector<std::string> schedules;  // registry names, as given
  std::vector<int32_t> stages_per_rank;
  // none, selective, full, or recompute modules joined by '+' (layernorm+mlp: selective with
  // those modules). Default: none, selective, full, layernorm+mlp, and layernorm+mla_up_proj for
  // an MLA model, layernorm+moe_act for a MoE model.
  std::vector<std::string> recompute;
  std::vector<int32_t> zero;      // ZeRO stages; default 1, 2, 3 (2 with Megatron's bucket)
  std::vector<int32_t> dp_shard;  // with ZeRO 3: the shard degrees dividing dp; default dp
  // A MoE model's EP degrees; default those dividing the experts and dp x tp x cp with at most
  // 16 experts per GPU. A dense model has none.
  std::vector<int32_t> ep;
  std::vector<std::string> offload;  // none, or offload modules joined by '+'; default none
  // Megatron-Interleaved's microbatch group sizes (those in [pp, m]); default its own (pp).
  std::vector<int32_t> microbatch_group_size;
  // Layer splits: even, balanced (the embedding and the loss counted as layers: Llama 3's one
  // layer fewer on the first and last stage), or Megatron layout strings (for the pp dividing
  // their stages, V = stages / pp). Default: even, balanced.
  std::vector<std::string> layouts;
  // What a candidate must leave free of its GPU's memory to rank (--headroom): headroom_bytes
  // when >= 0, else headroom_fraction of the capacity (default 5%: the caching allocator's
  // fragmentation, NCCL's and CUDA graphs' buffers, which no estimate counts exactly). A candidate
  // that fits but leaves less is counted apart (SearchCounts::no_headroom) and not ranked.
  double headroom_fraction = 0.05;
  int64_t headroom_bytes = -1;
  // The baseline's own fields as given (see above); has_baseline false: no baseline.
  bool has_baseline = false;
  proto::RunConfig baseline;
  // Where the baseline's fields were written; its Where() should start with "--baseline: ".
  std::shared_ptr<const Locator> baseline_where =
      std::make_shared<PrefixLocator>("--baseline: ", std::make_shared<FieldNames>());
};

// Candidates whose iteration is within this fraction of the best's are ties of the best: the
// model's uncertainty between configurations on one GPU, the median residual (2.65%; 0.8-5.1%) of
// six published setups fitted with `ppsim calibrate` (README, Validation, "Calibrated").
inline constexpr double kTieFraction = 0.03;

struct SearchOptions {
  // --emit: each reported candidate's launch in this framework (experiments/framework_emit.h).
  std::optional<Framework> emit;
  int32_t top = 10;  // candidates ranked (>= 1)
  int32_t jobs = 1;  // evaluations at a time, each in a process of its own
  int32_t shard_index = 0;
  int32_t shard_count = 1;
};

// One evaluated candidate, as reported.
struct SearchCandidate {
  int64_t index = 0;  // in enumeration order (over all shards)
  proto::RunConfig config;
  std::string command;  // the `ppsim run` command of `config`, flags named by SearchSpace::where
  int64_t peak_memory_bytes = 0;  // the largest rank's
  int64_t memory_capacity_bytes = 0;
  bool oom = false;
  bool no_headroom = false;  // fits, but leaves less than the headroom free
  double work_bound_s = 0;
  double critical_path_s = 0;  // 0: not evaluated
  double iteration_s = 0;      // SimGrid's; 0: not simulated
  double tokens_per_s = 0;
  double mfu = 0;
  int32_t dp = 0;  // from here on, as the simulated run had them
  int32_t microbatches = 0;
  int32_t stages_per_rank = 0;
  double speedup = 0;  // tokens_per_s over the baseline's (1 for the baseline); 0: no baseline
  // Within kTieFraction of the best's iteration time: the model cannot tell it from the best.
  bool tie = false;
  // With SearchOptions::emit: the framework's launch of this configuration (its schedule CSV,
  // when one is needed, named candidate-INDEX.csv) and the `ppsim run` command importing it
  // back from candidate-INDEX.args (Megatron-LM) or candidate-INDEX.toml (torchtitan).
  std::optional<FrameworkLaunch> launch;
  std::string import_command;
};

// How many candidates ended where. evaluated = oom + no_headroom + bounded_out_work +
// bounded_out_critical_path + simulated + failed.
struct SearchCounts {
  int64_t enumerated = 0;  // in this shard
  int64_t invalid = 0;     // refused by ResolveRun or PrepareRun, or tp x pp not dividing the GPUs
  int64_t duplicates = 0;
  int64_t evaluated = 0;
  int64_t oom = 0;
  int64_t no_headroom = 0;  // fit, but leave less than SearchSpace's headroom free
  int64_t bounded_out_work = 0;
  int64_t bounded_out_critical_path = 0;
  int64_t critical_path_evaluated = 0;
  int64_t simulated = 0;  // by SimGrid
  int64_t failed = 0;     // a valid candidate whose compilation or simulation failed
};

struct SearchResult {
  std::vector<SearchCandidate> ranking;  // the top K, best first
  std::vector<SearchCandidate> pareto;   // best first: increasing time, decreasing peak memory
  // Every candidate SimGrid simulated, best first (the top K and the front among them; the rest
  // are in order among themselves but not a full ranking of the space).
  std::vector<SearchCandidate> simulated;
  SearchCounts counts;
  // The most frequent reasons candidates were invalid or failed, with their counts, most first.
  std::vector<std::pair<std::string, int64_t>> reasons;
  // The valid candidate that needs the least memory (out of memory or not), for the diagnosis of a
  // search where none ranks: its peak, its GPU's capacity and its command. Peak 0: none valid.
  int64_t least_memory_bytes = 0;
  int64_t least_memory_capacity_bytes = 0;
  std::string least_memory_command;
  // When nothing ranks: the least-memory candidate again with one change each (full
  // recomputation, ZeRO 3, every activation offloaded, microbatch size 1, twice the GPUs as twice
  // the pipeline ranks, then all of them), each prepared as a candidate is: what it would need.
  struct Lever {
    std::string change;   // "full recomputation (--recompute full)"
    std::string command;  // the changed candidate's `ppsim run` command
    int64_t peak_memory_bytes = 0;  // 0: refused (reason)
    int64_t memory_capacity_bytes = 0;
    bool ranks = false;  // fits with the headroom free
    // With offload the peak is the memory tier's lower bound (copies taken as instant): the
    // simulated timeline's may be higher.
    bool lower_bound = false;
    std::string reason;
  };
  std::vector<Lever> levers;
  double wall_s = 0;
  // The baseline as evaluated (index -1; its command the filled request's; oom when it does not
  // fit, yet simulated), when SearchSpace::has_baseline.
  bool has_baseline = false;
  SearchCandidate baseline;
  // Where the baseline's model came from when a framework's configuration gave it, then the
  // framework's own notes (RunSpec::import_notes).
  std::vector<std::string> baseline_notes;
};

// Searches `space`. InvalidInput naming the flag for a base the request refuses ("--model: ...",
// "--global-batch: ...") or an axis value outside the space ("--schedules: unknown schedule ..."),
// and "ppsim search: no valid configuration ..." with the most frequent reasons when no candidate
// of this shard is valid; "--baseline: ..." for a baseline refused (see above), or Internal when
// its simulation fails. Progress lines (one per tier) go to `progress`.
Status RunSearch(const SearchSpace& space, const SearchOptions& options, std::ostream& progress,
                 SearchResult* result);

}  // namespace ppsim

#endif  // PPSIM_BATCH_SEARCH_H_
