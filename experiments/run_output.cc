#include "experiments/run_output.h"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdio>

#include "base/json.h"
#include "base/names.h"
#include "models/units.h"

namespace ppsim {
namespace {

constexpr NamedValue<OutputFormat> kFormatNames[] = {
    {"table", OutputFormat::kTable},
    {"json", OutputFormat::kJson},
    {"csv", OutputFormat::kCsv},
};

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2f%%", 100 * fraction);
  return buffer;
}

int64_t MaxPeak(const RunMetrics& m) {
  int64_t peak = 0;
  for (const RankMetrics& r : m.ranks) peak = std::max(peak, r.peak_activation_bytes);
  return peak;
}

int64_t MaxPeakMemory(const RunMetrics& m) {
  int64_t peak = 0;
  for (const RankMetrics& r : m.ranks) peak = std::max(peak, r.peak_memory_bytes);
  return peak;
}

// "71.3 GiB of 80 GiB", with " OOM" when it does not fit.
std::string MemoryOf(const RankMetrics& k) {
  std::string text = HumanBytes(static_cast<double>(k.peak_memory_bytes));
  if (k.memory_capacity_bytes > 0) {
    text += " of " + HumanBytes(static_cast<double>(k.memory_capacity_bytes));
  }
  return text + (k.oom ? "  OOM" : "");
}

}  // namespace

nlohmann::ordered_json RunJson(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  nlohmann::ordered_json o;
  o["schedule"] = r.label;
  o["pp"] = r.num_ranks;
  o["stages"] = r.num_stages;
  o["microbatches"] = r.num_microbatches;
  o["platform"] = r.platform;
  o["engine"] = std::string(EngineName(r.spec.engine));
  o["dp"] = r.spec.training.dp;
  o["tp"] = r.spec.training.tp;
  o["cp"] = r.spec.training.cp;
  o["makespan_s"] = JsonNumber(m.makespan_s);
  o["bubble_over_makespan"] = JsonNumber(m.bubble_over_makespan);
  o["bubble_over_ideal"] = JsonNumber(m.bubble_over_ideal);
  o["stage_bubble_rate"] = JsonNumber(m.stage_bubble_rate);
  o["peak_activation_bytes"] = MaxPeak(m);
  o["compute_tasks"] = m.num_compute_tasks;
  o["transfer_tasks"] = m.num_transfer_tasks;
  o["transfer_bytes"] = m.transfer_bytes;
  o["allreduce_tasks"] = m.num_allreduce_tasks;
  o["allreduce_bytes"] = m.allreduce_bytes;
  o["allreduce_tail_s"] = JsonNumber(m.allreduce_tail_s);
  o["p2p_mode"] = std::string(P2pModeName(r.spec.p2p_mode));
  o["p2p_wait_s"] = JsonNumber(m.p2p_wait_s);
  o["optimizer_tasks"] = m.num_optimizer_tasks;
  auto traffic = [](const TrafficMetrics& t) {
    nlohmann::ordered_json j;
    j["transfers"] = t.transfers;
    j["bytes"] = t.bytes;
    j["time_s"] = JsonNumber(t.time_s);
    return j;
  };
  o["traffic"]["intra_node"] = traffic(m.intra_node);
  o["traffic"]["inter_node"] = traffic(m.inter_node);
  o["peak_memory_bytes"] = MaxPeakMemory(m);
  o["oom"] = m.oom_ranks > 0;
  o["oom_ranks"] = m.oom_ranks;
  if (!r.model.empty()) {
    o["model"] = r.model;
    o["model_flops"] = JsonNumber(r.model_flops);
    o["mfu"] = JsonNumber(r.mfu);
  }
  o["ranks"] = nlohmann::ordered_json::array();
  for (const RankMetrics& k : m.ranks) {
    nlohmann::ordered_json rank;
    rank["rank"] = k.rank;
    rank["busy_s"] = JsonNumber(k.busy_s);
    rank["span_s"] = JsonNumber(k.span_s);
    rank["idle_in_span_s"] = JsonNumber(k.idle_in_span_s);
    rank["first_start_s"] = JsonNumber(k.first_start_s);
    rank["last_end_s"] = JsonNumber(k.last_end_s);
    rank["p2p_wait_s"] = JsonNumber(k.p2p_wait_s);
    rank["optimizer_s"] = JsonNumber(k.optimizer_s);
    rank["peak_activation_bytes"] = k.peak_activation_bytes;
    rank["peak_activation_time_s"] = JsonNumber(k.peak_activation_time_s);
    rank["static_memory_bytes"] = k.static_memory_bytes;
    rank["reserve_bytes"] = k.reserve_bytes;
    rank["peak_memory_bytes"] = k.peak_memory_bytes;
    rank["memory_capacity_bytes"] = k.memory_capacity_bytes;
    rank["oom"] = k.oom;
    o["ranks"].push_back(std::move(rank));
  }
  o["links"] = nlohmann::ordered_json::array();
  for (const LinkMetrics& l : m.links) {
    nlohmann::ordered_json link;
    link["link"] = l.name;
    link["inter_node"] = l.inter_node;
    link["bandwidth_bytes_per_s"] = JsonNumber(l.bandwidth_bytes_per_s);
    link["transfers"] = l.transfers;
    link["bytes"] = l.bytes;
    link["busy_s"] = JsonNumber(l.busy_s);
    link["utilization"] = JsonNumber(l.utilization);
    o["links"].push_back(std::move(link));
  }
  return o;
}

