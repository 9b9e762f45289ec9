#include "sim/engine.h"

#include <algorithm>

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
    ForEachSend(graph, platform, task.rank, m,
                [&](int32_t src, int32_t dst) { flows.push_back({src, dst}); });
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

std::map<int32_t, double> AllToAllShares(const TaskGraph& graph, const PlatformSpec& platform) {
  std::map<int32_t, double> shares;
  if (!graph.folded() || !graph.HasMoeParts()) return shares;
  std::map<int32_t, int64_t> total;
  std::map<int32_t, int64_t> compiled;
  int32_t last_rank = -1;
  for (size_t t = 0; t < graph.num_compute_tasks(); ++t) {
    const Task& task = graph.tasks[t];
    // Tasks are in rank order; one task with all-to-alls stands for its rank's flows.
    const TaskProgram* program = graph.ProgramOfTask(t);
    if (program == nullptr || !HasMoeParts(*program) || task.rank == last_rank) continue;
    last_rank = task.rank;
    for (const auto& [link, count] : AllToAllLinkLoads(graph, platform, task.rank)) {
      total[link] += count;
    }
    for (const TaskGpus& flow : AllToAllFlows(graph, platform, task)) {
      const Route route = platform.RouteBetween(flow.src, flow.dst);
      for (int i = 0; i < route.num_links; ++i) ++compiled[route.links[i]];
    }
  }
  for (const auto& [link, count] : compiled) {
    shares[link] = std::max(1.0, static_cast<double>(total[link]) / static_cast<double>(count));
  }
  return shares;
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
    longest = std::max(longest, platform.RouteLatency(flow.src, flow.dst) +
                                    static_cast<double>(bytes) * slowest);
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
