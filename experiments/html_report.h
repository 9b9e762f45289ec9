// The HTML report of a sweep: `ppsim report results.csv -o report.html`.
//
// Input is the results CSV a sweep writes (RFC 4180: a field may be quoted with "", a quote inside
// one is doubled, and a quoted field may hold commas and line breaks). Its header is
//
//   point,<axis 1>,...,<axis k>,makespan_s,bubble_over_makespan,stage_bubble_rate,
//   throughput_microbatches_per_s,peak_memory_bytes,static_memory_bytes,oom,status,error,wall_s
//
// `point` is the 0-based index of the sweep point (a whole number, each once); the axes (k >= 0)
// are the columns between `point` and `makespan_s`, holding the values as the user wrote them
// ("1F1B", "32", "400Gbps"). `status` is ok, failed, skipped, timeout or crashed. An ok row has a
// number in every metric column and true or false in `oom`; other rows may leave them empty and
// explain themselves in `error`. `wall_s` is a number (it may be empty on a row that is not ok).
//
// Output is one self-contained HTML page: no network references (no scripts, fonts, styles or
// images from elsewhere; inline CSS and SVG, and a little inline JavaScript that only sorts the
// table). It has the source name, a summary, SVG charts of makespan, bubble_over_makespan and
// peak_memory_bytes over the ok rows, a note counting the points not plotted, and the whole table
// (every row and column).
//
// Charts. An axis is numeric when each of its non-empty values parses with one and the same parser,
// tried in order: plain number, bandwidth, size, duration, FLOP rate (models/units.h), and all are
// finite; otherwise it is categorical. An axis varies when it has more than one distinct value
// (numeric axes compare values, so "1KiB" and "1024" are one value). The x axis is the first
// numeric axis that varies; every combination of the other varying axes is a series, drawn as a
// line with markers in increasing x. With no such axis, or when no series would have ok points at
// two x values (the numeric axis only moves with the others, as stages_per_rank with schedule), the
// charts are grouped bar charts: one bar per ok point, grouped by the first varying axis and
// coloured by the combination of the others. A series has the same colour in every chart. Axes are
// linear, with ticks at 1, 2 or 5 × 10^k steps (whole steps when every x is whole), at most 8.
//
// The output is deterministic: the same CSV text and source give byte-identical HTML.
#ifndef PPSIM_EXPERIMENTS_HTML_REPORT_H_
#define PPSIM_EXPERIMENTS_HTML_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ppsim {

// What a rendered report holds, for the command line's one-line summary.
struct HtmlReportSummary {
  int64_t points = 0;   // rows of the CSV after its header
  int64_t plotted = 0;  // ok rows drawn in the charts
  int32_t charts = 0;   // SVG charts: 3, or 0 when nothing can be plotted
};

// Parses `csv_text`, a results CSV read from `source` (used only in messages and as the report's
// title), and sets *html to the report. A header with no rows is a valid sweep of no points.
//
// Errors are InvalidInput, one line per problem, "SOURCE:LINE: what is wrong; what is valid", LINE
// counting from 1 and naming the line a record starts on: an empty file, a malformed header,
// an unterminated quoted field, a quote inside an unquoted field, a row with the wrong number of
// fields, a bad point, status, number or oom value. Every bad row is reported (up to 20).
// On error *html and *summary are unchanged.
//
// REQUIRES: html != nullptr. summary may be nullptr.
Status RenderHtmlReport(std::string_view csv_text, const std::string& source, std::string* html,
                        HtmlReportSummary* summary = nullptr);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_HTML_REPORT_H_
