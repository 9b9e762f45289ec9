#include "batch/search.h"

#include <google/protobuf/descriptor.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <tuple>

#include "base/escape.h"
#include "base/flag_locator.h"
#include "base/names.h"
#include "base/numbers.h"
#include "batch/process_pool.h"
#include "batch/search_space.h"
#include "config/units.h"
#include "experiments/framework_emit.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "experiments/run_command.h"
#include "experiments/run_phases.h"
#include "models/transformer.h"
#include "platforms/cluster.h"
#include "schedules/registry.h"
#include "sim/dependencies.h"
#include "sim/gradient_sync.h"
#include "sim/host_copies.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"

namespace ppsim {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// Candidates refined per round. Fixed, not -j: a round is decided from earlier rounds only, so
// the counts do not depend on how many processes evaluate it.
constexpr size_t kRoundSize = 4;
// Candidates prepared per process in the first tier.
constexpr size_t kPrepareChunk = 48;
// Reasons listed in an empty-space error and in the summary.
constexpr size_t kReasonsShown = 5;

// A candidate's first tier: ResolveRun and PrepareRun without compiling, its memory and work.
struct Prepared {
  bool ok = false;
  std::string reason;     // when not ok
  std::string signature;  // the schedule and split it came to, for duplicates
  int64_t peak_memory_bytes = 0;
  int64_t capacity_bytes = 0;
  double work_s = 0;
  // Only in the process that prepared it (not in PreparedJson): for the baseline's checks.
  int64_t gpus = 0;
  std::string layout;  // "tp 8 x pp 4 x cp 1 x dp 2"
  // The request with what the run resolved to written in (schedule, tp, pp, microbatch size,
  // recompute, sequence parallelism, layer split): what the output shows of a baseline whose
  // framework's configuration gave them.
  proto::RunConfig resolved;
  std::vector<std::string> notes;
};

// A candidate run by an engine in a child process.
struct Executed {
  bool ok = false;
  std::string reason;
  double makespan_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  int64_t peak_memory_bytes = 0;
  int32_t dp = 0;
  int32_t microbatches = 0;
  int32_t stages_per_rank = 0;
};

// A SimGrid evaluation's figures into the candidate (the baseline's and every simulated one's).
void TakeSimulation(const Executed& e, SearchCandidate* c) {
  c->iteration_s = e.makespan_s;
  c->tokens_per_s = e.tokens_per_s;
  c->mfu = e.mfu;
  c->dp = e.dp;
  c->microbatches = e.microbatches;
  c->stages_per_rank = e.stages_per_rank;
}

Status ResolveOne(const proto::RunConfig& config, const std::shared_ptr<const Locator>& where,
                  RunSpec* spec) {
  RunRequest request;
  ResolveOptions options;
  options.one_schedule = true;
  RETURN_IF_ERROR(ResolveRun(config, where, options, &request));
  *spec = request.runs.at(0);
  return Status();
}

// A lower bound on the iteration from the order and the actions' durations alone: the longest
// path through the schedule's actions, each rank's one at a time in its order, each after the
// actions whose outputs it needs (sim/dependencies.h), plus the pipeline transfer between them
// when they are on different ranks (the fastest of the group's GPUs' shares, uncontended); then
// each rank's optimizer step. An action lasts its compute and its tensor-parallel ring on the
// group's first link, uncontended (sim/task_graph.h ComputeLoad). The engines add contention, the
// rings' other links, context parallelism's exchanges and the data-parallel collectives: each only
// delays.
double WorkBound(const PreparedRun& run) {
  const Schedule& schedule = run.schedule;
  const StageCosts& costs = run.costs;
  const int32_t group = run.spec.training.GpusPerRank();
  const bool cluster = run.platform.xml_file.empty() && !costs.message_bytes.empty();
  // The transfer across the boundary below stage s (each GPU of a rank sends its share).
  auto transfer_s = [&](int32_t s) {
    const int32_t from = schedule.RankOf(StageIndex(s - 1)).value();
    const int32_t to = schedule.RankOf(StageIndex(s)).value();
    if (!cluster || from == to) return 0.0;
    const int64_t bytes = costs.message_bytes[s - 1] / group;
    double fastest = std::numeric_limits<double>::max();
    for (int32_t shard = 0; shard < group; ++shard) {
      fastest = std::min(fastest, run.platform.UncontendedTransferTime(
                                      run.platform.GpuOf(0, from, shard),
                                      run.platform.GpuOf(0, to, shard), bytes));
    }
    return fastest;
  };
  std::vector<double> hop_s(schedule.num_stages, 0.0);  // hop_s[s]: below stage s
  for (int32_t s = 1; s < schedule.num_stages; ++s) hop_s[s] = transfer_s(s);
  const int32_t tp = run.spec.training.layout.tp;
  const bool rings = tp > 1 && run.platform.xml_file.empty();
  const double step_latency_s = rings ? TpStepLatencyS(run.platform) : 0;
  // The actions numbered rank by rank: first[rank] + position.
  const int32_t ranks = schedule.num_ranks;
  std::vector<uint32_t> first(ranks + 1, 0);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    first[rank + 1] = first[rank] + static_cast<uint32_t>(schedule.orders[rank].size());
  }
  Producers producers(schedule);
  std::vector<double> duration(first[ranks]);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    const std::vector<Action>& order = schedule.orders[rank];
    const int32_t link = rings ? run.platform.GpuOf(0, rank, 0) : 0;
    for (size_t position = 0; position < order.size(); ++position) {
      const Action& action = order[position];
      const uint32_t id = first[rank] + static_cast<uint32_t>(position);
      for (int k = 0; k < action.num_ops(); ++k) producers.Add(action.op(k), id);
      const ComputeLoad load = ComputeLoadOf(costs, action, rings ? tp : 1, step_latency_s);
      double d = load.duration_s;
      if (load.ring_bytes > 0) {
        const double ring_s = run.platform.UncontendedTransferTime(link, link + 1, load.ring_bytes);
        d = run.spec.tp_comm_overlap ? std::max(d, ring_s) : d + ring_s;
      }
      duration[id] = d;
    }
  }
  // Ranks advance in turns, each as far as the outputs its next action needs are done.
  std::vector<double> end(first[ranks], -1.0);
  std::vector<size_t> next(ranks, 0);
  double bound = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (int32_t rank = 0; rank < ranks; ++rank) {
      const std::vector<Action>& order = schedule.orders[rank];
      for (; next[rank] < order.size(); ++next[rank]) {
        const Action& action = order[next[rank]];
        const uint32_t id = first[rank] + static_cast<uint32_t>(next[rank]);
        double start = next[rank] > 0 ? end[id - 1] : 0.0;
        bool ready = true;
        for (int k = 0; k < action.num_ops() && ready; ++k) {
          Need need;
          if (NeedsOf(action.op(k), schedule, &need) == 0) continue;
          const uint32_t producer = producers.Of(need);
          if (producer == id) continue;  // its own op's output (the engines order its ops)
          if (end[producer] < 0) {
            ready = false;
            break;
          }
          const bool across = producer < first[rank] || producer >= first[rank + 1];
          // The boundary crossed is below stage b + 1 (an activation of b, a gradient of b + 1).
          const int32_t below = need.output == Output::kActivation ? need.stage + 1 : need.stage;
          start = std::max(start, end[producer] + (across ? hop_s[below] : 0.0));
        }
        if (!ready) break;
        end[id] = start + duration[id];
        bound = std::max(bound, end[id]);
        progress = true;
      }
    }
  }
  // Then each rank's optimizer step. A schedule that deadlocks stops early (its compilation
  // reports the deadlock).
  const std::vector<double> step_s = OptimizerStepSeconds(schedule, costs);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    if (first[rank + 1] > first[rank] && end[first[rank + 1] - 1] >= 0) {
      bound = std::max(bound, end[first[rank + 1] - 1] + step_s[rank]);
    }
  }
  return bound;
}

