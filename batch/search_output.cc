#include "batch/search_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "base/csv.h"
#include "base/escape.h"
#include "base/json.h"
#include "base/names.h"
#include "base/numbers.h"
#include "base/svg.h"
#include "batch/result_values.h"
#include "batch/results.h"
#include "config/units.h"
#include "experiments/run_output.h"

namespace ppsim {
namespace {

using Json = nlohmann::ordered_json;

std::string LayerSplit(const SearchCandidate& c) {
  if (!c.config.layers_per_stage().empty()) return c.config.layers_per_stage();
  return c.config.embedding_as_layer() ? "balanced" : "even";
}

// "none", "full", or the recomputed modules joined by '+' ("layernorm+mlp").
std::string RecomputeCell(const SearchCandidate& c) {
  if (c.config.recompute_modules().empty()) return c.config.recompute();
  std::string modules = c.config.recompute_modules();
  std::replace(modules.begin(), modules.end(), ',', '+');
  return modules;
}

// "1", "3", or "3/16" for ZeRO 3 sharded over 16 replicas (HSDP).
std::string ZeroCell(const SearchCandidate& c) {
  std::string cell = std::to_string(c.config.zero());
  if (c.config.has_dp_shard()) cell += "/" + std::to_string(c.config.dp_shard());
  return cell;
}

std::string OffloadCell(const SearchCandidate& c) {
  if (c.config.offload_modules().empty()) return "-";
  std::string modules = c.config.offload_modules();
  std::replace(modules.begin(), modules.end(), ',', '+');
  return modules;
}

// With `speedup` (a search with a baseline), the candidate's speedup last.
Json CandidateJson(const SearchCandidate& c, bool speedup) {
  Json j;
  j["command"] = c.command;
  j["tokens_per_s"] = JsonNumber(c.tokens_per_s);
  j["iteration_s"] = JsonNumber(c.iteration_s);
  j["peak_memory_bytes"] = c.peak_memory_bytes;
  j["memory_capacity_bytes"] = c.memory_capacity_bytes;
  j["oom"] = c.oom;
  j["no_headroom"] = c.no_headroom;
  j["tie_of_best"] = c.tie;
  j["free_memory_bytes"] = c.memory_capacity_bytes - c.peak_memory_bytes;
  j["mfu"] = JsonNumber(c.mfu);
  j["critical_path_s"] = JsonNumber(c.critical_path_s);
  j["work_bound_s"] = JsonNumber(c.work_bound_s);
  j["index"] = c.index;
  j["schedule"] = c.config.schedule();
  j["tp"] = c.config.tp();
  j["pp"] = c.config.pp();
  j["dp"] = c.dp;
  j["microbatch_size"] = c.config.microbatch_size();
  j["microbatches"] = c.microbatches;
  j["stages_per_rank"] = c.stages_per_rank;
  j["recompute"] = c.config.recompute();
  j["recompute_modules"] = c.config.recompute_modules();
  j["zero"] = c.config.zero();
  j["dp_shard"] = c.config.has_dp_shard() ? c.config.dp_shard() : c.dp;
  j["ep"] = c.config.has_ep() ? c.config.ep() : 1;
  j["offload_modules"] = c.config.offload_modules();
  j["microbatch_group_size"] = c.config.microbatch_group_size();
  j["layer_split"] = LayerSplit(c);
  j["sequence_parallel"] = c.config.sequence_parallel();
  if (speedup) j["speedup"] = JsonNumber(c.speedup);
  if (c.launch) j["launch"] = LaunchJson(*c.launch, c.import_command, "");
  return j;
}

Json CountsJson(const SearchCounts& n) {
  Json j;
  j["enumerated"] = n.enumerated;
  j["invalid"] = n.invalid;
  j["duplicates"] = n.duplicates;
  j["evaluated"] = n.evaluated;
  j["oom"] = n.oom;
  j["no_headroom"] = n.no_headroom;
  j["bounded_out_work"] = n.bounded_out_work;
  j["bounded_out_critical_path"] = n.bounded_out_critical_path;
  j["critical_path_evaluated"] = n.critical_path_evaluated;
  j["simulated"] = n.simulated;
  j["failed"] = n.failed;
  return j;
}

std::string CountsLine(const SearchCounts& n) {
  return std::to_string(n.enumerated) + " enumerated, " + std::to_string(n.invalid) + " invalid, " +
         std::to_string(n.duplicates) + " duplicates, " + std::to_string(n.evaluated) +
         " evaluated: " + std::to_string(n.oom) + " out of memory, " +
         std::to_string(n.no_headroom) + " without the headroom free, " +
         std::to_string(n.bounded_out_work) + " bounded out by work, " +
         std::to_string(n.bounded_out_critical_path) + " by the critical path, " +
         std::to_string(n.simulated) + " simulated with SimGrid (" +
         std::to_string(n.critical_path_evaluated) + " critical-path evaluations), " +
         std::to_string(n.failed) + " failed";
}

// "1.27x": a speedup as the table and the page show it.
std::string SpeedupText(double speedup) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", speedup);
  return text;
}

// The cells of a candidate's row, as the table and the page show them; `rank` names the row ("1",
// "baseline"); with `speedup`, its speed-up after the tokens/s.
std::vector<std::string> Cells(const SearchCandidate& c, const std::string& rank, bool speedup) {
  std::vector<std::string> cells = {
      rank,
      ShowValue(kTokensColumn, c.tokens_per_s),
      ShowValue(kMakespanColumn, c.iteration_s),
      ShowValue(kPeakMemoryColumn, static_cast<double>(c.peak_memory_bytes)),
      ShowValue(kPeakMemoryColumn,
                static_cast<double>(c.memory_capacity_bytes - c.peak_memory_bytes)),
      ShowValue(kMfuColumn, c.mfu),
      c.config.schedule(),
      std::to_string(c.config.tp()),
      std::to_string(c.config.pp()),
      std::to_string(c.dp),
      std::to_string(c.config.microbatch_size()),
      std::to_string(c.microbatches),
      std::to_string(c.stages_per_rank),
      ZeroCell(c),
      std::to_string(c.config.has_ep() ? c.config.ep() : 1),
      RecomputeCell(c),
      OffloadCell(c),
      LayerSplit(c),
      c.command};
  if (speedup) cells.insert(cells.begin() + 2, SpeedupText(c.speedup));
  return cells;
}

std::vector<std::string> Header(bool speedup) {
  std::vector<std::string> header = {
      "#",  "tokens/s", "iteration", "peak memory", "free", "MFU",       "schedule", "tp",
      "pp", "dp",       "b",         "m",           "V",    "zero",      "ep",       "recompute",
      "offload", "split", "command"};
  if (speedup) header.insert(header.begin() + 2, "speed-up");
  return header;
}

std::string TextTable(const std::vector<SearchCandidate>& rows, bool speedup) {
  std::vector<std::vector<std::string>> cells = {Header(speedup)};
  for (size_t r = 0; r < rows.size(); ++r) {
    cells.push_back(Cells(rows[r], std::to_string(r + 1) + (rows[r].tie ? "=" : ""), speedup));
  }
  return FormatColumns(cells);
}

// The baseline's memory as the table and the page show it: its peak, and whether it fits.
std::string BaselineMemory(const SearchCandidate& b) {
  return ShowValue(kPeakMemoryColumn, static_cast<double>(b.peak_memory_bytes)) + " of " +
         ShowValue(kPeakMemoryColumn, static_cast<double>(b.memory_capacity_bytes)) +
         (b.oom ? " (OUT OF MEMORY: it would not run; simulated all the same)" : " (fits)");
}

// "baseline: tokens/s 1.2 M/s, iteration 3.4 s, peak memory 40 GiB of 80 GiB (fits): ppsim run
// ...", then its notes.
std::string BaselineLines(const SearchResult& result) {
  const SearchCandidate& b = result.baseline;
  std::string out = "baseline: tokens/s " + ShowValue(kTokensColumn, b.tokens_per_s) +
                    ", iteration " + ShowValue(kMakespanColumn, b.iteration_s) + ", peak memory " +
                    BaselineMemory(b) + ": " + b.command + "\n";
  for (const std::string& note : result.baseline_notes) out += "  note: " + note + "\n";
  return out;
}

std::string ReasonsText(const SearchResult& result) {
  std::string out;
  for (const auto& [reason, count] : result.reasons) {
    out += "  " + Plural(count, "candidate") + ": " + reason + "\n";
  }
  return out;
}

}  // namespace