namespace {

const char* kCsvHeader =
    "schedule,pp,stages,microbatches,platform,engine,makespan_s,bubble_over_makespan,"
    "bubble_over_ideal,stage_bubble_rate,peak_activation_bytes,compute_tasks,transfer_tasks,"
    "transfer_bytes,peak_memory_bytes,oom_ranks,mfu,dp,tp,allreduce_tail_s,intra_node_bytes,"
    "inter_node_bytes\n";

std::string CsvRow(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  return CsvField(r.label) + "," + std::to_string(r.num_ranks) + "," +
         std::to_string(r.num_stages) + "," + std::to_string(r.num_microbatches) + "," +
         CsvField(r.platform) + "," + std::string(EngineName(r.spec.engine)) + "," +
         FormatNumber(m.makespan_s) + "," + FormatNumber(m.bubble_over_makespan) + "," +
         FormatNumber(m.bubble_over_ideal) + "," + FormatNumber(m.stage_bubble_rate) + "," +
         std::to_string(MaxPeak(m)) + "," + std::to_string(m.num_compute_tasks) + "," +
         std::to_string(m.num_transfer_tasks) + "," + std::to_string(m.transfer_bytes) + "," +
         std::to_string(MaxPeakMemory(m)) + "," + std::to_string(m.oom_ranks) + "," +
         FormatNumber(r.mfu) + "," + std::to_string(r.spec.training.dp) + "," +
         std::to_string(r.spec.training.tp) + "," + FormatNumber(m.allreduce_tail_s) + "," +
         std::to_string(m.intra_node.bytes) + "," + std::to_string(m.inter_node.bytes) + "\n";
}

}  // namespace

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