// Resolves and prepares `config` (without compiling): its memory and work bound, and for the
// baseline its GPUs and import notes.
Status PrepareOne(const proto::RunConfig& config, const std::shared_ptr<const Locator>& where,
                  Prepared* out) {
  Prepared& p = *out;
  RunSpec spec;
  RETURN_IF_ERROR(ResolveOne(config, where, &spec));
  PreparedRun run;
  RETURN_IF_ERROR(PrepareRun(spec, &run, /*compile=*/false));
  p.ok = true;
  const TrainingSetup& t = run.spec.training;
  p.signature = run.label + "|" + std::to_string(run.schedule.num_ranks) + "|" +
                std::to_string(run.schedule.num_stages) + "|" +
                std::to_string(run.schedule.num_microbatches) + "|" + std::to_string(t.layout.tp) +
                "|" + std::to_string(t.layout.dp) + "|" + std::to_string(t.microbatch_size) + "|" +
                std::string(RecomputeName(t.recompute)) + "|" +
                std::to_string(t.recompute_modules) + "|" + std::to_string(t.offload_modules) +
                "|" + std::to_string(t.zero_stage) + "|" + std::to_string(t.dp_shard) + "|" +
                std::to_string(t.layout.ep) + "|" + std::to_string(run.spec.microbatch_group_size) +
                "|" + std::to_string(run.spec.grad_bucket_bytes) + "|";
  for (int32_t layers : run.layers_per_stage) p.signature += std::to_string(layers) + ",";
  const RunMemory memory = RunMemoryOf(run.spec, run.platform, run.costs);
  // With offload, a lower bound (copies taken as instant); SimGrid's timeline decides (below).
  const std::vector<int64_t> peaks =
      PeakMemoryLowerBoundBytes(run.schedule, run.costs, memory.reserve);
  p.peak_memory_bytes = peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end());
  p.capacity_bytes = memory.capacity_bytes;
  p.work_s = WorkBound(run);
  p.gpus = int64_t{run.schedule.num_ranks} * t.GpusPerRank() * t.layout.dp;
  p.layout = "tp " + std::to_string(t.layout.tp) + " x pp " +
             std::to_string(run.schedule.num_ranks) + " x cp " + std::to_string(t.layout.cp) +
             " x dp " + std::to_string(t.layout.dp);
  p.notes = run.spec.import_notes;
  p.resolved = config;
  p.resolved.set_schedule(run.label);
  p.resolved.set_tp(t.layout.tp);
  p.resolved.set_pp(run.schedule.num_ranks);
  p.resolved.set_microbatch_size(static_cast<int32_t>(t.microbatch_size));
  p.resolved.set_recompute(std::string(RecomputeName(t.recompute)));
  p.resolved.set_sequence_parallel(t.sequence_parallel);
  p.resolved.set_embedding_as_layer(run.spec.layer_split.embedding_as_layer);
  return Status();
}

