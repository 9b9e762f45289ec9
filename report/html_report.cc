#include "report/html_report.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/csv.h"
#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "base/svg.h"
#include "report/chart_plan.h"
#include "report/report_axes.h"
#include "batch/results.h"
#include "batch/result_values.h"
#include "report/svg_chart.h"
#include "config/units.h"

namespace ppsim {
namespace {

constexpr std::string_view kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;color:#222;line-height:1.4}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:18px;margin:28px 0 8px}
code{font-size:13px;background:#f4f4f4;padding:1px 4px}
figure{display:inline-block;vertical-align:top;width:min-content;margin:0 16px 20px 0;overflow-x:auto;max-width:100%}
figcaption{color:#555;margin:2px 0 6px;min-width:24em}
svg.chart{display:block;background:#fff}
.note{color:#555}
dl.about{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0 12px;max-width:100%}
dl.about dt{font-weight:bold;color:#444}
dl.about dd{margin:0;overflow-wrap:anywhere}
dl.about dd.unknown{color:#888;font-style:italic}
.definition{display:block;font-size:12px;color:#444;margin-top:2px}
dl.definitions dt{font-family:monospace;font-weight:bold}
dl.definitions dd{margin:0 0 6px 16px;color:#444}
abbr{text-decoration:underline dotted;cursor:help}
.best{background:#f2f8f2;border-left:4px solid #59a14f;padding:6px 10px;max-width:72em}
.oom-note{border-left:4px solid %OOM%;padding:2px 10px}
.table-wrap{overflow-x:auto;max-width:100%}
table.results{border-collapse:collapse;font-size:12px}
table.results th,table.results td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
table.results th{background:#f3f3f3;cursor:pointer;position:sticky;top:0}
table.results th[aria-sort=ascending]::after{content:" \25B2"}
table.results th[aria-sort=descending]::after{content:" \25BC"}
table.results td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.results td.error{white-space:pre-wrap;max-width:30em}
table.results td.oom{color:%OOM%;font-weight:bold}
table.results tr.not-ok td{background:#fff3f0}
)";

// Sorts the table by a clicked column (numbers by their full value, empty cells last, ties in point
// order).
// The page reads the same without it.
// The style with the one OOM colour (base/svg.h) where it says %OOM%.
std::string Style() {
  std::string style(kStyle);
  for (size_t at = style.find("%OOM%"); at != std::string::npos; at = style.find("%OOM%", at)) {
    style.replace(at, 5, kOomColour);
  }
  return style;
}

constexpr std::string_view kScript = R"((function () {
  var table = document.getElementById('results');
  if (!table || !table.tHead || !table.tBodies.length) return;
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  var rows = Array.prototype.slice.call(body.rows);
  // A cell's value: its full-precision data-value when it shows a rounded one.
  function value(cell) {
    return cell.hasAttribute('data-value') ? cell.getAttribute('data-value') : cell.textContent;
  }
  function compare(a, b) {
    if (a === b) return 0;
    if (a === '') return 1;
    if (b === '') return -1;
    var x = Number(a), y = Number(b);
    if (isFinite(x) && isFinite(y)) return x - y;
    return a < b ? -1 : 1;
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.tabIndex = 0;
    function sort() {
      var descending = th.getAttribute('aria-sort') === 'ascending';
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      var order = rows.map(function (row, index) { return [row, index, value(row.cells[col])]; });
      order.sort(function (p, q) {
        var c = compare(p[2], q[2]);
        if (descending && p[2] !== '' && q[2] !== '') c = -c;
        return c !== 0 ? c : p[1] - q[1];
      });
      order.forEach(function (p) { body.appendChild(p[0]); });
    }
    th.addEventListener('click', sort);
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sort(); });
  });
})();
)";

std::string AxisSummary(const Axis& axis) {
  std::vector<std::string> values;
  for (const auto& [key, text] : axis.text_of_key) values.push_back(text.empty() ? "(empty)" : text);
  std::string out = "<li><b>" + MarkupEscape(axis.name) + "</b>: ";
  if (!axis.varies) {
    return out + "constant, " + MarkupEscape(values.empty() ? "(no rows)" : values[0]) + "</li>\n";
  }
  out += std::string(KindName(axis.kind)) + ", ";
  if (axis.columns.size() > 1) out += "its columns moving together, ";
  out += Plural(static_cast<int64_t>(values.size()), "value") + ": ";
  for (size_t i = 0; i < values.size() && i < 12; ++i) {
    out += (i == 0 ? "" : ", ") + MarkupEscape(values[i]);
  }
  if (values.size() > 12) out += ", \u2026";
  return out + "</li>\n";
}

std::string ChartsIntro(const std::vector<Axis>& axes, const Plan& plan) {
  auto names = [&](const std::vector<int>& list) {
    std::string out;
    for (size_t i = 0; i < list.size(); ++i) {
      out += (i == 0 ? "" : ", ") + std::string("<b>") + MarkupEscape(axes[list[i]].name) + "</b>";
    }
    return out;
  };
  std::string out = "<p>";
  if (!plan.bars) {
    out += "x axis: <b>" + MarkupEscape(axes[plan.x_axis].name) + "</b>";
    out += plan.series_axes.empty()
               ? "."
               : "; one line per combination of " + names(plan.series_axes) +
                     ", in the same colour in every chart.";
  } else if (plan.group_axis >= 0) {
    out += "No numeric axis varies on its own, so the charts are bar charts: one bar per point, "
           "grouped by <b>" +
           MarkupEscape(axes[plan.group_axis].name) + "</b>";
    out += plan.series_axes.empty()
               ? "."
               : ", coloured by " + names(plan.series_axes) + " (the same colour in every chart).";
  } else {
    out += "No axis varies, so the charts are bar charts with one bar per point.";
  }
  if (plan.series_labels.size() > static_cast<size_t>(kPaletteSize)) {
    out += " There are " + std::to_string(plan.series_labels.size()) + " series and " +
           std::to_string(kPaletteSize) +
           " colours: after the twelfth, colours repeat, on line charts with another marker shape "
           "and dash (bars of a repeated colour are told apart by their legend order only).";
  }
  if (!plan.bars && plan.series_labels.size() > 1) {
    out += " Each line has its own marker shape and dash, lines drawn first are wider, and each "
           "ends in its label, so that lines of equal values stay visible.";
  }
  out += " Only ok points are plotted; hover a marker or bar for its values.</p>\n";
  return out;
}

std::string NotPlottedNote(const Plan& plan) {
  int64_t total = plan.missing_x;
  std::string reasons;
  for (int s = 0; s < kPointStatusCount; ++s) {
    if (plan.not_plotted[s] == 0) continue;
    total += plan.not_plotted[s];
    reasons += (reasons.empty() ? "" : ", ") + std::to_string(plan.not_plotted[s]) + " " +
               std::string(PointStatusName(static_cast<PointStatus>(s)));
  }
  if (plan.missing_x > 0) {
    reasons += (reasons.empty() ? "" : ", ") + std::to_string(plan.missing_x) +
               " with no value on the x axis";
  }
  if (total == 0) return "";
  return "<p class=\"note\">" + Plural(total, "point") + (total == 1 ? " is" : " are") +
         " not plotted (" + reasons + "); see the table.</p>\n";
}

// The decision in two lines: the point with the highest throughput (the first chart's column)
// among those that fit in memory, and how many do not.
std::string AtAGlance(const ResultsTable& results, const std::vector<Axis>& axes,
                      const std::vector<ChartSpec>& charts) {
  if (charts.empty()) return "";
  const ChartSpec& throughput = charts[0];
  const ResultRow* best = nullptr;
  int64_t ok = 0;
  int64_t oom = 0;
  for (const ResultRow& row : results.rows) {
    if (row.status != PointStatus::kOk) continue;
    ++ok;
    if (row.oom) {
      ++oom;
      continue;
    }
    const std::optional<double>& v = row.values[throughput.column];
    if (v && (best == nullptr || *v > *best->values[throughput.column])) best = &row;
  }
  std::string out;
  if (best == nullptr) {
    out += "<p class=\"best\">No point that finished fits in memory.</p>\n";
  } else {
    const ResultValues& v = best->values;
    std::string figures = HumanCount(*v[throughput.column]) + " " + throughput.rate_unit;
    if (v[kMfuColumn]) figures += ", MFU " + HumanPercent(*v[kMfuColumn]);
    figures += ", peak memory " + HumanBytes(*v[kPeakMemoryColumn]);
    if (*v[kCapacityColumn] > 0) figures += " of " + HumanBytes(*v[kCapacityColumn]);
    out += "<p class=\"best\"><b>Highest throughput that fits in memory</b>: " +
           MarkupEscape(PointName(results, axes, *best)) + ": " + MarkupEscape(figures) +
           ", <abbr title=\"" + MarkupEscape(std::string(MetricDefinition(kBubbleColumn))) +
           "\">bubble</abbr> " + MarkupEscape(HumanPercent(*v[kBubbleColumn])) + ".</p>\n";
  }
  if (oom > 0) {
    out += "<p class=\"oom-note\">" + Plural(oom, "point") + " of " + std::to_string(ok) +
           (oom == 1 ? " runs" : " run") +
           " out of memory (OOM): marked with a red \u2715 in the charts and OOM in the "
           "table.</p>\n";
  }
  return out;
}

// A column name that may break after its underscores.
std::string BreakableName(const std::string& name) {
  std::string out;
  for (char c : MarkupEscape(name)) {
    out += c;
    if (c == '_') out += "<wbr>";
  }
  return out;
}

// The table: every row; every column but the metric, error and wall_s columns that are empty in
// every row (named in a note). Metric cells show rounded values with units (report_values.h);
// their full text is the hover text and the sort key.
std::string TableMarkup(const ResultsTable& results, const std::vector<Axis>& axes) {
  const int columns = static_cast<int>(results.header.size());
  const int first_metric = 1 + results.axis_count;
  std::vector<bool> numeric(columns, false);
  numeric[0] = true;
  for (const Axis& axis : axes) {
    for (int c : axis.columns) numeric[1 + c] = IsNumeric(axis) && axis.columns.size() == 1;
  }
  std::vector<bool> shown(columns, true);
  std::vector<std::string> left_out;
  for (int c = first_metric; c < columns; ++c) {
    const int column = c - first_metric;
    numeric[c] = IsMetric(column) || column == kWallColumn;
    if (column == kStatusColumn || column == kOomColumn) continue;
    bool empty = true;
    for (const ResultRow& row : results.rows) empty = empty && row.fields[c].empty();
    if (empty && !results.rows.empty()) {
      shown[c] = false;
      left_out.push_back(results.header[c]);
    }
  }

  std::string out;
  if (!left_out.empty()) {
    out += "<p class=\"note\">Left out, empty in every row: ";
    for (size_t i = 0; i < left_out.size(); ++i) {
      out += (i == 0 ? "" : ", ") + std::string("<code>") + MarkupEscape(left_out[i]) + "</code>";
    }
    out += ".</p>\n";
  }
  out += "<div class=\"table-wrap\">\n<table class=\"results\" id=\"results\">\n<thead><tr>";
  for (int c = 0; c < columns; ++c) {
    if (!shown[c]) continue;
    const std::string_view definition =
        c >= first_metric ? MetricDefinition(c - first_metric) : std::string_view();
    const std::string name = BreakableName(results.header[c]);
    out += "<th title=\"sort by " + MarkupEscape(results.header[c]) + "\">" +
           (definition.empty() ? name
                               : "<abbr title=\"" + MarkupEscape(std::string(definition)) +
                                     "\">" + name + "</abbr>") +
           "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const ResultRow& row : results.rows) {
    out += row.status == PointStatus::kOk ? "<tr>" : "<tr class=\"not-ok\">";
    for (int c = 0; c < columns; ++c) {
      if (!shown[c]) continue;
      const std::string& cell = row.fields[c];
      const int column = c - first_metric;
      std::string shown_text = cell;
      std::string css = numeric[c] ? "num" : "";
      if (column == kErrorColumn) css = "error";
      double value;
      if (column >= 0 && IsMetric(column) && row.values[column]) {
        shown_text = ShowValue(column, *row.values[column]);
      } else if (column == kWallColumn && ParseFinite(cell, &value)) {
        shown_text = ShowValue(kWallColumn, value);
      } else if (column == kOomColumn && row.status == PointStatus::kOk) {
        shown_text = row.oom ? "OOM" : "no";
        if (row.oom) css = "oom";
      }
      out += "<td";
      if (!css.empty()) out += " class=\"" + css + "\"";
      if (shown_text != cell) {
        out += " title=\"" + MarkupEscape(cell) + "\" data-value=\"" + MarkupEscape(cell) + "\"";
      }
      out += ">" + MarkupEscape(shown_text) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</div>\n";
}

// Everything a page shows.
struct PageInput {
  const ResultsTable& results;
  bool from_run;
  const std::vector<Axis>& axes;
  const Plan& plan;
  const std::string& source;
  const std::vector<ChartSpec>& specs;
  const std::vector<std::string>& charts;
  const ReportOptions& options;
  const ResultRow* baseline;  // nullptr: none
};

// One fact of the header; "not recorded" when empty.
std::string Fact(const std::string& name, const std::string& value, bool code = false) {
  if (value.empty()) {
    return "<dt>" + name + "</dt><dd class=\"unknown\">not recorded</dd>\n";
  }
  const std::string shown = code ? "<code>" + MarkupEscape(value) + "</code>" : MarkupEscape(value);
  return "<dt>" + name + "</dt><dd>" + shown + "</dd>\n";
}

// What was simulated and where the results came from.
std::string AboutMarkup(const PageInput& in) {
  const ReportAbout& about = in.options.about;
  std::string out = "<dl class=\"about\" id=\"about\">\n";
  for (const char* field : {"model", "cluster", "parallelism"}) {
    std::string value;
    for (const auto& [name, text] : about.simulated) {
      if (name == field) value = text;
    }
    out += Fact(field, value);
  }
  std::string experiment = about.experiment;
  if (!about.experiment_file.empty()) {
    experiment += (experiment.empty() ? "" : " \u00b7 file ") + about.experiment_file;
  }
  if (in.from_run && experiment.empty()) experiment = "none (one ppsim run)";
  out += Fact("experiment", experiment);
  out += Fact("results", in.source, true);
  out += Fact("simulated with", about.ppsim_version.empty() ? "" : "ppsim " + about.ppsim_version);
  out += Fact("command", about.command, true);
  if (in.baseline != nullptr) {
    out += Fact("baseline", PointName(in.results, in.axes, *in.baseline));
  }
  if (!about.report_version.empty()) out += Fact("report by", "ppsim " + about.report_version);
  return out + "</dl>\n";
}

// The three bubble metrics, defined once where the table shows them.
std::string BubbleDefinitions() {
  std::string out =
      "<p class=\"note\">The table's three bubble metrics measure different things, so their "
      "values differ for one point:</p>\n<dl class=\"definitions\" id=\"bubble-definitions\">\n";
  for (int column : {kBubbleColumn, kBubbleOverIdealColumn, kStageBubbleColumn}) {
    const std::string definition(MetricDefinition(column));
    const size_t equals = definition.find(" = ");
    out += "<dt>" + std::string(kResultColumns[column].name) + "</dt><dd>" +
           MarkupEscape(definition.substr(equals + 3)) + "</dd>\n";
  }
  return out + "</dl>\n";
}

std::string Page(const PageInput& in) {
  const ResultsTable& results = in.results;
  const bool from_run = in.from_run;
  const std::vector<Axis>& axes = in.axes;
  const Plan& plan = in.plan;
  const std::string& source = in.source;
  const std::vector<ChartSpec>& specs = in.specs;
  const std::vector<std::string>& charts = in.charts;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ppsim "
      "report: " +
      MarkupEscape(source) + "</title>\n<style>\n" + Style() + "</style>\n</head>\n<body>\n";
  std::string title = from_run ? "ppsim run report" : "ppsim sweep report";
  if (!in.options.about.experiment.empty()) title += ": " + in.options.about.experiment;
  out += "<h1>" + MarkupEscape(title) + "</h1>\n" + AboutMarkup(in);
  out += "<p>Results from <code>" + MarkupEscape(source) + "</code>" +
         (from_run ? " (a run's CSV: one point per schedule)" : "") + ": ";
  if (results.rows.empty()) {
    out += "no points (the file has a header and no rows).</p>\n";
  } else {
    int64_t by_status[kPointStatusCount] = {};
    for (const ResultRow& row : results.rows) ++by_status[static_cast<int>(row.status)];
    std::string counts;
    for (int s = 0; s < kPointStatusCount; ++s) {
      if (by_status[s] == 0) continue;
      counts += (counts.empty() ? "" : ", ") + std::to_string(by_status[s]) + " " +
                std::string(PointStatusName(static_cast<PointStatus>(s)));
    }
    out += Plural(static_cast<int64_t>(results.rows.size()), "point") + " (" + counts + ").</p>\n";
  }
  out += AtAGlance(results, axes, specs);
  if (axes.empty()) {
    out += "<p>No swept axes.</p>\n";
  } else {
    out += "<p>Swept axes:</p>\n<ul class=\"axes\">\n";
    for (const Axis& axis : axes) out += AxisSummary(axis);
    out += "</ul>\n";
  }
  out += "<h2>Charts</h2>\n";
  if (charts.empty()) {
    out += "<p>Nothing to plot: no point finished ok.</p>\n";
  } else {
    out += ChartsIntro(axes, plan);
    for (size_t c = 0; c < charts.size(); ++c) {
      std::string caption = MarkupEscape(specs[c].question);
      if (!specs[c].definition.empty()) {
        caption += "<span class=\"definition\">" + MarkupEscape(specs[c].definition) + "</span>";
      }
      out += "<figure>\n<figcaption>" + caption + "</figcaption>\n" + charts[c] + "</figure>\n";
    }
  }
  out += NotPlottedNote(plan);
  out += "<h2>Results</h2>\n";
  out +=
      "<p class=\"note\">Every row of the file; not-ok rows are shaded. Numbers are rounded to "
      "four significant digits (hover a cell for the file's full value). The table scrolls "
      "sideways in its own box when it is wider than the page. Click a column heading to sort "
      "(needs JavaScript).</p>\n";
  out += BubbleDefinitions();
  out += TableMarkup(results, axes);
  out += "<script>\n" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

// A sweep's results CSV (first column point) or a run's CSV (first column schedule).
Status ReadReportInput(std::string_view text, const std::string& source, ResultsTable* results,
                       bool* from_run) {
  std::string_view first_line = text.substr(0, text.find('\n'));
  if (first_line.starts_with("\xEF\xBB\xBF")) first_line.remove_prefix(3);
  std::vector<CsvRecord> header;
  *from_run = false;
  if (!first_line.empty() && ReadCsv(first_line, source, &header).ok() && !header.empty()) {
    const std::string first = header[0].fields[0];
    if (first == "schedule") {
      *from_run = true;
      return ReadRunCsv(text, source, results);
    }
    if (first != "point") {
      return Status::InvalidInput(
          source + ":1: first column is " + Quoted(first) +
          "; a report reads a sweep's results CSV (first column 'point') or a run's CSV output "
          "(first column 'schedule')");
    }
  }
  return ReadResultsCsv(text, source, results);
}

// The row --baseline names: a point number, else (a run's CSV) the schedule.
Status FindBaseline(const ResultsTable& results, const std::vector<Axis>& axes,
                    const ReportOptions& options, const ResultRow** baseline) {
  *baseline = nullptr;
  if (options.baseline.empty()) return Status();
  for (const ResultRow& row : results.rows) {
    const bool named = std::to_string(row.point) == options.baseline ||
                       (!axes.empty() && row.fields.size() > 1 && row.fields[1] == options.baseline);
    if (named && *baseline == nullptr) *baseline = &row;
  }
  const std::string& where = options.baseline_where;
  if (*baseline == nullptr) {
    const std::string range =
        results.rows.empty() ? "none"
                             : std::to_string(results.rows.front().point) + "-" +
                                   std::to_string(results.rows.back().point);
    return Status::InvalidInput(where + ": no point " + Quoted(options.baseline) +
                                "; valid: a point of the file (" + range +
                                ") or a value of its first axis");
  }
  if ((*baseline)->status != PointStatus::kOk) {
    return Status::InvalidInput(where + ": point " + std::to_string((*baseline)->point) + " is " +
                                std::string(PointStatusName((*baseline)->status)) +
                                "; the baseline must be an ok point");
  }
  return Status();
}

}  // namespace

Status RenderHtmlReport(std::string_view csv_text, const std::string& source, std::string* html,
                        HtmlReportSummary* summary) {
  return RenderHtmlReport(csv_text, source, ReportOptions(), html, summary);
}

Status RenderHtmlReport(std::string_view csv_text, const std::string& source,
                        const ReportOptions& options, std::string* html,
                        HtmlReportSummary* summary) {
  ResultsTable results;
  bool from_run = false;
  RETURN_IF_ERROR(ReadReportInput(csv_text, source, &results, &from_run));
  const std::vector<Axis> axes = ClassifyAxes(results);
  const ResultRow* baseline = nullptr;
  RETURN_IF_ERROR(FindBaseline(results, axes, options, &baseline));
  const Plan plan = MakePlan(results, axes);
  const std::vector<ChartSpec> specs = ChooseCharts(results, plan, baseline);
  std::vector<std::string> charts;
  for (const ChartSpec& chart : specs) {
    charts.push_back(plan.bars ? BarChart(results, axes, plan, chart)
                               : LineChart(results, axes, plan, chart));
  }
  *html = Page({results, from_run, axes, plan, source, specs, charts, options, baseline});
  if (summary != nullptr) {
    summary->points = static_cast<int64_t>(results.rows.size());
    summary->plotted = static_cast<int64_t>(plan.points.size());
    summary->charts = static_cast<int32_t>(charts.size());
  }
  return Status();
}

}  // namespace ppsim