std::string SearchDiagnosis(const SearchResult& result) {
  const SearchCounts& n = result.counts;
  std::string out = "ppsim search: no candidate ranks: of " + std::to_string(n.evaluated) +
                    " valid, " + std::to_string(n.oom) + " out of memory, " +
                    std::to_string(n.no_headroom) + " fit without the headroom free, " +
                    std::to_string(n.failed) + " failed; " + std::to_string(n.invalid) + " invalid";
  std::string why;
  for (const auto& [reason, count] : result.reasons) {
    why += (why.empty() ? "" : "; ") + reason + " (" + std::to_string(count) + ")";
  }
  if (!why.empty()) out += " (" + why + ")";
  out += ".\n";
  if (result.least_memory_bytes > 0) {
    const double shortfall = static_cast<double>(result.least_memory_bytes) -
                             static_cast<double>(result.least_memory_capacity_bytes);
    out += "The least memory a candidate needs is " +
           ShowValue(kPeakMemoryColumn, static_cast<double>(result.least_memory_bytes)) + " of " +
           ShowValue(kPeakMemoryColumn, static_cast<double>(result.least_memory_capacity_bytes)) +
           (shortfall > 0 ? " (" + ShowValue(kPeakMemoryColumn, shortfall) + " over)" : "") + ": " +
           result.least_memory_command + "\n";
    if (!result.levers.empty()) out += "That candidate with one change (prepared as candidates are):\n";
    for (const SearchResult::Lever& lever : result.levers) {
      out += "  " + lever.change + ": ";
      if (lever.peak_memory_bytes == 0) {
        out += "refused: " + lever.reason + "\n";
        continue;
      }
      out += std::string(lever.lower_bound ? "at least " : "") +
             ShowValue(kPeakMemoryColumn, static_cast<double>(lever.peak_memory_bytes)) + " of " +
             ShowValue(kPeakMemoryColumn, static_cast<double>(lever.memory_capacity_bytes)) +
             (lever.ranks ? " (ranks): " : " (still too much): ") + lever.command + "\n";
    }
    out += "A smaller --headroom ranks a candidate that fits with less free.\n";
  }
  return out;
}