// The candidate's launch in `framework` (--emit), from its run prepared again.
Status AddLaunch(const std::shared_ptr<const Locator>& where, Framework framework,
                 SearchCandidate* c) {
  proto::RunConfig config = c->config;
  config.set_emit(std::string(FrameworkName(framework)));
  RunSpec spec;
  RETURN_IF_ERROR(ResolveOne(config, where, &spec));
  PreparedRun run;
  RETURN_IF_ERROR(PrepareRun(spec, &run, /*compile=*/false));
  const std::string name = "candidate-" + std::to_string(c->index);
  c->launch.emplace();
  RETURN_IF_ERROR(EmitLaunch(run, framework, name + ".csv", &*c->launch));
  c->import_command = ImportCommand(
      *c->launch, name + (framework == Framework::kMegatron ? ".args" : ".toml"), FlagLocator());
  return Status();
}

Prepared PrepareCandidate(const proto::RunConfig& config,
                          const std::shared_ptr<const Locator>& where) {
  Prepared p;
  const Status status = PrepareOne(config, where, &p);
  if (!status.ok()) {
    p = Prepared();
    p.reason = OneLine(status.message());
  }
  return p;
}

Json PreparedJson(const Prepared& p) {
  return Json{{"ok", p.ok},
              {"reason", p.reason},
              {"signature", p.signature},
              {"peak", p.peak_memory_bytes},
              {"capacity", p.capacity_bytes},
              {"work", p.work_s}};
}

Prepared PreparedOf(const Json& j) {
  Prepared p;
  p.ok = j.at("ok").get<bool>();
  p.reason = j.at("reason").get<std::string>();
  p.signature = j.at("signature").get<std::string>();
  p.peak_memory_bytes = j.at("peak").get<int64_t>();
  p.capacity_bytes = j.at("capacity").get<int64_t>();
  p.work_s = j.at("work").get<double>();
  return p;
}

// Runs in the evaluation's process: SimGrid in this very process.
Executed ExecuteCandidate(const proto::RunConfig& config, EngineKind engine,
                          const std::shared_ptr<const Locator>& where) {
  Executed e;
  RunSpec spec;
  Status status = ResolveOne(config, where, &spec);
  spec.engine = engine;
  PreparedRun run;
  if (status.ok()) status = PrepareRun(spec, &run);
  RunResult result;
  if (status.ok()) {
    status = ExecuteRun(run, &result, nullptr, SimGridProcess::kThisProcess,
                        /*link_figures=*/false);
  }
  if (!status.ok()) {
    e.reason = OneLine(status.message());
    return e;
  }
  e.ok = true;
  e.makespan_s = result.metrics.makespan_s;
  e.tokens_per_s = result.tokens_per_s;
  e.mfu = result.mfu;
  for (const RankMetrics& rank : result.metrics.ranks) {
    e.peak_memory_bytes = std::max(e.peak_memory_bytes, rank.peak_memory_bytes);
  }
  e.dp = result.spec.training.layout.dp;
  e.microbatches = result.num_microbatches;
  e.stages_per_rank = result.num_ranks > 0 ? result.num_stages / result.num_ranks : 0;
  return e;
}

Json ExecutedJson(const Executed& e) {
  return Json{{"ok", e.ok},
              {"reason", e.reason},
              {"makespan", e.makespan_s},
              {"tokens", e.tokens_per_s},
              {"mfu", e.mfu},
              {"peak", e.peak_memory_bytes},
              {"dp", e.dp},
              {"m", e.microbatches},
              {"v", e.stages_per_rank}};
}

