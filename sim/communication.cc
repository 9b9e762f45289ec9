#include "sim/communication.h"

#include <algorithm>
#include <iterator>

namespace ppsim {
namespace {

// Indexed by CommKind.
constexpr std::string_view kCommKindNames[] = {"pp_p2p", "tp",          "cp",
                                               "dp",     "ep_alltoall", "offload"};
static_assert(std::size(kCommKindNames) == kNumCommKinds);

struct Interval {
  double start_s;
  double end_s;
};
using Intervals = std::vector<Interval>;

// One rank's raw intervals: its compute and each kind's activities.
struct RankIntervals {
  Intervals compute;
  std::array<Intervals, kNumCommKinds> kinds;
  // Whether the rank has activities of the kind, even if they take no time (merging drops those).
  std::array<bool, kNumCommKinds> present = {};
};

class Collector {
 public:
  Collector(const TaskGraph& graph, const Timeline& timeline, int32_t num_ranks)
      : graph_(graph), timeline_(timeline), ranks_(static_cast<size_t>(num_ranks)) {}

  std::vector<RankIntervals> Take() {
    // Replica 0's compute tasks come first (TaskGraph::ComputeTask).
    for (size_t t = 0; t < graph_.compute_per_replica; ++t) AddComputeTask(t);
    for (size_t t = graph_.num_compute_tasks(); t < graph_.communication_end(); ++t) {
      AddCommunicationTask(t);
    }
    for (size_t t = graph_.optimizers_begin(); t < graph_.num_tasks(); ++t) {
      if (graph_.tasks[t].replica == 0) AddCompute(graph_.tasks[t].rank, TaskInterval(t));
    }
    return std::move(ranks_);
  }

 private:
  Interval TaskInterval(size_t t) const { return {timeline_.start_s[t], timeline_.end_s[t]}; }

  // Ranks outside [0, num_ranks) are not measured.
  bool Measured(int32_t rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < ranks_.size();
  }
  void AddCompute(int32_t rank, Interval interval) {
    if (Measured(rank)) ranks_[rank].compute.push_back(interval);
  }
  void AddCommunication(int32_t rank, CommKind kind, Interval interval) {
    if (Measured(rank)) ranks_[rank].kinds[static_cast<int>(kind)].push_back(interval);
  }

  void AddComputeTask(size_t t) {
    const Task& task = graph_.tasks[t];
    const TaskProgram* program = graph_.ProgramOfTask(t);
    const double start = timeline_.start_s[t];
    if (program == nullptr || !HasMoeParts(*program)) {
      // After a serial context-parallel exchange, which it waits for.
      int32_t cp = program == nullptr ? -1 : RingPartOf(*program, PartKind::kCpA2a);
      if (cp < 0 && program != nullptr) cp = RingPartOf(*program, PartKind::kCpRing);
      const double begin = cp >= 0 && (*program)[cp].serial
                               ? timeline_.part_end_s[graph_.part_begin[t] + cp]
                               : start;
      AddCompute(task.rank, {begin, begin + task.duration_s});
    }
    if (program == nullptr) return;
    for (size_t i = 0; i < program->size(); ++i) {
      const size_t record = graph_.part_begin[t] + i;
      const Interval part = {timeline_.part_start_s[record], timeline_.part_end_s[record]};
      CommKind kind = CommKind::kEpAllToAll;
      switch ((*program)[i].kind) {
        case PartKind::kCompute:
          AddCompute(task.rank, part);
          continue;
        case PartKind::kAllToAll:
          kind = CommKind::kEpAllToAll;
          break;
        case PartKind::kTpRing:
          kind = CommKind::kTp;
          break;
        case PartKind::kCpRing:
        case PartKind::kCpA2a:
          kind = CommKind::kCp;
          break;
      }
      AddCommunication(task.rank, kind, part);
    }
  }

  void AddCommunicationTask(size_t t) {
    const Task& task = graph_.tasks[t];
    if (task.kind == TaskKind::kTransfer) {
      if (task.peer_replica == 0) AddCommunication(task.peer, CommKind::kPpP2p, TaskInterval(t));
      // In Megatron's and torch's calls the sender blocks too.
      if (graph_.p2p_mode != P2pMode::kEager && task.replica == 0) {
        AddCommunication(task.rank, CommKind::kPpP2p, TaskInterval(t));
      }
    } else if (task.kind == TaskKind::kHostCopy) {
      if (task.replica == 0) AddCommunication(task.rank, CommKind::kOffload, TaskInterval(t));
    } else if (task.kind == TaskKind::kAllReduce ||
               (task.kind == TaskKind::kDelay &&
                !std::binary_search(graph_.bucket_timers.begin(), graph_.bucket_timers.end(),
                                    static_cast<TaskId>(t)))) {
      if (task.replica == 0) AddCommunication(task.rank, CommKind::kDp, TaskInterval(t));
    }
  }

