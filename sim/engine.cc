#include "sim/engine.h"

namespace ppsim {
namespace {

struct EngineEntry {
  EngineKind kind;
  std::string_view name;
};
constexpr EngineEntry kEngineNames[] = {
    {EngineKind::kSimGrid, "simgrid"},
    {EngineKind::kCriticalPath, "critical-path"},
};

}  // namespace

std::string_view EngineName(EngineKind kind) {
  for (const auto& e : kEngineNames) {
    if (e.kind == kind) return e.name;
  }
  return "?";
}

Status ParseEngineKind(std::string_view what, std::string_view text, EngineKind* kind) {
  std::string valid;
  for (const auto& e : kEngineNames) {
    if (e.name == text) {
      *kind = e.kind;
      return Status();
    }
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status::InvalidInput(std::string(what) + ": unknown engine '" + std::string(text) +
                              "'; valid: " + valid);
}

Status Execute(EngineKind kind, const TaskGraph& graph, const PlatformSpec& platform,
               Timeline* timeline) {
  if (kind == EngineKind::kCriticalPath && !platform.xml_file.empty()) {
    return Status::InvalidInput("--engine: critical-path needs a cluster (a preset or a cluster "
                                "file); the routes of the XML platform " + platform.xml_file +
                                " are known to SimGrid only; use --engine simgrid");
  }
  switch (kind) {
    case EngineKind::kSimGrid: return RunSimGrid(graph, platform, timeline);
    case EngineKind::kCriticalPath: return RunCriticalPath(graph, platform, timeline);
  }
  return Status::Internal("unknown engine");
}

}  // namespace ppsim