Executed ExecutedOf(const Json& j) {
  Executed e;
  e.ok = j.at("ok").get<bool>();
  e.reason = j.at("reason").get<std::string>();
  e.makespan_s = j.at("makespan").get<double>();
  e.tokens_per_s = j.at("tokens").get<double>();
  e.mfu = j.at("mfu").get<double>();
  e.peak_memory_bytes = j.at("peak").get<int64_t>();
  e.dp = j.at("dp").get<int32_t>();
  e.microbatches = j.at("m").get<int32_t>();
  e.stages_per_rank = j.at("v").get<int32_t>();
  return e;
}

// Runs work(0) ... work(n - 1) in `jobs` processes, each returning one JSON text, and hands each
// parsed text (or null when the process failed) with its job to `done`, in completion order.
Status RunInProcesses(int32_t jobs, size_t n, const std::function<Json(size_t)>& work,
                      const std::function<void(size_t, const Json*)>& done) {
  ProcessPool pool(jobs, 0, [&work](size_t job) { return work(job).dump(); });
  size_t next = 0;
  while (next < n || !pool.empty()) {
    while (next < n && !pool.full()) {
      const size_t job = next++;
      Status status = pool.Start(job);
      if (!status.ok()) return Status::Internal("search: " + status.message());
    }
    for (const ProcessPool::Finished& f : pool.Wait()) {
      const bool exited = WIFEXITED(f.wait_status) && WEXITSTATUS(f.wait_status) == 0;
      const Json parsed = exited ? Json::parse(f.output, nullptr, false) : Json();
      done(f.job, parsed.is_discarded() || parsed.is_null() ? nullptr : &parsed);
    }
  }
  return Status();
}

constexpr const char* kBaselinePrefix = "--baseline: ";

// The message of a status about the baseline, starting with "--baseline: " once.
Status AboutBaseline(const Status& status) {
  const std::string& message = status.message();
  return message.starts_with(kBaselinePrefix) ? status
                                              : status.WithMessage(kBaselinePrefix + message);
}

// The baseline's output fields (a search reports it by its own --format and --report).
Status CheckBaselineFields(const proto::RunConfig& baseline, const Locator& where) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  baseline.GetReflection()->ListFields(baseline, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->options().GetExtension(proto::flag).group() != proto::Flag::OUTPUTS) continue;
    if (IsOutputFileField(field->name())) {
      return where.Invalid(field->name(),
                           "the baseline writes no output file; it is simulated as the "
                           "candidates are: run its command with `ppsim run` for one");
    }
    return where.Invalid(field->name(),
                         "not taken by a baseline, which is simulated with SimGrid as the "
                         "candidates are and reported in the search's own outputs");
  }
  if (baseline.schedule().find(',') != std::string::npos) {
    return where.Invalid("schedule", "a baseline is one run; give one schedule, not the list '" +
                                         baseline.schedule() + "'");
  }
  return Status();
}

// The baseline's request: its own fields, the rest from the search's base (see the header).
proto::RunConfig FilledBaseline(const SearchSpace& space, std::vector<std::string>* notes) {
  const proto::RunConfig& base = space.base;
  proto::RunConfig b = space.baseline;
  if (b.platform().empty()) b.set_platform(base.platform());
  if (!b.has_nodes() && base.has_nodes()) b.set_nodes(base.nodes());
  if (b.calibration().empty()) b.set_calibration(base.calibration());
  if (b.memory_reserve().empty()) b.set_memory_reserve(base.memory_reserve());
  std::set<std::string> paths;
  for (const std::string& set : b.set()) paths.insert(set.substr(0, set.find('=')));
  for (const std::string& set : base.set()) {
    if (!paths.count(set.substr(0, set.find('=')))) b.add_set(set);
  }
  const char* framework = !b.megatron().empty()     ? "megatron"
                          : !b.torchtitan().empty() ? "torchtitan"
                                                    : nullptr;
  if (framework == nullptr) {
    if (b.model().empty()) b.set_model(base.model());
    if (b.global_batch().empty()) b.set_global_batch(base.global_batch());
    if (!b.has_seq_len() && base.has_seq_len()) b.set_seq_len(base.seq_len());
  } else if (b.model().empty()) {
    const Locator& where = *space.where;
    notes->push_back("the baseline's model, global batch and sequence length are its " +
                     where.Name(framework) + " configuration's, not the search's " +
                     where.Name("model") + " " + base.model() + " (give them in " +
                     where.Name("baseline") + " to override)");
  }
  return b;
}