  const TaskGraph& graph_;
  const Timeline& timeline_;
  std::vector<RankIntervals> ranks_;
};

// Sorts `intervals` and merges those that overlap or touch; drops empty ones.
void Merge(Intervals* intervals) {
  const auto earlier = [](const Interval& a, const Interval& b) {
    return a.start_s != b.start_s ? a.start_s < b.start_s : a.end_s < b.end_s;
  };
  // A rank's compute comes in stream order, mostly sorted already: check before sorting.
  if (!std::is_sorted(intervals->begin(), intervals->end(), earlier)) {
    std::sort(intervals->begin(), intervals->end(), earlier);
  }
  size_t out = 0;
  for (const Interval& i : *intervals) {
    if (!(i.end_s > i.start_s)) continue;
    if (out > 0 && i.start_s <= (*intervals)[out - 1].end_s) {
      (*intervals)[out - 1].end_s = std::max((*intervals)[out - 1].end_s, i.end_s);
    } else {
      (*intervals)[out++] = i;
    }
  }
  intervals->resize(out);
}

double Measure(const Intervals& merged) {
  double sum = 0;
  for (const Interval& i : merged) sum += i.end_s - i.start_s;
  return sum;
}

// Calls piece(start, end) for each maximal piece of merged `flight` not covered by merged
// `compute`, in time order. Both sorted and disjoint: one pass over each.
template <class Piece>
void Uncovered(const Intervals& flight, const Intervals& compute, Piece piece) {
  size_t c = 0;
  for (const Interval& f : flight) {
    double from = f.start_s;
    while (c < compute.size() && compute[c].end_s <= from) ++c;
    for (size_t k = c; k < compute.size() && compute[k].start_s < f.end_s && from < f.end_s; ++k) {
      if (compute[k].start_s > from) piece(from, compute[k].start_s);
      from = std::max(from, compute[k].end_s);
    }
    if (from < f.end_s) piece(from, f.end_s);
  }
}

// Each rank's intervals, merged.
std::vector<RankIntervals> MergedIntervals(const TaskGraph& graph, const Timeline& timeline,
                                           int32_t num_ranks) {
  std::vector<RankIntervals> ranks = Collector(graph, timeline, num_ranks).Take();
  for (RankIntervals& r : ranks) {
    Merge(&r.compute);
    for (int k = 0; k < kNumCommKinds; ++k) {
      r.present[k] = !r.kinds[k].empty();
      Merge(&r.kinds[k]);
    }
  }
  return ranks;
}

}  // namespace

std::string_view CommKindName(CommKind kind) { return kCommKindNames[static_cast<int>(kind)]; }

RunCommunication ComputeCommunication(const TaskGraph& graph, const Timeline& timeline,
                                      int32_t num_ranks) {
  RunCommunication run;
  const std::vector<RankIntervals> ranks = MergedIntervals(graph, timeline, num_ranks);
  run.ranks.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (int k = 0; k < kNumCommKinds; ++k) {
      if (!ranks[r].present[k]) continue;
      const Intervals& flight = ranks[r].kinds[k];
      CommSeconds& s = run.ranks[r].kinds[k];
      s.total_s = Measure(flight);
      Uncovered(flight, ranks[r].compute, [&](double a, double b) { s.exposed_s += b - a; });
      const bool first = !run.occurs[k];
      run.occurs[k] = true;
      if (first || s.total_s > run.max[k].total_s) {
        run.max[k].total_s = s.total_s;
        run.total_rank[k] = static_cast<int32_t>(r);
      }
      if (first || s.exposed_s > run.max[k].exposed_s) {
        run.max[k].exposed_s = s.exposed_s;
        run.exposed_rank[k] = static_cast<int32_t>(r);
      }
    }
  }
  return run;
}

std::vector<std::vector<ExposedInterval>> ExposedIntervals(const TaskGraph& graph,
                                                           const Timeline& timeline,
                                                           int32_t num_ranks) {
  const std::vector<RankIntervals> ranks = MergedIntervals(graph, timeline, num_ranks);
  std::vector<std::vector<ExposedInterval>> exposed(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (int k = 0; k < kNumCommKinds; ++k) {
      Uncovered(ranks[r].kinds[k], ranks[r].compute, [&](double a, double b) {
        exposed[r].push_back({a, b, CommKindAt(k)});
      });
    }
  }
  return exposed;
}

std::vector<std::vector<ExposedSegment>> ExposedSegments(const TaskGraph& graph,
                                                         const Timeline& timeline,
                                                         int32_t num_ranks) {
  const std::vector<std::vector<ExposedInterval>> exposed =
      ExposedIntervals(graph, timeline, num_ranks);
  std::vector<std::vector<ExposedSegment>> segments(exposed.size());
  struct Edge {
    double time_s;
    int kind;
    int delta;  // +1 opens, -1 closes
  };
  for (size_t r = 0; r < exposed.size(); ++r) {
    std::vector<Edge> edges;
    edges.reserve(2 * exposed[r].size());
    for (const ExposedInterval& i : exposed[r]) {
      edges.push_back({i.start_s, static_cast<int>(i.kind), 1});
      edges.push_back({i.end_s, static_cast<int>(i.kind), -1});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
      return a.time_s != b.time_s ? a.time_s < b.time_s : a.kind < b.kind;
    });
    // A kind's intervals are disjoint and do not touch (merged), so each kind is open at most once.
    uint32_t open = 0;
    for (size_t e = 0; e < edges.size();) {
      const double at = edges[e].time_s;
      for (; e < edges.size() && edges[e].time_s == at; ++e) {
        const uint32_t bit = uint32_t{1} << edges[e].kind;
        open = edges[e].delta > 0 ? open | bit : open & ~bit;
      }
      if (open == 0 || e == edges.size()) continue;
      std::vector<ExposedSegment>& out = segments[r];
      if (!out.empty() && out.back().kinds == open && out.back().end_s == at) {
        out.back().end_s = edges[e].time_s;
      } else {
        out.push_back({at, edges[e].time_s, open});
      }
    }
  }
  return segments;
}

std::string ExposedKindsName(uint32_t kinds) {
  std::string name;
  for (int k = 0; k < kNumCommKinds; ++k) {
    if ((kinds & (uint32_t{1} << k)) == 0) continue;
    if (!name.empty()) name += '+';
    name += CommKindName(CommKindAt(k));
  }
  return name;
}

}  // namespace ppsim