std::string SearchTable(const SearchResult& result) {
  const bool speedup = result.has_baseline;
  std::string out = speedup ? BaselineLines(result) + "\n" : "";
  out += "best " + std::to_string(result.ranking.size()) + " (ranked by tokens/s" +
         (speedup ? "; speed-up: tokens/s over the baseline's" : "") +
         "; = a tie of the best: within 3%, the model's uncertainty between configurations):\n";
  out += TextTable(result.ranking, speedup);
  out += "\nPareto front (tokens/s against peak memory):\n" + TextTable(result.pareto, speedup);
  if (!result.ranking.empty() && result.ranking[0].launch) {
    const SearchCandidate& best = result.ranking[0];
    out += LaunchText(*best.launch, "the best (" + best.config.schedule() + ")",
                      best.import_command, "");
    out += "(every candidate's launch: --format json)\n";
  }
  out += "\n" + CountsLine(result.counts) + "\n";
  if (!result.reasons.empty())
    out += "most frequent reasons a candidate was left out:\n" + ReasonsText(result);
  out += "wall time " + HumanDuration(result.wall_s) + "\n";
  return out;
}

std::string SearchJson(const SearchResult& result) {
  Json j;
  const bool speedup = result.has_baseline;
  j["evaluated"] = result.counts.evaluated;
  if (speedup) {
    j["baseline"] = CandidateJson(result.baseline, true);
    j["baseline_notes"] = result.baseline_notes;
  }
  j["candidates"] = Json::array();
  for (const SearchCandidate& c : result.ranking) {
    j["candidates"].push_back(CandidateJson(c, speedup));
  }
  j["pareto"] = Json::array();
  for (const SearchCandidate& c : result.pareto) j["pareto"].push_back(CandidateJson(c, speedup));
  j["counts"] = CountsJson(result.counts);
  j["reasons"] = Json::array();
  for (const auto& [reason, count] : result.reasons) {
    j["reasons"].push_back(Json{{"reason", reason}, {"candidates", count}});
  }
  if (result.ranking.empty() && result.least_memory_bytes > 0) {
    Json d;
    d["least_memory_bytes"] = result.least_memory_bytes;
    d["memory_capacity_bytes"] = result.least_memory_capacity_bytes;
    d["command"] = result.least_memory_command;
    d["levers"] = Json::array();
    for (const SearchResult::Lever& lever : result.levers) {
      d["levers"].push_back(Json{{"change", lever.change},
                                 {"command", lever.command},
                                 {"peak_memory_bytes", lever.peak_memory_bytes},
                                 {"memory_capacity_bytes", lever.memory_capacity_bytes},
                                 {"ranks", lever.ranks},
                                 {"lower_bound", lever.lower_bound},
                                 {"reason", lever.reason}});
    }
    j["diagnosis"] = d;
  }
  return FormatJsonPretty(j);
}