// Evaluates the baseline as the candidates are: resolved and prepared (memory, work bound), then
// the critical path and SimGrid, each in a process of its own.
Status EvaluateBaseline(const SearchSpace& space, const SpaceShape& shape,
                        const SearchOptions& options, SearchResult* result) {
  const std::shared_ptr<const Locator>& where = space.baseline_where;
  RETURN_IF_ERROR(AboutBaseline(CheckBaselineFields(space.baseline, *where)));
  SearchCandidate& c = result->baseline;
  c.index = -1;
  c.config = FilledBaseline(space, &result->baseline_notes);
  Prepared p;
  RETURN_IF_ERROR(AboutBaseline(PrepareOne(c.config, where, &p)));
  if (p.gpus != shape.gpus) {
    const std::string cluster =
        space.gpus > 0 ? space.where->Name("gpus") + " " + std::to_string(space.gpus)
                       : space.where->Name("nodes") + " " + std::to_string(space.base.nodes()) +
                             " of " + shape.platform_name;
    return Status::InvalidInput(kBaselinePrefix + p.layout + " = " + std::to_string(p.gpus) +
                                " GPUs, but the candidates run on the search's " +
                                std::to_string(shape.gpus) + " (" + cluster +
                                "); give the baseline " + std::to_string(shape.gpus) +
                                " GPUs (its --tp, --pp, --cp or --dp)");
  }
  result->baseline_notes.insert(result->baseline_notes.end(), p.notes.begin(), p.notes.end());
  // Simulated as requested; shown with what the request resolved to.
  const proto::RunConfig request = c.config;
  c.command = RunCommandLine(request, *space.where);
  c.config = p.resolved;
  c.peak_memory_bytes = p.peak_memory_bytes;
  c.memory_capacity_bytes = p.capacity_bytes;
  c.work_bound_s = p.work_s;
  c.oom = p.capacity_bytes > 0 && p.peak_memory_bytes > p.capacity_bytes;
  const EngineKind engines[] = {EngineKind::kCriticalPath, EngineKind::kSimGrid};
  Executed executed[2];
  RETURN_IF_ERROR(RunInProcesses(
      std::min(options.jobs, 2), 2,
      [&](size_t k) { return ExecutedJson(ExecuteCandidate(request, engines[k], where)); },
      [&](size_t k, const Json* out) {
        if (out != nullptr) executed[k] = ExecutedOf(*out);
      }));
  for (const Executed& e : executed) {
    if (!e.ok) {
      return Status::Internal(kBaselinePrefix + std::string("its simulation failed: ") +
                              (e.reason.empty() ? "the process evaluating it failed" : e.reason));
    }
  }
  c.critical_path_s = executed[0].makespan_s;
  TakeSimulation(executed[1], &c);
  c.speedup = 1;
  result->has_baseline = true;
  return Status();
}

// Each candidate's tokens/s over the baseline's.
void SetSpeedups(SearchResult* result) {
  const double baseline = result->baseline.tokens_per_s;
  for (std::vector<SearchCandidate>* list :
       {&result->ranking, &result->pareto, &result->simulated}) {
    for (SearchCandidate& c : *list) c.speedup = baseline > 0 ? c.tokens_per_s / baseline : 0;
  }
}

// A candidate's place in the order the search refines them: its current bound (or SimGrid's
// time), its peak memory, its index.
using Key = std::tuple<double, int64_t, int64_t>;

// The state of the branch and bound: the simulated candidates' keys, best first.
class Incumbents {
 public:
  explicit Incumbents(size_t top) : top_(top) {}

  void Add(double time_s, int64_t memory, int64_t index) { keys_.insert({time_s, memory, index}); }

  // Whether a candidate whose time is at least `bound` can no longer enter the top K or the
  // Pareto front (see the header).
  bool Prunes(double bound_s, int64_t memory, int64_t index) const {
    if (keys_.size() < top_) return false;
    // A margin for rounding: SimGrid's time and the critical path's are sums in different orders.
    const double bound = bound_s * (1 - 1e-9);
    const Key kth = *std::next(keys_.begin(), static_cast<std::ptrdiff_t>(top_ - 1));
    if (Key{bound, memory, index} < kth) return false;
    for (const Key& k : keys_) {
      const double t = std::get<0>(k);
      if (t > bound) break;
      const int64_t m = std::get<1>(k);
      if (m <= memory && (m < memory || t < bound)) return true;
    }
    return false;
  }

 private:
  size_t top_;
  std::set<Key> keys_;
};

// What one search holds as it goes from tier to tier.
struct SearchRun {
  SearchSpace space;
  SpaceShape shape;
  std::vector<Enumerated> all;              // every candidate of the space
  std::vector<int64_t> mine;                // this shard's valid candidates, by index in all
  std::vector<SearchCandidate> candidates;  // the valid, distinct candidates that fit
  std::map<std::string, int64_t> reasons;   // why candidates were invalid or failed
  SearchCandidate least_memory;             // the valid candidate needing the least memory
  SearchCounts counts;
};

