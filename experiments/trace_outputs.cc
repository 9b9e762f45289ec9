#include "experiments/trace_outputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "base/escape.h"
#include "base/files.h"
#include "config/units.h"
#include "traces/chrome_trace.h"
#include "traces/perfetto_trace.h"
#include "traces/timeline_picture.h"

namespace ppsim {
namespace {

// The part of a path after its folder.
size_t NameStart(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? 0 : slash + 1;
}

// The extension, the ".gz" of a compressed file included: "t.pftrace.gz" -> ".pftrace.gz".
std::string Extension(const std::string& path) {
  const std::string name = path.substr(NameStart(path));
  const std::string base = OutputFile::Gzipped(name) ? name.substr(0, name.size() - 3) : name;
  const size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  return name.substr(dot);
}

Status CheckPath(const std::string& flag, const std::string& path,
                 const std::vector<std::string>& extensions, const std::string& hint) {
  if (path.empty()) return Status();
  const std::string extension = Extension(path);
  bool fits = false;
  for (const std::string& e : extensions) fits = fits || extension == e;
  if (!fits) {
    std::string valid;
    for (size_t i = 0; i < extensions.size(); ++i) {
      valid += (i == 0 ? "" : i + 1 == extensions.size() ? " or " : ", ") + extensions[i];
    }
    return Status::InvalidInput(flag + ": " + Quoted(path) + " must end in " + valid + hint);
  }
  const size_t start = NameStart(path);
  const std::string folder = start == 0 ? "." : path.substr(0, start);
  struct stat info;
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Status::InvalidInput(flag + ": cannot write " + Quoted(path) + ": folder " +
                                Quoted(folder) + " does not exist");
  }
  return Status();
}

std::string InsertLabel(const std::string& path, const std::string& label) {
  if (path.empty()) return path;
  const std::string extension = Extension(path);
  std::string safe = label;
  for (char& c : safe) {
    if (c == '/' || c == ' ') c = '_';
  }
  return path.substr(0, path.size() - extension.size()) + "." + safe + extension;
}

TraceRun TraceRunOf(const PreparedRun& run, const RunResult& result, const Timeline& timeline) {
  TraceRun trace;
  trace.schedule = &run.schedule;
  trace.costs = &run.costs;
  trace.graph = &run.graph;
  trace.timeline = &timeline;
  trace.platform = &run.platform;
  trace.metrics = &result.metrics;
  return trace;
}


TimelinePicture PictureOf(const PreparedRun& run, const RunResult& result,
                          const Timeline& timeline, const TraceWindow& window) {
  const RunMetrics& m = result.metrics;
  std::string title = result.label + " · pp " + std::to_string(result.num_ranks) + " · " +
                      std::to_string(result.num_microbatches) + " microbatches";
  if (result.num_stages != result.num_ranks) {
    title += " · " + std::to_string(result.num_stages) + " stages";
  }
  if (run.platform.layout.dp > 1) title += " · dp " + std::to_string(run.platform.layout.dp);
  if (run.spec.training.layout.tp > 1)
    title += " · tp " + std::to_string(run.spec.training.layout.tp);
  if (run.spec.training.layout.cp > 1)
    title += " · cp " + std::to_string(run.spec.training.layout.cp);
  title += " · " + result.platform;
  if (!result.model.empty()) title += " · " + result.model;
  int64_t peak = 0;
  int32_t peak_rank = 0;
  for (const RankMetrics& r : m.ranks) {
    if (r.peak_memory_bytes > peak) {
      peak = r.peak_memory_bytes;
      peak_rank = r.rank;
    }
  }
  std::vector<std::string> subtitle = {
      "makespan " + HumanDuration(m.makespan_s) + " · bubble " +
      HumanPercent(m.bubble_over_makespan) + " of ranks × makespan · peak memory " +
      HumanBytes(static_cast<double>(peak)) + " (rank " + std::to_string(peak_rank) + ")"};
  if (!window.all()) {
    subtitle.push_back("microbatches " + std::to_string(window.first_microbatch) + " to " +
                       (window.end_microbatch < 0 ? std::to_string(result.num_microbatches - 1)
                                                  : std::to_string(window.end_microbatch - 1)) +
                       " only");
  }
  TimelinePicture picture = BuildTimelinePicture(TraceRunOf(run, result, timeline), window,
                                                 std::move(title), std::move(subtitle));
  // The axis runs to the end of the iteration, all-reduces included.
  if (window.all()) picture.end_ns = std::max(picture.end_ns, TraceNs(m.makespan_s));
  return picture;
}

Status WritePicture(std::string_view flag, const std::string& path,
                    const TimelinePicture& picture) {
  return WriteWholeFile(flag, path,
                        Extension(path) == ".svg" ? TimelineSvg(picture) : TimelineHtml(picture));
}

}  // namespace

