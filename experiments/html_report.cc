#include "experiments/html_report.h"

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/escape.h"
#include "base/names.h"
#include "experiments/chart_plan.h"
#include "experiments/report_axes.h"
#include "experiments/results.h"
#include "experiments/svg_chart.h"
#include "models/units.h"

namespace ppsim {
namespace {

constexpr std::string_view kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;color:#222;line-height:1.4}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:18px;margin:28px 0 8px}
code{font-size:13px;background:#f4f4f4;padding:1px 4px}
figure{margin:0 0 20px;overflow-x:auto}
svg.chart{display:block;background:#fff}
.note{color:#555}
.table-wrap{overflow-x:auto}
table.results{border-collapse:collapse;font-size:13px}
table.results th,table.results td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
table.results th{background:#f3f3f3;cursor:pointer;position:sticky;top:0}
table.results th[aria-sort=ascending]::after{content:" \25B2"}
table.results th[aria-sort=descending]::after{content:" \25BC"}
table.results td.num{text-align:right;font-variant-numeric:tabular-nums}
table.results td.error{white-space:pre-wrap;max-width:40em}
table.results tr.not-ok td{background:#fff3f0}
)";

// Sorts the table by a clicked column (numbers by value, empty cells last, ties in point order).
// The page reads the same without it.
constexpr std::string_view kScript = R"((function () {
  var table = document.getElementById('results');
  if (!table || !table.tHead || !table.tBodies.length) return;
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  var rows = Array.prototype.slice.call(body.rows);
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
      var order = rows.map(function (row, index) { return [row, index, row.cells[col].textContent]; });
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
  for (const auto& [key, text] : axis.text_of_key)
    values.push_back(text.empty() ? "(empty)" : text);
  std::string out = "<li><b>" + MarkupEscape(axis.name) + "</b>: ";
  if (!axis.varies)
    return out + "constant, " + MarkupEscape(values.empty() ? "(no rows)" : values[0]) + "</li>\n";
  out += std::string(KindName(axis.kind)) + ", ";
  out += Plural(static_cast<int64_t>(values.size()), "value") + ": ";
  for (size_t i = 0; i < values.size() && i < 12; ++i)
    out += (i == 0 ? "" : ", ") + MarkupEscape(values[i]);
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
               : "; one line per combination of " + names(plan.series_axes) + ".";
  } else if (plan.group_axis >= 0) {
    out +=
        "No numeric axis varies, so the charts are bar charts: one bar per point, grouped by <b>" +
        MarkupEscape(axes[plan.group_axis].name) + "</b>";
    out += plan.series_axes.empty() ? "." : ", coloured by " + names(plan.series_axes) + ".";
  } else {
    out += "No axis varies, so the charts are bar charts with one bar per point.";
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

std::string TableMarkup(const ResultsTable& results, const std::vector<Axis>& axes) {
  const int columns = static_cast<int>(results.header.size());
  std::vector<bool> numeric(columns, false);
  numeric[0] = true;
  for (int a = 0; a < results.axis_count; ++a) numeric[1 + a] = IsNumeric(axes[a]);
  for (int m = 0; m < kResultColumnCount; ++m) numeric[1 + results.axis_count + m] = IsMetric(m);
  numeric[1 + results.axis_count + kWallColumn] = true;
  const int error_column = 1 + results.axis_count + kErrorColumn;

  std::string out =
      "<div class=\"table-wrap\">\n<table class=\"results\" id=\"results\">\n<thead><tr>";
  for (const std::string& name : results.header) {
    out += "<th title=\"sort by " + MarkupEscape(name) + "\">" + MarkupEscape(name) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const ResultRow& row : results.rows) {
    out += row.status == PointStatus::kOk ? "<tr>" : "<tr class=\"not-ok\">";
    for (int c = 0; c < columns; ++c) {
      const std::string& cell = row.fields[c];
      std::string title;
      const int metric = c - 1 - results.axis_count;
      if (row.status == PointStatus::kOk && metric == kMakespanColumn) title = HumanDuration(*row.values[kMakespanColumn]);
      if (row.status == PointStatus::kOk && (metric == kPeakMemoryColumn || metric == kStaticMemoryColumn)) {
        title = HumanBytes(*row.values[metric]);
      }
      out += "<td";
      if (numeric[c]) out += " class=\"num\"";
      if (c == error_column) out += " class=\"error\"";
      if (!title.empty()) out += " title=\"" + MarkupEscape(title) + "\"";
      out += ">" + MarkupEscape(cell) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</div>\n";
}

std::string Page(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                 const std::string& source, const std::vector<std::string>& charts) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ppsim "
      "report: " +
      MarkupEscape(source) + "</title>\n<style>\n" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<h1>ppsim sweep report</h1>\n";
  out += "<p>Results from <code>" + MarkupEscape(source) + "</code>: ";
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
    for (const std::string& chart : charts) out += "<figure>\n" + chart + "</figure>\n";
  }
  out += NotPlottedNote(plan);
  out += "<h2>Results</h2>\n";
  out +=
      "<p class=\"note\">Every row of the file; not-ok rows are shaded. Click a column heading "
      "to sort (needs JavaScript).</p>\n";
  out += TableMarkup(results, axes);
  out += "<script>\n" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace

Status RenderHtmlReport(std::string_view csv_text, const std::string& source, std::string* html,
                        HtmlReportSummary* summary) {
  ResultsTable results;
  Status status = ReadResultsCsv(csv_text, source, &results);
  if (!status.ok()) return status;
  const std::vector<Axis> axes = ClassifyAxes(results);
  const Plan plan = MakePlan(results, axes);
  std::vector<std::string> charts;
  if (!plan.points.empty()) {
    for (const ChartMetric& chart : kCharts) {
      charts.push_back(plan.bars ? BarChart(results, axes, plan, chart)
                                 : LineChart(results, axes, plan, chart));
    }
  }
  *html = Page(results, axes, plan, source, charts);
  if (summary != nullptr) {
    summary->points = static_cast<int64_t>(results.rows.size());
    summary->plotted = static_cast<int64_t>(plan.points.size());
    summary->charts = static_cast<int32_t>(charts.size());
  }
  return Status();
}

}  // namespace ppsim