// This shard's candidates: the invalid ones are counted with their reasons, the others kept.
void SelectShard(const SearchOptions& options, SearchRun* run) {
  for (size_t k = 0; k < run->all.size(); ++k) {
    const Enumerated& e = run->all[k];
    if (static_cast<int32_t>(e.group % options.shard_count) != options.shard_index) continue;
    ++run->counts.enumerated;
    if (!e.invalid.empty()) {
      ++run->counts.invalid;
      ++run->reasons[e.invalid];
      continue;
    }
    run->mine.push_back(static_cast<int64_t>(k));
  }
}

// What `space` asks a candidate on a GPU of `capacity_bytes` to leave free.
int64_t HeadroomBytes(const SearchSpace& space, int64_t capacity_bytes) {
  if (space.headroom_bytes >= 0) return space.headroom_bytes;
  return static_cast<int64_t>(
      std::ceil(space.headroom_fraction * static_cast<double>(capacity_bytes)));
}

// Tier 1: resolve, prepare, memory and work, in chunks of candidates per process; then the valid,
// distinct candidates that fit become run->candidates.
Status PrepareTier(const SearchOptions& options, SearchRun* run) {
  const std::vector<int64_t>& mine = run->mine;
  std::vector<Prepared> prepared(mine.size());
  const size_t chunks = (mine.size() + kPrepareChunk - 1) / kPrepareChunk;
  auto chunk_end = [&](size_t chunk) { return std::min(mine.size(), (chunk + 1) * kPrepareChunk); };
  RETURN_IF_ERROR(RunInProcesses(
      options.jobs, chunks,
      [&](size_t chunk) {
        Json out = Json::array();
        for (size_t k = chunk * kPrepareChunk; k < chunk_end(chunk); ++k) {
          out.push_back(PreparedJson(PrepareCandidate(run->all[mine[k]].config, run->space.where)));
        }
        return out;
      },
      [&](size_t chunk, const Json* out) {
        for (size_t k = chunk * kPrepareChunk, i = 0; k < chunk_end(chunk); ++k, ++i) {
          if (out != nullptr && i < out->size()) {
            prepared[k] = PreparedOf((*out)[i]);
          } else {
            prepared[k].reason = "internal error: the process preparing it failed";
          }
        }
      }));
  SearchCounts& counts = run->counts;
  std::set<std::string> signatures;
  for (size_t k = 0; k < mine.size(); ++k) {
    const Prepared& p = prepared[k];
    if (!p.ok) {
      ++counts.invalid;
      ++run->reasons[p.reason];
      continue;
    }
    if (!signatures.insert(p.signature).second) {
      ++counts.duplicates;
      continue;
    }
    ++counts.evaluated;
    SearchCandidate c;
    c.index = mine[k];
    c.config = run->all[mine[k]].config;
    c.command = RunCommandLine(c.config, *run->space.where);
    c.peak_memory_bytes = p.peak_memory_bytes;
    c.memory_capacity_bytes = p.capacity_bytes;
    c.work_bound_s = p.work_s;
    if (run->least_memory.command.empty() ||
        p.peak_memory_bytes < run->least_memory.peak_memory_bytes) {
      run->least_memory = c;
    }
    c.oom = p.capacity_bytes > 0 && p.peak_memory_bytes > p.capacity_bytes;
    if (c.oom) {
      ++counts.oom;
      continue;
    }
    c.no_headroom = p.capacity_bytes > 0 &&
                    p.peak_memory_bytes > p.capacity_bytes - HeadroomBytes(run->space, p.capacity_bytes);
    if (c.no_headroom) {
      ++counts.no_headroom;
      continue;
    }
    run->candidates.push_back(std::move(c));
  }
  return Status();
}

