#include "sim/engine.h"

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

bool HasRings(const TaskGraph& graph) {
  for (size_t t = 0; t < graph.num_compute_tasks(); ++t) {
    if (HasRing(graph, t)) return true;
  }
  return false;
}

bool HasCpRings(const TaskGraph& graph) {
  for (size_t t = 0; t < graph.cp_bytes.size(); ++t) {
    if (HasCpRing(graph, t)) return true;
  }
  return false;
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