Status CheckTraceOutputs(const TraceOutputs& outputs, const Locator& where) {
  Status status = CheckPath(where.Where("trace"), outputs.perfetto_path,
                            {".pftrace", ".pftrace.gz"}, "; for JSON use " +
                                where.Name("chrome_trace"));
  if (status.ok()) {
    status = CheckPath(where.Where("chrome_trace"), outputs.chrome_path, {".json", ".json.gz"},
                       "");
  }
  if (status.ok()) {
    status = CheckPath(where.Where("timeline"), outputs.timeline_path, {".svg", ".html"}, "");
  }
  return status;
}

TraceOutputs OutputsOfRun(const TraceOutputs& outputs, const std::string& label) {
  TraceOutputs o = outputs;
  o.perfetto_path = InsertLabel(o.perfetto_path, label);
  o.chrome_path = InsertLabel(o.chrome_path, label);
  o.timeline_path = InsertLabel(o.timeline_path, label);
  return o;
}

Status WriteTraceOutputs(const TraceOutputs& outputs, const PreparedRun& run,
                         const RunResult& result, const Timeline& timeline,
                         const std::string& command) {
  const Locator& where = *run.spec.where;
  RETURN_IF_ERROR(CheckTraceWindow(where.Where("trace_microbatches"), outputs.window,
                                   run.schedule.num_microbatches));
  TraceRun trace = TraceRunOf(run, result, timeline);
  trace.attributes = {{"ppsim_version", PPSIM_VERSION},
                      {"command", command},
                      {"schedule", result.label},
                      {"ranks", std::to_string(result.num_ranks)},
                      {"stages", std::to_string(result.num_stages)},
                      {"microbatches", std::to_string(result.num_microbatches)},
                      {"dp", std::to_string(run.platform.layout.dp)},
                      {"tp", std::to_string(run.spec.training.layout.tp)},
                      {"cp", std::to_string(run.spec.training.layout.cp)},
                      {"platform", result.platform},
                      {"engine", std::string(EngineName(run.spec.engine))},
                      {"makespan_ns", std::to_string(TraceNs(result.metrics.makespan_s))}};
  if (!result.model.empty()) trace.attributes.push_back({"model", result.model});
  if (!outputs.perfetto_path.empty()) {
    RETURN_IF_ERROR(
        WritePerfettoTrace(trace, outputs.window, where.Where("trace"), outputs.perfetto_path));
  }
  if (!outputs.chrome_path.empty()) {
    RETURN_IF_ERROR(
        WriteChromeTrace(trace, outputs.window, where.Where("chrome_trace"), outputs.chrome_path));
  }
  if (!outputs.timeline_path.empty()) {
    RETURN_IF_ERROR(WritePicture(where.Where("timeline"), outputs.timeline_path,
                                 PictureOf(run, result, timeline, outputs.window)));
  }
  return Status();
}

Status WriteTimelinePicture(std::string_view what, const std::string& path, const PreparedRun& run,
                            const RunResult& result, const Timeline& timeline) {
  return WritePicture(what, path, PictureOf(run, result, timeline, TraceWindow()));
}

}  // namespace ppsim