// The diagnosis's levers (SearchResult::levers) on the least-memory candidate.
std::vector<SearchResult::Lever> EvaluateLevers(const SearchRun& run) {
  const proto::RunConfig& least = run.least_memory.config;
  const SpaceShape& shape = run.shape;
  using Change = std::function<bool(proto::RunConfig*)>;  // false: changes nothing
  const Change full = [](proto::RunConfig* c) {
    if (c->recompute() == "full") return false;
    c->set_recompute("full");
    c->clear_recompute_modules();
    return true;
  };
  const Change zero3 = [](proto::RunConfig* c) {
    if (c->zero() == 3 || int64_t{c->dp()} * std::max(c->cp(), 1) == 1) return false;
    c->set_zero(3);
    c->clear_grad_bucket();
    c->clear_dp_shard();
    return true;
  };
  const Change offload = [&shape](proto::RunConfig* c) {
    const std::string all = std::string("attn_norm,qkv_linear,core_attn,attn_proj,mlp_norm") +
                            (shape.experts > 0 ? ",expert_fc1,moe_act" : "");
    if (c->offload_modules() == all) return false;
    c->set_offload_modules(all);
    return true;
  };
  const Change one = [](proto::RunConfig* c) {
    if (c->microbatch_size() == 1) return false;
    c->set_microbatch_size(1);
    return true;
  };
  const Change twice = [&shape](proto::RunConfig* c) {
    if (shape.gpus_per_node == 0 || !c->has_nodes()) return false;
    c->set_nodes(c->nodes() * 2);
    c->set_pp(c->pp() * 2);
    return true;
  };
  const std::pair<std::string, Change> changes[] = {
      {"full recomputation (--recompute full)", full},
      {"ZeRO 3: parameters, gradients and optimizer state sharded (--zero 3)", zero3},
      {"every activation offloaded to host memory (--offload)", offload},
      {"microbatch size 1 (--microbatch-size 1)", one},
      {"twice the GPUs, as twice the pipeline ranks (--nodes, --pp)", twice}};
  std::vector<SearchResult::Lever> levers;
  proto::RunConfig all = least;
  bool any = false;
  const auto evaluate = [&](const std::string& what, const proto::RunConfig& config) {
    SearchResult::Lever lever;
    lever.change = what;
    lever.command = RunCommandLine(config, *run.space.where);
    lever.lower_bound = !config.offload_modules().empty();
    const Prepared p = PrepareCandidate(config, run.space.where);
    if (!p.ok) {
      lever.reason = p.reason;
    } else {
      lever.peak_memory_bytes = p.peak_memory_bytes;
      lever.memory_capacity_bytes = p.capacity_bytes;
      lever.ranks = p.capacity_bytes == 0 ||
                    p.peak_memory_bytes <= p.capacity_bytes - HeadroomBytes(run.space, p.capacity_bytes);
    }
    levers.push_back(std::move(lever));
  };
  for (const auto& [what, change] : changes) {
    proto::RunConfig config = least;
    if (!change(&config)) continue;
    // Together: full recomputation keeps no module input for offload to move.
    if (what.find("--offload") == std::string::npos) change(&all);
    any = true;
    evaluate(what, config);
  }
  if (any && levers.size() > 1) evaluate("all of these together (offload aside)", all);
  return levers;
}

// The most frequent reasons, most first, at most kReasonsShown.
std::vector<std::pair<std::string, int64_t>> TopReasons(
    const std::map<std::string, int64_t>& reasons) {
  std::vector<std::pair<std::string, int64_t>> sorted(reasons.begin(), reasons.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (sorted.size() > kReasonsShown) sorted.resize(kReasonsShown);
  return sorted;
}

// Tiers 2-4: the candidates best first by their current bound (the work, then the critical
// path), in rounds, each refined one tier or pruned; returns the simulated ones.
Status BoundAndSimulate(const SearchOptions& options, SearchRun* run,
                        std::vector<size_t>* simulated) {
  enum class Level { kWork, kCriticalPath };
  using Open = std::tuple<double, int64_t, int64_t, Level, size_t>;
  SearchCounts& counts = run->counts;
  std::vector<SearchCandidate>& candidates = run->candidates;
  std::set<Open> open;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const SearchCandidate& c = candidates[k];
    open.insert({c.work_bound_s, c.peak_memory_bytes, c.index, Level::kWork, k});
  }
  Incumbents incumbents(static_cast<size_t>(options.top));
  while (!open.empty()) {
    std::vector<Open> round;
    for (auto it = open.begin(); it != open.end() && round.size() < kRoundSize;) {
      const auto& [bound, memory, index, level, k] = *it;
      if (incumbents.Prunes(bound, memory, index)) {
        ++(level == Level::kWork ? counts.bounded_out_work : counts.bounded_out_critical_path);
      } else {
        round.push_back(*it);
      }
      it = open.erase(it);
    }
    std::vector<Executed> executed(round.size());
    RETURN_IF_ERROR(RunInProcesses(
        options.jobs, round.size(),
        [&](size_t r) {
          const auto& [bound, memory, index, level, k] = round[r];
          const EngineKind engine =
              level == Level::kWork ? EngineKind::kCriticalPath : EngineKind::kSimGrid;
          return ExecutedJson(ExecuteCandidate(candidates[k].config, engine, run->space.where));
        },
        [&](size_t r, const Json* out) {
          if (out != nullptr) {
            executed[r] = ExecutedOf(*out);
          } else {
            executed[r].reason = "internal error: the process evaluating it failed";
          }
        }));
    for (size_t r = 0; r < round.size(); ++r) {
      const auto& [bound, memory, index, level, k] = round[r];
      SearchCandidate& c = candidates[k];
      const Executed& e = executed[r];
      ++(level == Level::kWork ? counts.critical_path_evaluated : counts.simulated);
      if (!e.ok) {
        ++counts.failed;
        ++run->reasons[e.reason];
        continue;
      }
      if (level == Level::kWork) {
        c.critical_path_s = e.makespan_s;
        open.insert({e.makespan_s, memory, index, Level::kCriticalPath, k});
        continue;
      }
      TakeSimulation(e, &c);
      if (e.peak_memory_bytes > c.peak_memory_bytes) {
        // Offload: the timeline's peak, above the memory tier's bound, decides whether it ranks.
        c.peak_memory_bytes = e.peak_memory_bytes;
        const int64_t capacity = c.memory_capacity_bytes;
        c.oom = capacity > 0 && c.peak_memory_bytes > capacity;
        c.no_headroom = !c.oom && capacity > 0 &&
                        c.peak_memory_bytes > capacity - HeadroomBytes(run->space, capacity);
        if (c.oom || c.no_headroom) {
          --counts.simulated;
          ++(c.oom ? counts.oom : counts.no_headroom);
          continue;
        }
      }
      incumbents.Add(c.iteration_s, c.peak_memory_bytes, c.index);
      simulated->push_back(k);
    }
  }
  return Status();
}

