#include "sim/engine.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "base/names.h"

namespace ppsim {
namespace {

constexpr NamedValue<EngineKind> kEngineNames[] = {
    {"simgrid", EngineKind::kSimGrid},
    {"critical-path", EngineKind::kCriticalPath},
};

}  // namespace

std::string_view EngineName(EngineKind kind) { return NameOf(kEngineNames, kind); }

Status ParseEngineKind(std::string_view what, std::string_view text, EngineKind* kind) {
  return ParseNamed(kEngineNames, "engine", what, text, kind);
}

namespace {

// Whether GPU src sends to GPU dst (both of one group) in an all-to-all: always, or with
// node-limited routing within its node and to the GPU of its index on the other nodes.
bool SendsTo(const TaskGraph& graph, const PlatformSpec& platform, int32_t src, int32_t dst) {
  return !graph.node_limited_routing || platform.NodeOf(src) == platform.NodeOf(dst) ||
         src % platform.gpus_per_node == dst % platform.gpus_per_node;
}

// Calls visit(src, dst) for each flow of member `m`'s sends in a rank's all-to-all.
template <typename Visit>
void ForEachSend(const TaskGraph& graph, const PlatformSpec& platform, int32_t rank, int32_t m,
                 Visit visit) {
  const int32_t gpus = graph.layout.tp * graph.layout.cp;
  const int32_t e = graph.layout.ep;
  const int32_t base = m / e * e;
  const int32_t src = ExpertMemberGpu(platform, rank, m, gpus);
  for (int32_t j = 1; j < e; ++j) {
    const int32_t peer = base + (m - base + j) % e;
    const int32_t dst = ExpertMemberGpu(platform, rank, peer, gpus);
    if (SendsTo(graph, platform, src, dst)) visit(src, dst);
  }
}

}  // namespace

std::vector<TaskGpus> AllToAllFlows(const TaskGraph& graph, const PlatformSpec& platform,
                                    const Task& task) {
  std::vector<TaskGpus> flows;
  const int32_t gpus = graph.layout.tp * graph.layout.cp;
  const int32_t compiled_members = graph.num_replicas * gpus;
  for (int32_t k = 0; k < gpus; ++k) {
    const int32_t m = task.replica * gpus + k;
    ForEachSend(graph, platform, task.rank, m, [&](int32_t src, int32_t dst) {
      flows.push_back({src, dst});
    });
    if (!graph.folded()) continue;
    // The sends to this GPU from members of replicas not compiled.
    const int32_t dst = ExpertMemberGpu(platform, task.rank, m, gpus);
    const int32_t base = m / graph.layout.ep * graph.layout.ep;
    for (int32_t from = std::max(base, compiled_members); from < base + graph.layout.ep; ++from) {
      const int32_t src = ExpertMemberGpu(platform, task.rank, from, gpus);
      if (SendsTo(graph, platform, src, dst)) flows.push_back({src, dst});
    }
  }
  return flows;
}

std::map<int32_t, int64_t> AllToAllLinkLoads(const TaskGraph& graph, const PlatformSpec& platform,
                                             int32_t rank) {
  std::map<int32_t, int64_t> loads;
  const int32_t members = graph.layout.dp * graph.layout.tp * graph.layout.cp;
  for (int32_t m = 0; m < members; ++m) {
    ForEachSend(graph, platform, rank, m, [&](int32_t src, int32_t dst) {
      const Route route = platform.RouteBetween(src, dst);
      for (int i = 0; i < route.num_links; ++i) ++loads[route.links[i]];
    });
  }
  return loads;
}

namespace {

// Calls visit(task) for one compute task with all-to-alls of each rank (tasks are in rank order).
template <typename Visit>
void ForEachAllToAllRank(const TaskGraph& graph, Visit visit) {
  int32_t last_rank = -1;
  for (size_t t = 0; t < graph.num_compute_tasks(); ++t) {
    const Task& task = graph.tasks[t];
    const TaskProgram* program = graph.ProgramOfTask(t);
    if (program == nullptr || !HasMoeParts(*program) || task.rank == last_rank) continue;
    last_rank = task.rank;
    visit(task);
  }
}

}  // namespace

std::map<int32_t, int64_t> AllToAllTotalLoads(const TaskGraph& graph,
                                              const PlatformSpec& platform) {
  std::map<int32_t, int64_t> total;
  ForEachAllToAllRank(graph, [&](const Task& task) {
    for (const auto& [link, count] : AllToAllLinkLoads(graph, platform, task.rank)) {
      total[link] += count;
    }
  });
  return total;
}

std::map<int32_t, double> AllToAllShares(const TaskGraph& graph, const PlatformSpec& platform) {
  std::map<int32_t, double> shares;
  if (!graph.folded() || !graph.HasMoeParts()) return shares;
  std::map<int32_t, int64_t> total = AllToAllTotalLoads(graph, platform);
  std::map<int32_t, int64_t> compiled;
  ForEachAllToAllRank(graph, [&](const Task& task) {
    for (const TaskGpus& flow : AllToAllFlows(graph, platform, task)) {
      const Route route = platform.RouteBetween(flow.src, flow.dst);
      for (int i = 0; i < route.num_links; ++i) ++compiled[route.links[i]];
    }
  });
  for (const auto& [link, count] : compiled) {
    shares[link] = std::max(1.0, static_cast<double>(total[link]) / static_cast<double>(count));
  }
  return shares;
}

namespace {

// Splits `members` (indices into `routes`) until at each position they cross one link or each a
// different one, appending the groups to `out`: at the first position where they cross several
// links, each link crossed by several members makes a group of them, the members crossing a
// shadowed link (share above 1) alone stay together, and a member alone on a link it shares with
// the pipeline's other transfers (share 1) is a group of its own.
void SplitGroup(const std::vector<Route>& routes, const std::map<int32_t, double>& shares,
                std::vector<size_t> members, std::vector<std::vector<size_t>>* out) {
  auto shadowed = [&](int32_t link) {
    const auto share = shares.find(link);
    return share != shares.end() && share->second > 1;
  };
  for (int p = 0; p < routes[members[0]].num_links; ++p) {
    std::vector<std::pair<int32_t, std::vector<size_t>>> by_link;  // in order of first use
    for (size_t i : members) {
      auto it = std::find_if(by_link.begin(), by_link.end(),
                             [&](const auto& entry) { return entry.first == routes[i].links[p]; });
      if (it == by_link.end()) {
        by_link.push_back({routes[i].links[p], {i}});
      } else {
        it->second.push_back(i);
      }
    }
    if (by_link.size() == 1) continue;
    const bool all_shadowed = std::all_of(by_link.begin(), by_link.end(),
                                          [&](const auto& entry) { return shadowed(entry.first); });
    if (by_link.size() == members.size() && all_shadowed) continue;
    std::vector<size_t> alone;
    for (auto& [link, crossing] : by_link) {
      if (crossing.size() == 1 && shadowed(link)) {
        alone.push_back(crossing[0]);
      } else {
        SplitGroup(routes, shares, std::move(crossing), out);
      }
    }
    if (!alone.empty()) SplitGroup(routes, shares, std::move(alone), out);
    return;
  }
  out->push_back(std::move(members));
}

}  // namespace

std::vector<AllToAllGroup> GroupAllToAllFlows(const TaskGraph& graph, const PlatformSpec& platform,
                                              const std::vector<TaskGpus>& flows,
                                              const std::map<int32_t, int64_t>& total_loads,
                                              const std::map<int32_t, double>& shares) {
  std::vector<AllToAllGroup> groups;
  std::vector<Route> routes;
  routes.reserve(flows.size());
  for (const TaskGpus& flow : flows) routes.push_back(platform.RouteBetween(flow.src, flow.dst));
  if (!graph.folded()) {
    for (size_t i = 0; i < flows.size(); ++i) {
      AllToAllGroup group;
      group.ends = flows[i];
      group.members = {flows[i]};
      for (int p = 0; p < routes[i].num_links; ++p) {
        if (platform.Link(routes[i].links[p]).fatpipe) group.fatpipe |= 1u << p;
      }
      groups.push_back(group);
    }
    return groups;
  }
  // Candidates: flows alike in bytes and, position by position, in fair share and kind.
  using Key = std::tuple<bool, int, std::vector<std::pair<double, bool>>>;
  std::map<Key, size_t> candidate_of;
  std::vector<std::vector<size_t>> candidates;
  for (size_t i = 0; i < flows.size(); ++i) {
    Key key{
        platform.NodeOf(flows[i].src) == platform.NodeOf(flows[i].dst), routes[i].num_links, {}};
    for (int p = 0; p < routes[i].num_links; ++p) {
      const LinkSpec link = platform.Link(routes[i].links[p]);
      const auto total = total_loads.find(routes[i].links[p]);
      const double loads = total == total_loads.end() ? 1.0 : static_cast<double>(total->second);
      std::get<2>(key).emplace_back(link.bandwidth_bytes_per_s / loads, link.fatpipe);
    }
    auto [it, added] = candidate_of.try_emplace(std::move(key), candidates.size());
    if (added) candidates.emplace_back();
    candidates[it->second].push_back(i);
  }
  std::vector<std::vector<size_t>> members;
  for (std::vector<size_t>& candidate : candidates) {
    SplitGroup(routes, shares, std::move(candidate), &members);
  }
  std::sort(members.begin(), members.end(),
            [](const std::vector<size_t>& a, const std::vector<size_t>& b) { return a[0] < b[0]; });
  for (const std::vector<size_t>& group_members : members) {
    AllToAllGroup group;
    group.ends = flows[group_members[0]];
    group.count = static_cast<int32_t>(group_members.size());
    for (size_t i : group_members) group.members.push_back(flows[i]);
    const Route& route = routes[group_members[0]];
    for (int p = 0; p < route.num_links; ++p) {
      if (platform.Link(route.links[p]).fatpipe) group.fatpipe |= 1u << p;
      if (group.count > 1 && routes[group_members[1]].links[p] != route.links[p]) {
        group.distinct |= 1u << p;
      }
    }
    groups.push_back(group);
  }
  return groups;
}

void EqualizeAllToAllGroups(
    const PlatformSpec& platform,
    std::map<std::pair<int32_t, int32_t>, std::vector<AllToAllGroup>>* groups) {
  // The member counts of the merged flows crossing each link they share with other flows.
  std::map<int32_t, std::set<int32_t>> counts;
  for (const auto& [key, list] : *groups) {
    for (const AllToAllGroup& group : list) {
      const Route route = platform.RouteBetween(group.ends.src, group.ends.dst);
      for (int p = 0; p < route.num_links; ++p) {
        if (((group.distinct | group.fatpipe) >> p & 1) == 0) {
          counts[route.links[p]].insert(group.count);
        }
      }
    }
  }
  // Where flows of several counts meet, each crosses a link of its own instead (its members'
  // fair shares summed): no flow then shares a link with one of another count.
  for (auto& [key, list] : *groups) {
    for (AllToAllGroup& group : list) {
      const Route route = platform.RouteBetween(group.ends.src, group.ends.dst);
      for (int p = 0; p < route.num_links; ++p) {
        if (((group.distinct | group.fatpipe) >> p & 1) == 0 &&
            counts[route.links[p]].size() > 1) {
          group.distinct |= 1u << p;
        }
      }
    }
  }
}

double AllToAllTime(const TaskGraph& graph, const PlatformSpec& platform,
                    const std::vector<TaskGpus>& flows, const std::map<int32_t, int64_t>& loads,
                    const TaskPart& part) {
  double longest = 0;
  for (const TaskGpus& flow : flows) {
    const int64_t bytes = FlowBytes(graph, platform, flow, part);
    const Route route = platform.RouteBetween(flow.src, flow.dst);
    double slowest = 0;  // seconds per byte at the narrowest share
    for (int i = 0; i < route.num_links; ++i) {
      const LinkSpec link = platform.Link(route.links[i]);
      const auto load = loads.find(route.links[i]);
      const double sharers = link.fatpipe || load == loads.end() ? 1 : load->second;
      slowest = std::max(slowest, sharers / link.bandwidth_bytes_per_s);
    }
    longest = std::max(
        longest, platform.RouteLatency(flow.src, flow.dst) + static_cast<double>(bytes) * slowest);
  }
  return longest;
}

Status Execute(EngineKind kind, const TaskGraph& graph, const PlatformSpec& platform,
               Timeline* timeline, SimGridProcess process) {
  if (kind == EngineKind::kCriticalPath && !platform.xml_file.empty()) {
    // PrepareRun refuses this with a message where the engine was chosen.
    return Status::Internal("critical-path: the routes of the XML platform " + platform.xml_file +
                            " are known to SimGrid only");
  }
  Status status = Status::Internal("unknown engine");
  switch (kind) {
    case EngineKind::kSimGrid:
      status = process == SimGridProcess::kChild ? RunSimGrid(graph, platform, timeline)
                                                 : SimulateInThisProcess(graph, platform, timeline);
      break;
    case EngineKind::kCriticalPath:
      status = RunCriticalPath(graph, platform, timeline);
      break;
  }
  if (!status.ok()) return status;
  // A wait starts when its rank reached the call.
  for (size_t i = 0; i < graph.wait_after.size(); ++i) {
    const TaskId before = graph.wait_after[i];
    timeline->start_s[graph.waits_begin + i] =
        before == TaskGraph::kNoTask ? 0.0 : timeline->end_s[before];
  }
  return Status();
}

}  // namespace ppsim
