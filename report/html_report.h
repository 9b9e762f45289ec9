// The HTML report of a sweep or a run: `ppsim report results.csv -o report.html`, a page to decide
// from.
//
// Input is a sweep's results CSV (batch/results.h: first column `point`, then the swept
// axes, then the metric columns, status, error, wall_s) or what `ppsim run --format csv` writes
// (first column `schedule`, a row per schedule; read with ReadRunCsv, schedule as the one axis).
// Both are RFC 4180 CSV: a field may be quoted with "", a quote inside one is doubled, and a quoted
// field may hold commas and line breaks.
//
// Output is one self-contained HTML page: no network references (no scripts, fonts, styles or
// images from elsewhere; inline CSS and SVG, and a little inline JavaScript that only sorts the
// table). It has a header saying what was simulated and where the results came from
// (report/report_about.h: the model, the cluster, the parallelism, the experiment and its file,
// the ppsim version and the command, "not recorded" for what the inputs do not hold); the
// source name and counts; the decision at a glance (the ok point with the
// highest throughput among those that fit in memory, and how many run out of memory); the axes;
// one chart per question (report/chart_plan.h ChooseCharts: throughput, MFU when the runs
// have it, peak memory against the GPU capacity, the bubble as bubble_over_makespan), every chart
// marking the points out of memory; a note counting the points not plotted; and the table (every
// row; every column but those empty in every row, which a note names), numbers rounded to four
// significant digits with units (batch/result_values.h) and the file's text kept as each
// cell's hover text and sort key. The table scrolls sideways in its own box when it is wider than
// the page, so the page itself never is; charts sit two to a row when they fit.
//
// Charts (report/report_axes.h, chart_plan.h, svg_chart.h). Columns that move together (one
// determines the other over the rows, as a `with` axis) are one axis. An axis is numeric when
// each of its non-empty values parses with one and the same parser, tried in order: plain number,
// bandwidth, size, duration, FLOP rate (config/units.h), and all are finite; otherwise it is
// categorical. An axis varies when it has more than one distinct value (numeric axes compare
// values, so "1KiB" and "1024" are one value). The x axis is the first numeric axis that varies;
// every combination of the other varying axes is a series, drawn as a line with markers in
// increasing x. With no such axis, or when no series would have ok points at two x values, the
// charts are grouped bar charts: one bar per ok point, grouped by the first varying axis and
// coloured by the combination of the others. A series has the same colour in every chart, and a
// marker shape and dash of its own; lines end in a label of their series, so that equal series
// stay visible. Axes are linear, with ticks at 1, 2 or 5 × 10^k steps (whole steps when every x
// is whole), at most 8, or logarithmic when the values span more than 10x (base 2 when they are
// powers of two spanning 4x or more: microbatches 16 to 128) (report/chart_scale.h). Points out of
// memory far above the others (more than twice the largest other value or capacity) are drawn
// in a band above the memory chart with their value written. The bubble metrics are defined
// where they are shown (under the bubble chart, and in the table's headings).
//
// The output is deterministic: the same CSV text and source give byte-identical HTML.
#ifndef PPSIM_REPORT_HTML_REPORT_H_
#define PPSIM_REPORT_HTML_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "report/report_about.h"

namespace ppsim {

// What a rendered report holds, for the command line's one-line summary.
struct HtmlReportSummary {
  int64_t points = 0;   // rows of the CSV after its header
  int64_t plotted = 0;  // ok rows drawn in the charts
  int32_t charts = 0;   // SVG charts: 3, 4 with MFU, or 0 when nothing can be plotted
};

struct ReportOptions {
  // The header's facts (report/report_about.h); what is not recorded is said to be.
  ReportAbout about;
  // A baseline point: a point number, or for a run's CSV a schedule (or its row number, from 0).
  // When set, a chart of each point's speed-up over it follows the throughput chart, and the
  // header names it. "" for none.
  std::string baseline;
  std::string baseline_where = "baseline";  // how messages name the baseline (a flag)
};

// Parses `csv_text`, a results CSV or a run's CSV read from `source` (used only in messages and
// as the report's title), and sets *html to the report. A header with no rows is a valid sweep of
// no points.
//
// Errors are InvalidInput, one line per problem, "SOURCE:LINE: what is wrong; what is valid", LINE
// counting from 1 and naming the line a record starts on: a first column other than point or
// schedule, an empty file, a malformed header, an unterminated quoted field, a quote inside an
// unquoted field, a row with the wrong number of fields, a bad point, status, number or oom value
// (ReadResultsCsv, ReadRunCsv). Every bad row is reported (up to 20). A baseline that names no
// row, or a row that is not ok or has no throughput: "WHERE: no point '9'; valid: a point of the
// file (0-3)" or "WHERE: point 2 is failed; the baseline must be an ok point".
// On error *html and *summary are unchanged.
//
// REQUIRES: html != nullptr. summary may be nullptr.
Status RenderHtmlReport(std::string_view csv_text, const std::string& source,
                        const ReportOptions& options, std::string* html,
                        HtmlReportSummary* summary = nullptr);
// The same with no header facts and no baseline.
Status RenderHtmlReport(std::string_view csv_text, const std::string& source, std::string* html,
                        HtmlReportSummary* summary = nullptr);

}  // namespace ppsim

#endif  // PPSIM_REPORT_HTML_REPORT_H_