// The ranking (the top K) and the front, from the simulated candidates.
void RankSimulated(const SearchOptions& options, const SearchRun& run,
                   std::vector<size_t> simulated, SearchResult* result) {
  const std::vector<SearchCandidate>& candidates = run.candidates;
  auto key = [&](size_t k) {
    const SearchCandidate& c = candidates[k];
    return Key{c.iteration_s, c.peak_memory_bytes, c.index};
  };
  std::sort(simulated.begin(), simulated.end(),
            [&](size_t a, size_t b) { return key(a) < key(b); });
  for (size_t r = 0; r < simulated.size() && r < static_cast<size_t>(options.top); ++r) {
    result->ranking.push_back(candidates[simulated[r]]);
    SearchCandidate& c = result->ranking.back();
    c.tie = r > 0 && c.iteration_s <= result->ranking.front().iteration_s * (1 + kTieFraction);
  }
  for (size_t k : simulated) result->simulated.push_back(candidates[k]);
  // In ranking order, a candidate is on the front unless one before it has no more memory.
  int64_t least_memory = std::numeric_limits<int64_t>::max();
  for (size_t k : simulated) {
    if (candidates[k].peak_memory_bytes < least_memory) {
      least_memory = candidates[k].peak_memory_bytes;
      result->pareto.push_back(candidates[k]);
    }
  }
}

}  // namespace

Status RunSearch(const SearchSpace& given, const SearchOptions& options, std::ostream& progress,
                 SearchResult* result) {
  const Clock::time_point start = Clock::now();
  *result = SearchResult();
  SearchRun run;
  run.space = given;
  RETURN_IF_ERROR(CheckBase(&run.space, &run.shape));
  // Before the candidates: a baseline refused is an error to report at once.
  if (run.space.has_baseline) {
    RETURN_IF_ERROR(EvaluateBaseline(run.space, run.shape, options, result));
  }
  run.all = Enumerate(run.space, run.shape);
  SelectShard(options, &run);
  RETURN_IF_ERROR(PrepareTier(options, &run));
  const SearchCounts& counts = run.counts;
  if (counts.evaluated == 0) {
    std::string why;
    for (const auto& [reason, count] : TopReasons(run.reasons)) {
      why += (why.empty() ? "" : "; ") + reason + " (" + Plural(count, "candidate") + ")";
    }
    return Status::InvalidInput("ppsim search: no valid configuration among " +
                                Plural(counts.enumerated, "candidate") + ": " + why);
  }
  const auto elapsed = [&] {
    return HumanDuration(std::chrono::duration<double>(Clock::now() - start).count());
  };
  progress << "search: " << elapsed() << ": " << counts.enumerated << " candidates, "
           << counts.invalid << " invalid, " << counts.duplicates << " duplicates, " << counts.oom
           << " out of memory, " << counts.no_headroom << " without the headroom free, "
           << run.candidates.size() << " to bound\n";
  std::vector<size_t> simulated;
  RETURN_IF_ERROR(BoundAndSimulate(options, &run, &simulated));
  progress << "search: " << elapsed() << ": " << counts.critical_path_evaluated
           << " critical-path evaluations, " << counts.simulated << " SimGrid simulations\n";
  RankSimulated(options, run, std::move(simulated), result);
  if (result->has_baseline) SetSpeedups(result);
  if (options.emit) {
    for (std::vector<SearchCandidate>* list : {&result->ranking, &result->pareto}) {
      for (SearchCandidate& c : *list) {
        RETURN_IF_ERROR(AddLaunch(run.space.where, *options.emit, &c));
      }
    }
  }
  result->counts = counts;
  result->reasons = TopReasons(run.reasons);
  result->least_memory_bytes = run.least_memory.peak_memory_bytes;
  result->least_memory_capacity_bytes = run.least_memory.memory_capacity_bytes;
  result->least_memory_command = run.least_memory.command;
  if (result->ranking.empty() && !run.least_memory.command.empty()) {
    result->levers = EvaluateLevers(run);
  }
  result->wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return Status();
}

}  // namespace ppsim