namespace {

std::string SingleTable(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  std::string out = r.label + ": " + std::to_string(r.num_ranks) + " ranks, " +
                    std::to_string(r.num_stages) + " stages, " +
                    std::to_string(r.num_microbatches) + " microbatches on " + r.platform +
                    " (" + std::string(EngineName(r.spec.engine)) + " engine)\n";
  std::vector<std::vector<std::string>> summary = {
      {"makespan", HumanDuration(m.makespan_s)},
      {"bubble / makespan", Percent(m.bubble_over_makespan)},
      {"bubble / ideal", Percent(m.bubble_over_ideal)},
      {"stage bubble rate", Percent(m.stage_bubble_rate)},
      {"tasks", std::to_string(m.num_compute_tasks) + " compute, " +
                    std::to_string(m.num_transfer_tasks) + " transfers (" +
                    HumanBytes(static_cast<double>(m.transfer_bytes)) + ")"},
  };
  if (!r.model.empty()) {
    summary.push_back({"model", r.model + ", " + HumanFlops(r.model_flops) +
                                    " per iteration, MFU " + Percent(r.mfu)});
  }
  const int32_t dp = r.spec.training.dp;
  const int32_t tp = r.spec.training.tp;
  const int32_t cp = r.spec.training.cp;
  if (dp > 1 || tp > 1 || cp > 1) {
    summary.push_back({"parallelism", "dp " + std::to_string(dp) + " x pp " +
                                          std::to_string(r.num_ranks) + " x tp " +
                                          std::to_string(tp) +
                                          (cp > 1 ? " x cp " + std::to_string(cp) : "") + " = " +
                                          std::to_string(dp * r.num_ranks * tp * cp) + " GPUs"});
  }
  if (r.spec.p2p_mode != P2pMode::kEager) {
    summary.push_back({"p2p calls", std::string(P2pModeName(r.spec.p2p_mode)) + ": " +
                                        std::to_string(m.num_wait_tasks) + " waits, " +
                                        HumanDuration(m.p2p_wait_s) +
                                        " blocked in them (all ranks)"});
  }
  if (m.num_allreduce_tasks > 0) {
    summary.push_back({"all-reduce", std::to_string(m.num_allreduce_tasks) + " ring steps (" +
                                         HumanBytes(static_cast<double>(m.allreduce_bytes)) +
                                         "), ends " + HumanDuration(m.allreduce_tail_s) +
                                         " after the last compute"});
  }
  if (m.intra_node.transfers + m.inter_node.transfers > 0) {
    auto traffic = [](const TrafficMetrics& t) {
      return std::to_string(t.transfers) + " transfers, " +
             HumanBytes(static_cast<double>(t.bytes));
    };
    summary.push_back({"traffic", "intra-node " + traffic(m.intra_node) + "; inter-node " +
                                      traffic(m.inter_node)});
  }
  if (m.oom_ranks > 0) {
    summary.push_back({"out of memory", std::to_string(m.oom_ranks) + " of " +
                                            std::to_string(m.ranks.size()) + " ranks"});
  }
  out += FormatColumns(summary);
  bool reserved = false;
  for (const RankMetrics& k : m.ranks) reserved = reserved || k.reserve_bytes > 0;
  std::vector<std::vector<std::string>> rows = {
      {"rank", "busy", "span", "idle in span", "peak activation", "static", "peak memory"}};
  if (reserved) rows[0].insert(rows[0].end() - 1, "reserve");
  for (const RankMetrics& k : m.ranks) {
    rows.push_back({std::to_string(k.rank), HumanDuration(k.busy_s), HumanDuration(k.span_s),
                    HumanDuration(k.idle_in_span_s),
                    HumanBytes(static_cast<double>(k.peak_activation_bytes)),
                    HumanBytes(static_cast<double>(k.static_memory_bytes)), MemoryOf(k)});
    if (reserved) {
      rows.back().insert(rows.back().end() - 1, HumanBytes(static_cast<double>(k.reserve_bytes)));
    }
  }
  out += "\n" + FormatColumns(rows);
  if (!m.links.empty()) {
    // The busiest links: longest busy time first, then most bytes, then platform order.
    std::vector<const LinkMetrics*> links;
    for (const LinkMetrics& l : m.links) links.push_back(&l);
    std::stable_sort(links.begin(), links.end(), [](const LinkMetrics* a, const LinkMetrics* b) {
      return a->busy_s != b->busy_s ? a->busy_s > b->busy_s : a->bytes > b->bytes;
    });
    constexpr size_t kShown = 5;
    std::vector<std::vector<std::string>> link_rows = {
        {"busiest links", "transfers", "bytes", "busy", "busy/makespan", "utilization"}};
    for (size_t i = 0; i < links.size() && i < kShown; ++i) {
      const LinkMetrics& l = *links[i];
      link_rows.push_back({l.name, std::to_string(l.transfers),
                           HumanBytes(static_cast<double>(l.bytes)), HumanDuration(l.busy_s),
                           Percent(m.makespan_s > 0 ? l.busy_s / m.makespan_s : 0),
                           Percent(l.utilization)});
    }
    out += "\n" + FormatColumns(link_rows);
    if (links.size() > kShown) {
      out += "(" + std::to_string(links.size() - kShown) + " more links in --format json)\n";
    }
  }
  return out;
}

std::string ComparisonTable(const std::vector<RunResult>& results) {
  std::vector<std::vector<std::string>> rows = {{"schedule", "ranks", "microbatches", "makespan",
                                                 "bubble/makespan", "bubble/ideal",
                                                 "stage bubble", "peak activation",
                                                 "peak memory", "OOM ranks"}};
  for (const RunResult& r : results) {
    const RunMetrics& m = r.metrics;
    rows.push_back({r.label, std::to_string(r.num_ranks), std::to_string(r.num_microbatches),
                    HumanDuration(m.makespan_s), Percent(m.bubble_over_makespan),
                    Percent(m.bubble_over_ideal), Percent(m.stage_bubble_rate),
                    HumanBytes(static_cast<double>(MaxPeak(m))),
                    HumanBytes(static_cast<double>(MaxPeakMemory(m))),
                    std::to_string(m.oom_ranks)});
  }
  return FormatColumns(rows);
}

}  // namespace

Status ParseOutputFormat(std::string_view what, std::string_view text, OutputFormat* format) {
  return ParseNamed(kFormatNames, "format", what, text, format);
}

std::string FormatResults(const std::vector<RunResult>& results, OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      return results.size() == 1 ? SingleTable(results[0]) : ComparisonTable(results);
    case OutputFormat::kJson: {
      if (results.size() == 1) return FormatJsonPretty(RunJson(results[0])) + "\n";
      std::string out = "[";
      for (size_t i = 0; i < results.size(); ++i) {
        out += (i ? ",\n" : "\n") + FormatJsonPretty(RunJson(results[i]));
      }
      return out + "\n]\n";
    }
    case OutputFormat::kCsv: {
      std::string out = kCsvHeader;
      for (const RunResult& r : results) out += CsvRow(r);
      return out;
    }
  }
  return "";
}

std::string FormatResultJsonLine(const RunResult& result) {
  return FormatJsonCompact(RunJson(result));
}

std::string OutOfMemoryReport(const std::vector<RunResult>& results) {
  std::string oom;
  for (const RunResult& r : results) {
    for (const RankMetrics& k : r.metrics.ranks) {
      if (!k.oom) continue;
      oom += std::string(oom.empty() ? "" : "; ") + r.label + " rank " + std::to_string(k.rank) +
             " needs " + HumanBytes(static_cast<double>(k.peak_memory_bytes)) + " of " +
             HumanBytes(static_cast<double>(k.memory_capacity_bytes));
    }
  }
  return oom.empty() ? "" : "out of memory: " + oom;
}

}  // namespace ppsim