std::string SearchCsv(const SearchResult& result) {
  std::set<int64_t> front;
  for (const SearchCandidate& c : result.pareto) front.insert(c.index);
  std::string out = "rank,pareto";
  const bool speedup = result.has_baseline;
  const Json first = CandidateJson(SearchCandidate(), speedup);
  for (const auto& [name, value] : first.items()) out += "," + name;
  out += "\n";
  for (size_t r = 0; r < result.simulated.size(); ++r) {
    const SearchCandidate& c = result.simulated[r];
    out += std::to_string(r + 1) + "," + (front.count(c.index) ? "true" : "false");
    const Json fields = CandidateJson(c, speedup);
    for (const auto& [name, value] : fields.items()) {
      out += "," + CsvField(value.is_string() ? value.get<std::string>() : value.dump());
    }
    out += "\n";
  }
  return out;
}

namespace {

constexpr double kWidth = 720, kHeight = 420, kLeft = 80, kRight = 20, kTop = 20, kBottom = 50;

// Ticks from 0 to at least `max`, at most 8, at 1, 2 or 5 x 10^k (base/svg.h NiceStep).
double TickStep(double max) {
  if (max <= 0) return 1;
  const int exponent = static_cast<int>(std::floor(std::log10(max / 8)));
  const double step = NiceStep(exponent, [&](double s, int) { return max / s <= 8; });
  return step > 0 ? step : max;
}

// The baseline on the scatter: a dashed line across at its tokens/s and a diamond at its point.
template <typename X, typename Y>
std::string BaselineMarks(const SearchCandidate& b, double left, const X& x, const Y& y) {
  const double bx = x(static_cast<double>(b.peak_memory_bytes)), by = y(b.tokens_per_s);
  const std::string colour = PaletteColour(2);
  std::string svg = "<line class=\"baseline\" x1=\"" + Px(left) + "\" y1=\"" + Px(by) + "\" x2=\"" +
                    Px(kWidth - kRight) + "\" y2=\"" + Px(by) + "\" stroke=\"" + colour +
                    "\" stroke-dasharray=\"6 4\"/><text x=\"" + Px(kWidth - kRight - 4) +
                    "\" y=\"" + Px(by - 5) + "\" text-anchor=\"end\" fill=\"" + colour +
                    "\">baseline</text>\n";
  svg += "<polygon class=\"marker baseline\" points=\"" + Px(bx) + "," + Px(by - 7) + " " +
         Px(bx + 7) + "," + Px(by) + " " + Px(bx) + "," + Px(by + 7) + " " + Px(bx - 7) + "," +
         Px(by) + "\" fill=\"" + colour + "\"><title>" +
         MarkupEscape("baseline: " + ShowValue(kTokensColumn, b.tokens_per_s) + ", " +
                      ShowValue(kPeakMemoryColumn, static_cast<double>(b.peak_memory_bytes)) +
                      (b.oom ? " (out of memory)" : "") + ": " + b.command) +
         "</title></polygon>\n";
  return svg;
}

std::string Scatter(const SearchResult& result) {
  double max_x = 0, max_y = 0;
  std::vector<const SearchCandidate*> shown;
  for (const SearchCandidate& c : result.simulated) shown.push_back(&c);
  if (result.has_baseline) shown.push_back(&result.baseline);
  for (const SearchCandidate* c : shown) {
    max_x = std::max(max_x, static_cast<double>(c->peak_memory_bytes));
    max_y = std::max(max_y, c->tokens_per_s);
  }
  const double step_x = TickStep(max_x / (1 << 30)) * (1 << 30), step_y = TickStep(max_y);
  const double top_x = std::max(step_x, std::ceil(max_x / step_x) * step_x);
  const double top_y = std::max(step_y, std::ceil(max_y / step_y) * step_y);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x = [&](double v) { return kLeft + v / top_x * plot_w; };
  auto y = [&](double v) { return kTop + plot_h - v / top_y * plot_h; };
  std::string svg = "<svg class=\"chart scatter\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    Px(kWidth) + "\" height=\"" + Px(kHeight) + "\" font-size=\"12\">\n";
  for (double v = 0; v <= top_x + step_x / 2; v += step_x) {
    svg += "<line x1=\"" + Px(x(v)) + "\" y1=\"" + Px(kTop) + "\" x2=\"" + Px(x(v)) + "\" y2=\"" +
           Px(kTop + plot_h) + "\" stroke=\"#eee\"/><text x=\"" + Px(x(v)) + "\" y=\"" +
           Px(kTop + plot_h + 16) + "\" text-anchor=\"middle\">" +
           MarkupEscape(ShowValue(kPeakMemoryColumn, v)) + "</text>\n";
  }
  for (double v = 0; v <= top_y + step_y / 2; v += step_y) {
    svg += "<line x1=\"" + Px(kLeft) + "\" y1=\"" + Px(y(v)) + "\" x2=\"" + Px(kLeft + plot_w) +
           "\" y2=\"" + Px(y(v)) + "\" stroke=\"#eee\"/><text x=\"" + Px(kLeft - 6) + "\" y=\"" +
           Px(y(v) + 4) + "\" text-anchor=\"end\">" + MarkupEscape(ShowValue(kTokensColumn, v)) +
           "</text>\n";
  }
  svg += "<text x=\"" + Px(kLeft + plot_w / 2) + "\" y=\"" + Px(kHeight - 8) +
         "\" text-anchor=\"middle\">peak memory per GPU</text>\n<text x=\"14\" y=\"" +
         Px(kTop + plot_h / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         Px(kTop + plot_h / 2) + ")\">tokens/s</text>\n";
  std::set<int64_t> front;
  std::string line;
  for (const SearchCandidate& c : result.pareto) {
    front.insert(c.index);
    line += (line.empty() ? "" : " ") + Px(x(static_cast<double>(c.peak_memory_bytes))) + "," +
            Px(y(c.tokens_per_s));
  }
  svg += "<polyline class=\"pareto\" points=\"" + line + "\" fill=\"none\" stroke=\"" +
         std::string(PaletteColour(1)) + "\" stroke-width=\"2\"/>\n";
  for (const SearchCandidate& c : result.simulated) {
    const bool on_front = front.count(c.index) > 0;
    svg += "<circle class=\"" + std::string(on_front ? "marker pareto" : "marker") + "\" cx=\"" +
           Px(x(static_cast<double>(c.peak_memory_bytes))) + "\" cy=\"" + Px(y(c.tokens_per_s)) +
           "\" r=\"" + (on_front ? "5" : "3.5") + "\" fill=\"" + PaletteColour(on_front ? 1 : 0) +
           "\"><title>" +
           MarkupEscape(ShowValue(kTokensColumn, c.tokens_per_s) + ", " +
                        ShowValue(kPeakMemoryColumn, static_cast<double>(c.peak_memory_bytes)) +
                        ": " + c.command) +
           "</title></circle>\n";
  }
  if (result.has_baseline) svg += BaselineMarks(result.baseline, x(0), x, y);
  return svg + "</svg>\n";
}

// Rows named 1, 2, ... (or all `name`, when given).
std::string HtmlTable(const std::vector<SearchCandidate>& rows, bool speedup,
                      const std::string& name = "") {
  std::string out = "<div class=\"table-wrap\"><table class=\"results\"><thead><tr>";
  for (const std::string& h : Header(speedup)) out += "<th>" + MarkupEscape(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "<tr>";
    const std::vector<std::string> cells =
        Cells(rows[r], name.empty() ? std::to_string(r + 1) : name, speedup);
    for (size_t k = 0; k < cells.size(); ++k) {
      out += k + 1 == cells.size() ? "<td><code>" + MarkupEscape(cells[k]) + "</code></td>"
                                   : "<td>" + MarkupEscape(cells[k]) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace

std::string SearchHtml(const SearchResult& result, const std::string& title) {
  const bool speedup = result.has_baseline;
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      MarkupEscape(title) +
      "</title>\n<style>\nbody{font-family:system-ui,sans-serif;margin:24px;color:#222}"
      "h1{font-size:20px}h2{font-size:17px;margin-top:28px}code{font-size:12px}"
      ".table-wrap{overflow-x:auto;max-width:100%}"
      "table.results{border-collapse:collapse;font-size:12px}"
      "table.results th,table.results td{border:1px solid #ddd;padding:3px 6px;text-align:left;"
      "white-space:nowrap}table.results th{background:#f3f3f3}.note{color:#555}\n</style>\n"
      "</head>\n<body>\n<h1>" +
      MarkupEscape(title) + "</h1>\n<p class=\"note\">" + MarkupEscape(CountsLine(result.counts)) +
      "</p>\n";
  if (!result.ranking.empty()) {
    const SearchCandidate& best = result.ranking.front();
    page +=
        "<p>Best: <b>" + MarkupEscape(ShowValue(kTokensColumn, best.tokens_per_s)) +
        "</b> tokens/s at " +
        MarkupEscape(ShowValue(kPeakMemoryColumn, static_cast<double>(best.peak_memory_bytes))) +
        " per GPU" +
        (speedup ? " (" + SpeedupText(best.speedup) + " the baseline's tokens/s)" : "") +
        ": <code>" + MarkupEscape(best.command) + "</code></p>\n";
  }
  if (speedup) {
    const SearchCandidate& b = result.baseline;
    page += "<h2>Baseline</h2>\n<p>tokens/s " +
            MarkupEscape(ShowValue(kTokensColumn, b.tokens_per_s)) + ", peak memory " +
            MarkupEscape(BaselineMemory(b)) + "</p>\n" + HtmlTable({b}, true, "baseline");
    for (const std::string& note : result.baseline_notes) {
      page += "<p class=\"note\">note: " + MarkupEscape(note) + "</p>\n";
    }
  }
  page +=
      "<h2>Throughput against peak memory</h2>\n<p class=\"note\">Every candidate simulated "
      "with SimGrid; the Pareto front is the line and the larger orange points" +
      std::string(speedup ? "; the baseline is the dashed line and the diamond" : "") + ".</p>\n" +
      Scatter(result) + "<h2>Ranking</h2>\n" + HtmlTable(result.ranking, speedup) +
      "<h2>Pareto front</h2>\n" + HtmlTable(result.pareto, speedup) + "</body>\n</html>\n";
  return page;
}

}  // namespace ppsim
