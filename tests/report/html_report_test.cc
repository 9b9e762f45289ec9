// The HTML report of a sweep's results CSV: parsing errors verbatim, the charts chosen from the
// axes, escaping, self-containment and determinism; and `ppsim report`.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/svg.h"
#include "cli/cli.h"
#include "batch/results.h"
#include "tests/support/cli.h"
#include "tests/support/results.h"

namespace ppsim {
namespace {

constexpr const char* kMetricHeader =
    "makespan_s,bubble_over_makespan,bubble_over_ideal,stage_bubble_rate,"
    "throughput_microbatches_per_s,samples_per_s,tokens_per_s,mfu,hfu,peak_memory_bytes,"
    "static_memory_bytes,memory_capacity_bytes,oom,time_to_train_s,gpu_hours,cost,status,error,"
    "wall_s";

constexpr const char* kValid =
    "a results CSV has point, the swept axes, then makespan_s, bubble_over_makespan, "
    "bubble_over_ideal, stage_bubble_rate, throughput_microbatches_per_s, samples_per_s, "
    "tokens_per_s, mfu, hfu, peak_memory_bytes, static_memory_bytes, memory_capacity_bytes, oom, "
    "time_to_train_s, gpu_hours, cost, status, error, wall_s";

// The 16 empty metric cells of a row that is not ok, each after its comma.
const std::string kNoMetrics(16, ',');

std::string Header(const std::string& axes) {
  return "point," + (axes.empty() ? "" : axes + ",") + kMetricHeader + "\n";
}

// An ok row: `axes` is the comma-joined axis values; the cells after them are these (a 1 GiB
// peak of unlimited memory, 200 samples/s, no tokens, MFU or training figures) but for `cells`,
// by ResultColumn.
std::string Row(int point, const std::string& axes, const std::map<int, std::string>& cells) {
  std::vector<std::string> c = {"0.5",        "0.25",      "0.5", "0.1", "100", "200", "",
                                "",           "",          "1073741824", "536870912",  "0",
                                "false",      "",          "",    "",    "ok",  "",    "0.5"};
  for (const auto& [column, text] : cells) c[column] = text;
  std::string row = std::to_string(point) + (axes.empty() ? "" : "," + axes);
  for (const std::string& cell : c) row += "," + cell;
  return row + "\n";
}

std::string OkRow(int point, const std::string& axes, const std::string& makespan_s,
                  const std::string& bubble = "0.25",
                  const std::string& peak_bytes = "1073741824") {
  return Row(point, axes,
             {{kMakespanColumn, makespan_s}, {kBubbleColumn, bubble}, {kPeakMemoryColumn, peak_bytes}});
}

std::string FailedRow(int point, const std::string& axes, const std::string& error) {
  return std::to_string(point) + "," + (axes.empty() ? "" : axes + ",") + kNoMetrics.substr(1) +
         ",failed," + error + ",0.25\n";
}

std::string Render(const std::string& csv, HtmlReportSummary* summary = nullptr) {
  std::string html;
  const Status status = RenderHtmlReport(csv, "r.csv", &html, summary);
  EXPECT_TRUE(status.ok()) << status.message();
  return html;
}

std::string RenderError(const std::string& csv) {
  std::string html = "untouched";
  const Status status = RenderHtmlReport(csv, "r.csv", &html);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(html, "untouched");
  return status.message();
}

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// Every `<svg ...>...</svg>` of the page, in order.
std::vector<std::string> Charts(const std::string& html) {
  std::vector<std::string> charts;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    charts.push_back(html.substr(at, html.find("</svg>", at) + 6 - at));
  }
  return charts;
}

// The value of attribute `name` of the element starting at `at`.
std::string Attribute(const std::string& svg, size_t at, const std::string& name) {
  const size_t start = svg.find(" " + name + "=\"", at) + name.size() + 3;
  return svg.substr(start, svg.find('"', start) - start);
}

// Series label -> number of points of its polyline.
std::map<std::string, int> PolylinePoints(const std::string& svg) {
  std::map<std::string, int> points;
  for (size_t at = svg.find("<g class=\"series\""); at != std::string::npos;
       at = svg.find("<g class=\"series\"", at + 1)) {
    const std::string label = Attribute(svg, at, "data-series");
    const std::string coordinates = Attribute(svg, svg.find("<polyline", at), "points");
    points[label] = coordinates.empty() ? 0 : Count(coordinates, " ") + 1;
  }
  return points;
}

// The x coordinates of a series' polyline.
std::vector<double> PolylineXs(const std::string& svg) {
  std::vector<double> xs;
  std::istringstream coordinates(Attribute(svg, svg.find("<polyline"), "points"));
  std::string pair;
  while (coordinates >> pair) xs.push_back(std::stod(pair.substr(0, pair.find(','))));
  return xs;
}

TEST(HtmlReport, EmptyFileIsAnError) {
  EXPECT_EQ(RenderError(""), std::string("r.csv:1: empty file; ") + kValid);
}

TEST(HtmlReport, HeaderOnlyIsAReportOfNoPoints) {
  HtmlReportSummary summary;
  const std::string html = Render(Header("schedule,microbatches"), &summary);
  EXPECT_NE(html.find("no points"), std::string::npos);
  EXPECT_EQ(summary.points, 0);
  EXPECT_EQ(summary.charts, 0);
  EXPECT_EQ(Charts(html).size(), 0u);
  EXPECT_NE(html.find("<th title=\"sort by wall_s\">wall_<wbr>s</th>"), std::string::npos);
}

TEST(HtmlReport, MissingMakespanColumnIsAnError) {
  EXPECT_EQ(RenderError("point,schedule,bubble_over_makespan\n0,1F1B,0.5\n"),
            std::string("r.csv:1: missing column 'makespan_s'; ") + kValid);
}

TEST(HtmlReport, MissingMetricColumnIsAnError) {
  // The header sweeps wrote before bubble_over_ideal, samples_per_s, ... were columns.
  EXPECT_EQ(RenderError("point,pp,makespan_s,bubble_over_makespan,stage_bubble_rate,"
                        "throughput_microbatches_per_s,peak_memory_bytes,static_memory_bytes,oom,"
                        "status,error,wall_s\n"),
            std::string("r.csv:1: missing column 'bubble_over_ideal'; ") + kValid);
}

TEST(HtmlReport, MetricColumnsOutOfOrderAreAnError) {
  EXPECT_EQ(RenderError("point,pp,makespan_s,stage_bubble_rate,bubble_over_makespan,"
                        "throughput_microbatches_per_s,peak_memory_bytes,static_memory_bytes,oom,"
                        "status,error,wall_s\n"),
            std::string("r.csv:1: column 4 is 'stage_bubble_rate', expected "
                        "'bubble_over_makespan'; ") +
                kValid);
}

TEST(HtmlReport, ColumnAfterWallIsAnError) {
  EXPECT_EQ(RenderError("point,pp," + std::string(kMetricHeader) + ",note\n"),
            std::string("r.csv:1: unexpected column 'note' after wall_s; ") + kValid);
}

TEST(HtmlReport, FirstColumnMustBePointOrSchedule) {
  EXPECT_EQ(RenderError("index,pp," + std::string(kMetricHeader) + "\n"),
            "r.csv:1: first column is 'index'; a report reads a sweep's results CSV (first "
            "column 'point') or a run's CSV output (first column 'schedule')");
}

TEST(HtmlReport, RepeatedAxisIsAnError) {
  EXPECT_EQ(RenderError(Header("pp,schedule,pp")),
            "r.csv:1: column 4 'pp' repeats column 2; each column appears once");
}

TEST(HtmlReport, UnnamedAxisIsAnError) {
  EXPECT_EQ(RenderError(Header("pp,")),
            "r.csv:1: column 3 has no name; an axis column is named for the field it sweeps");
}

TEST(HtmlReport, RowWithTheWrongNumberOfFieldsIsAnError) {
  const std::string csv = Header("schedule,microbatches,pp,platform") +
                          OkRow(0, "1F1B,8,4,ideal", "0.5") + OkRow(1, "1F1B,16,4,ideal", "0.9") +
                          "2,1F1B,32,0.5,0.25,0.1,100,1,1,false,ok,,0.5\n";
  EXPECT_EQ(RenderError(csv), "r.csv:4: 13 fields, expected 24");
}

TEST(HtmlReport, UnterminatedQuotedFieldIsAnError) {
  const std::string csv = Header("schedule") + OkRow(0, "1F1B", "0.5") +
                          "1,GPipe,,,,,,,,failed,\"deadlock: rank 0\nwaits,0.5\n";
  EXPECT_EQ(RenderError(csv),
            "r.csv:3: unterminated quoted field; a quoted field ends with \" and a quote inside "
            "it is written \"\"");
}

TEST(HtmlReport, QuoteInsideAnUnquotedFieldIsAnError) {
  const std::string csv = Header("schedule") + "0,1F\"1B,0.5,0.25,0.1,100,1,1,false,ok,,0.5\n";
  EXPECT_EQ(RenderError(csv),
            "r.csv:2: quote inside unquoted field 2; quote the whole field and double the quotes "
            "in it");
}

TEST(HtmlReport, TextAfterAClosingQuoteIsAnError) {
  const std::string csv = Header("schedule") + "0,\"1F1B\"x,0.5,0.25,0.1,100,1,1,false,ok,,0.5\n";
  EXPECT_EQ(RenderError(csv),
            "r.csv:2: 'x' after the closing quote of field 2; a quoted field ends at a comma or "
            "the end of the line");
}

TEST(HtmlReport, UnknownStatusIsAnError) {
  const std::string csv = Header("pp") + "0,4" + kNoMetrics + ",done,,0.5\n";
  EXPECT_EQ(RenderError(csv),
            "r.csv:2: status 'done' is not valid; valid: ok, failed, skipped, timeout, crashed");
}

TEST(HtmlReport, OkRowNeedsNumericMetrics) {
  const std::string csv = Header("pp") + OkRow(0, "4", "fast");
  EXPECT_EQ(RenderError(csv),
            "r.csv:2: makespan_s 'fast' is not a number; an ok row has a number in each metric "
            "column but tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours and cost, which may "
            "be empty");
}

TEST(HtmlReport, OomIsTrueOrFalse) {
  std::string row = OkRow(0, "4", "0.5");
  row.replace(row.find(",false,"), 7, ",yes,");
  EXPECT_EQ(RenderError(Header("pp") + row), "r.csv:2: oom 'yes' is not valid; valid: true, false");
}

TEST(HtmlReport, WallIsANumber) {
  std::string row = OkRow(0, "4", "0.5");
  row.replace(row.rfind(",0.5\n"), 5, ",slow\n");
  EXPECT_EQ(RenderError(Header("pp") + row),
            "r.csv:2: wall_s 'slow' is not a number; wall_s is the run's wall-clock seconds");
}

TEST(HtmlReport, PointIsAWholeNumber) {
  const std::string csv = Header("pp") + OkRow(0, "4", "0.5") + "-1,8" + kNoMetrics + ",skipped,,0\n";
  EXPECT_EQ(RenderError(csv),
            "r.csv:3: point '-1' is not a whole number >= 0; point is the 0-based index of the "
            "sweep point");
}

TEST(HtmlReport, RepeatedPointIsAnError) {
  const std::string csv = Header("pp") + OkRow(0, "4", "0.5") + OkRow(0, "8", "0.7");
  EXPECT_EQ(RenderError(csv), "r.csv:3: point 0 repeats line 2; each point appears once");
}

TEST(HtmlReport, EveryBadRowIsReportedOnItsOwnLine) {
  const std::string csv = Header("pp") + OkRow(0, "4", "0.5") + "1,8\n" + OkRow(2, "16", "x");
  EXPECT_EQ(RenderError(csv),
            "r.csv:3: 2 fields, expected 21\n"
            "r.csv:4: makespan_s 'x' is not a number; an ok row has a number in each metric "
            "column but tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours and cost, which may "
            "be empty");
}

TEST(HtmlReport, QuotedFieldsKeepCommasQuotesAndLineBreaks) {
  // The error spans lines 3 and 4, so the bad row after it is on line 5.
  const std::string good = Header("schedule") + OkRow(0, "1F1B", "0.5") +
                           FailedRow(1, "GPipe", "\"rank 0, \"\"stuck\"\"\nat 0B0\"");
  EXPECT_NE(Render(good).find("<td class=\"error\">rank 0, &quot;stuck&quot;\nat 0B0</td>"),
            std::string::npos);
  EXPECT_EQ(RenderError(good + "2,x\n"), "r.csv:5: 2 fields, expected 21");
}

TEST(HtmlReport, CrLfLineEndsAreAccepted) {
  std::string csv = Header("pp") + OkRow(0, "4", "0.5") + OkRow(1, "8", "0.7");
  for (size_t at = csv.find('\n'); at != std::string::npos; at = csv.find('\n', at + 2)) {
    csv.insert(at, "\r");
  }
  HtmlReportSummary summary;
  Render(csv, &summary);
  EXPECT_EQ(summary.points, 2);
  EXPECT_EQ(summary.plotted, 2);
}

TEST(HtmlReport, TwoAxisSweepDrawsOneLinePerScheduleInEveryChart) {
  const std::vector<std::string> schedules = {"1F1B", "GPipe", "ZB-H1"};
  const std::vector<std::string> microbatches = {"8", "16", "32", "64"};
  std::string csv = Header("schedule,microbatches");
  int point = 0;
  for (const std::string& s : schedules) {
    for (const std::string& m : microbatches) {
      csv += OkRow(point, s + "," + m, "0.0" + std::to_string(point + 1));
      ++point;
    }
  }
  HtmlReportSummary summary;
  const std::string html = Render(csv, &summary);
  EXPECT_EQ(summary.points, 12);
  EXPECT_EQ(summary.charts, 3);
  const std::vector<std::string> charts = Charts(html);
  ASSERT_EQ(charts.size(), 3u);
  // No tokens_per_s and no mfu in these rows: throughput in samples/s, no MFU chart.
  const std::vector<std::string> metrics = {"samples_per_s", "peak_memory_bytes",
                                            "bubble_over_makespan"};
  for (size_t c = 0; c < charts.size(); ++c) {
    EXPECT_EQ(Attribute(charts[c], 0, "data-metric"), metrics[c]);
    EXPECT_EQ(Count(charts[c], "<polyline"), 3);
    const std::map<std::string, int> expected = {
        {"schedule=1F1B", 4}, {"schedule=GPipe", 4}, {"schedule=ZB-H1", 4}};
    EXPECT_EQ(PolylinePoints(charts[c]), expected);
    EXPECT_EQ(Count(charts[c], "class=\"legend-entry\""), 3);
    // 8 to 64 microbatches: powers of two over 8x, a base-2 log axis.
    EXPECT_NE(charts[c].find(">microbatches, log scale</text>"), std::string::npos);
  }
  // OkRow's 200 samples/s need no prefix; its 1 GiB peaks are shown in GiB.
  EXPECT_NE(charts[0].find(">throughput (samples/s)</text>"), std::string::npos);
  EXPECT_NE(charts[1].find(">peak memory (GiB)</text>"), std::string::npos);
  EXPECT_NE(charts[2].find(">bubble / makespan (%)</text>"), std::string::npos);
  EXPECT_EQ(html.find("data-metric=\"makespan_s\""), std::string::npos);
}

TEST(HtmlReport, SeriesKeepTheirColourInEveryChart) {
  const std::string csv = Header("schedule,pp") + OkRow(0, "1F1B,4", "0.1") +
                          OkRow(1, "1F1B,8", "0.2") + OkRow(2, "GPipe,4", "0.3") +
                          OkRow(3, "GPipe,8", "0.4");
  std::vector<std::string> strokes;
  for (const std::string& chart : Charts(Render(csv))) {
    const size_t gpipe = chart.find("data-series=\"schedule=GPipe\"");
    ASSERT_NE(gpipe, std::string::npos);
    strokes.push_back(Attribute(chart, chart.find("<polyline", gpipe), "stroke"));
  }
  ASSERT_EQ(strokes.size(), 3u);
  EXPECT_EQ(strokes[0], strokes[1]);
  EXPECT_EQ(strokes[0], strokes[2]);
}

TEST(HtmlReport, BandwidthAxisIsNumericAndSortedByValue) {
  // Written out of order, and "1600Gbps" sorts before "200Gbps" as text.
  const std::string csv = Header("schedule,set.nic.bandwidth") + OkRow(0, "1F1B,400Gbps", "0.03") +
                          OkRow(1, "1F1B,1600Gbps", "0.01") + OkRow(2, "1F1B,200Gbps", "0.05");
  const std::vector<std::string> charts = Charts(Render(csv));
  ASSERT_EQ(charts.size(), 3u);
  const std::string& svg = charts[0];
  EXPECT_NE(svg.find("class=\"chart lines\""), std::string::npos);
  EXPECT_NE(svg.find(">NIC bandwidth (set.nic.bandwidth, Gb/s)</text>"), std::string::npos);
  const std::vector<double> xs = PolylineXs(svg);
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_LT(xs[0], xs[1]);
  EXPECT_LT(xs[1], xs[2]);
  // 200 -> 400 is 200 Gb/s, 400 -> 1600 is 1200 Gb/s: a linear axis.
  EXPECT_NEAR((xs[2] - xs[1]) / (xs[1] - xs[0]), 6.0, 0.05);
  const size_t at200 = svg.find("set.nic.bandwidth=200Gbps");
  const size_t at400 = svg.find("set.nic.bandwidth=400Gbps");
  const size_t at1600 = svg.find("set.nic.bandwidth=1600Gbps");
  ASSERT_NE(at1600, std::string::npos);
  EXPECT_LT(at200, at400);
  EXPECT_LT(at400, at1600);
}

TEST(HtmlReport, AxisWithMixedUnitsUsesAPrefixedBaseUnit) {
  // 500ns and 2us are durations; the largest, 2 us, picks microseconds.
  const std::string csv =
      Header("set.nic.latency") + OkRow(0, "500ns", "0.03") + OkRow(1, "2us", "0.04");
  const std::string svg = Charts(Render(csv))[0];
  EXPECT_NE(svg.find(">NIC latency (set.nic.latency, us)</text>"), std::string::npos);
}

TEST(HtmlReport, LargePlainNumbersAreShownInAPowerOfAThousand) {
  const std::string csv =
      Header("set.gpu.flops") + OkRow(0, "989e12", "0.03") + OkRow(1, "2000000000000000", "0.02");
  const std::string svg = Charts(Render(csv))[0];
  EXPECT_NE(svg.find(">GPU flops (set.gpu.flops, \u00d71e15)</text>"), std::string::npos);
}

TEST(HtmlReport, CategoricalOnlySweepDrawsBarCharts) {
  const std::string csv = Header("schedule,platform") + OkRow(0, "1F1B,h100-node", "0.1") +
                          OkRow(1, "1F1B,dgx-h100", "0.2") + OkRow(2, "GPipe,h100-node", "0.3") +
                          OkRow(3, "GPipe,dgx-h100", "0.4");
  const std::vector<std::string> charts = Charts(Render(csv));
  ASSERT_EQ(charts.size(), 3u);
  for (const std::string& svg : charts) {
    EXPECT_NE(svg.find("class=\"chart bars\""), std::string::npos);
    EXPECT_EQ(Count(svg, "<rect class=\"bar\""), 4);
    EXPECT_EQ(Count(svg, "<polyline"), 0);
    // Grouped by schedule, coloured by platform.
    EXPECT_EQ(Count(svg, "data-series=\"platform=h100-node\""), 2);
    EXPECT_EQ(Count(svg, "class=\"legend-entry\""), 2);
    EXPECT_NE(svg.find(">1F1B</text>"), std::string::npos);
    EXPECT_NE(svg.find(">GPipe</text>"), std::string::npos);
  }
}

TEST(HtmlReport, AxisWithANonNumberIsCategorical) {
  const std::string csv = Header("microbatches") + OkRow(0, "8", "0.1") + OkRow(1, "auto", "0.2");
  const std::vector<std::string> charts = Charts(Render(csv));
  ASSERT_EQ(charts.size(), 3u);
  EXPECT_EQ(Count(charts[0], "<rect class=\"bar\""), 2);
}

TEST(HtmlReport, NumericAxisThatOnlyMovesWithTheScheduleIsPartOfItsAxis) {
  // stages_per_rank is 1 for 1F1B and ZB-H1 and 2 for Interleaved1F1B: the schedule determines
  // it, so the two columns are one categorical axis, and its points are bars.
  const std::string csv = Header("schedule,stages_per_rank") + OkRow(0, "1F1B,1", "0.1") +
                          OkRow(1, "Interleaved1F1B,2", "0.2") + OkRow(2, "ZB-H1,1", "0.3");
  const std::string html = Render(csv);
  const std::vector<std::string> charts = Charts(html);
  ASSERT_EQ(charts.size(), 3u);
  EXPECT_EQ(Count(charts[0], "<rect class=\"bar\""), 3);
  EXPECT_EQ(Count(charts[0], "<polyline"), 0);
  EXPECT_EQ(Count(charts[0], "class=\"legend-entry\""), 0);  // one series
  EXPECT_NE(charts[0].find(">Interleaved1F1B / 2</text>"), std::string::npos);
  EXPECT_NE(charts[0].find(">schedule / stages_per_rank</text>"), std::string::npos);
  EXPECT_NE(html.find("<li><b>schedule / stages_per_rank</b>: categorical, its columns moving "
                      "together, 3 values: 1F1B / 1, Interleaved1F1B / 2, ZB-H1 / 1</li>"),
            std::string::npos);
}

TEST(HtmlReport, WholeNumberAxisHasWholeTicks) {
  // 1..2 would get steps of 0.2; microbatches take whole steps.
  const std::string csv = Header("microbatches") + OkRow(0, "1", "0.1") + OkRow(1, "2", "0.2");
  const std::string svg = Charts(Render(csv))[0];
  EXPECT_NE(svg.find(">1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">2</text>"), std::string::npos);
  EXPECT_EQ(svg.find(".5</text>"), std::string::npos);
  EXPECT_EQ(svg.find(".2</text>"), std::string::npos);
}

TEST(HtmlReport, YTicksUseOneTwoFiveSteps) {
  // Bubbles up to 27 %: steps of 1 or 2 give more than 8 ticks, 5 gives 0..30.
  const std::string csv =
      Header("pp") + OkRow(0, "4", "0.1", "0.27") + OkRow(1, "8", "0.1", "0.13");
  const std::string svg = Charts(Render(csv))[2];
  ASSERT_EQ(Attribute(svg, 0, "data-metric"), "bubble_over_makespan");
  for (const char* label : {">0</text>", ">5</text>", ">10</text>", ">25</text>", ">30</text>"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  EXPECT_EQ(svg.find(">35</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">2</text>"), std::string::npos);
}

TEST(HtmlReport, HasNoNetworkReferences) {
  const std::string csv = Header("schedule,microbatches") + OkRow(0, "1F1B,8", "0.1") +
                          OkRow(1, "1F1B,16", "0.2") + FailedRow(2, "GPipe,8", "boom");
  const std::string html = Render(csv);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
}

TEST(HtmlReport, EscapesMarkupInValues) {
  const std::string name = "<script>alert('x')</script>";
  const std::string csv = Header("schedule,pp") + OkRow(0, name + ",4", "0.1") +
                          OkRow(1, name + ",8", "0.2") + OkRow(2, "1F1B&GPipe,4", "0.3") +
                          OkRow(3, "1F1B&GPipe,8", "0.4");
  const std::string html = Render(csv);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("1F1B&amp;GPipe"), std::string::npos);
  EXPECT_EQ(html.find("1F1B&GPipe"), std::string::npos);
}

TEST(HtmlReport, EscapesTheSourceName) {
  std::string html;
  ASSERT_TRUE(RenderHtmlReport(Header("pp"), "a<b>.csv", &html).ok());
  EXPECT_NE(html.find("a&lt;b&gt;.csv"), std::string::npos);
  EXPECT_EQ(html.find("a<b>.csv"), std::string::npos);
}

TEST(HtmlReport, RendersDeterministically) {
  const std::string csv =
      Header("schedule,microbatches,set.nic.bandwidth") + OkRow(0, "1F1B,8,200Gbps", "0.0408") +
      OkRow(1, "GPipe,8,400Gbps", "1.2e-05") + FailedRow(2, "ZB-H1,8,200Gbps", "x");
  const std::string first = Render(csv);
  EXPECT_EQ(Render(csv), first);
  EXPECT_EQ(Render(std::string(csv)), first);
}

TEST(HtmlReport, FailedRowsAreInTheTableButNotInTheCharts) {
  const std::string csv = Header("schedule,microbatches") + OkRow(0, "1F1B,8", "0.1") +
                          OkRow(1, "1F1B,16", "0.2") + OkRow(2, "GPipe,8", "0.15") +
                          FailedRow(3, "GPipe,16", "deadlock: rank 0 waits at 0B0 for 1B0") +
                          "4,GPipe,32" + kNoMetrics + ",skipped,not run,\n";
  HtmlReportSummary summary;
  const std::string html = Render(csv, &summary);
  EXPECT_EQ(summary.points, 5);
  EXPECT_EQ(summary.plotted, 3);
  EXPECT_NE(html.find("<td class=\"error\">deadlock: rank 0 waits at 0B0 for 1B0</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>failed</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>skipped</td>"), std::string::npos);
  EXPECT_EQ(Count(html, "<tr class=\"not-ok\">"), 2);
  for (const std::string& svg : Charts(html)) {
    const std::map<std::string, int> expected = {{"schedule=1F1B", 2}, {"schedule=GPipe", 1}};
    EXPECT_EQ(PolylinePoints(svg), expected);
    EXPECT_EQ(svg.find("point 3"), std::string::npos);
  }
  EXPECT_NE(html.find("2 points are not plotted (1 failed, 1 skipped); see the table."),
            std::string::npos);
}

TEST(HtmlReport, NoOkPointsMeansNoCharts) {
  HtmlReportSummary summary;
  const std::string html = Render(Header("pp") + FailedRow(0, "4", "x"), &summary);
  EXPECT_EQ(summary.charts, 0);
  EXPECT_TRUE(Charts(html).empty());
  EXPECT_NE(html.find("1 point is not plotted (1 failed)"), std::string::npos);
}

// The chart of `metric` in `html`, or "".
std::string ChartOf(const std::string& html, const std::string& metric) {
  for (const std::string& svg : Charts(html)) {
    if (Attribute(svg, 0, "data-metric") == metric) return svg;
  }
  return "";
}

TEST(HtmlReport, ZippedColumnsAreOneAxisSoTheNumericAxisIsX) {
  // The README's sweep: schedule with stages_per_rank (zipped; 1F1B and GPipe share 1), times
  // microbatches. One axis "schedule / stages_per_rank" makes the series; microbatches is x.
  const std::vector<std::string> zipped = {"1F1B,1", "GPipe,1", "Interleaved1F1B,2"};
  std::string csv = Header("schedule,stages_per_rank,microbatches");
  int point = 0;
  for (const std::string& z : zipped) {
    for (const char* m : {"8", "16"}) {
      csv += OkRow(point, z + "," + m, "0.0" + std::to_string(point + 1));
      ++point;
    }
  }
  const std::string html = Render(csv);
  EXPECT_NE(html.find("x axis: <b>microbatches</b>; one line per combination of <b>schedule / "
                      "stages_per_rank</b>"),
            std::string::npos);
  EXPECT_EQ(html.find("No numeric axis"), std::string::npos);
  EXPECT_NE(html.find("<li><b>schedule / stages_per_rank</b>: categorical, its columns moving "
                      "together, 3 values: 1F1B / 1, GPipe / 1, Interleaved1F1B / 2</li>"),
            std::string::npos);
  EXPECT_NE(html.find("<li><b>microbatches</b>: number, 2 values: 8, 16</li>"), std::string::npos);
  const std::vector<std::string> charts = Charts(html);
  ASSERT_EQ(charts.size(), 3u);
  for (const std::string& svg : charts) {
    EXPECT_NE(svg.find("class=\"chart lines\""), std::string::npos);
    const std::map<std::string, int> expected = {{"schedule=1F1B / stages_per_rank=1", 2},
                                                 {"schedule=GPipe / stages_per_rank=1", 2},
                                                 {"schedule=Interleaved1F1B / stages_per_rank=2", 2}};
    EXPECT_EQ(PolylinePoints(svg), expected);
    EXPECT_NE(svg.find(">microbatches</text>"), std::string::npos);
  }
}

TEST(HtmlReport, NumericColumnsThatDetermineEachOtherShareTheXAxis) {
  const std::string csv = Header("pp,microbatches") + OkRow(0, "2,8", "0.1") +
                          OkRow(1, "4,16", "0.2") + OkRow(2, "8,32", "0.3");
  const std::string svg = Charts(Render(csv))[0];
  EXPECT_NE(svg.find("class=\"chart lines\""), std::string::npos);
  EXPECT_NE(svg.find(">pp / microbatches, log scale</text>"), std::string::npos);
  EXPECT_EQ(PolylineXs(svg).size(), 3u);
  EXPECT_EQ(Count(svg, "class=\"legend-entry\""), 0);
}

TEST(HtmlReport, EachSeriesHasItsPaletteColourInEveryChartAndItsLegend) {
  // 13 schedules (series 0..12, in order of first appearance) over pp 4 and 8.
  std::string csv = Header("schedule,pp");
  for (int s = 0; s < 13; ++s) {
    csv += OkRow(2 * s, "S" + std::to_string(s) + ",4", "0.1");
    csv += OkRow(2 * s + 1, "S" + std::to_string(s) + ",8", "0.2");
  }
  const std::string html = Render(csv);
  EXPECT_NE(html.find("There are 13 series and 12 colours: after the twelfth, colours repeat, "
                      "on line charts with another marker shape and dash (bars of a repeated "
                      "colour are told apart by their legend order only)."),
            std::string::npos);
  // Shapes cycle circle, square, triangle, diamond and dashes none, 7 3, 2 2, 9 3 2 3, over the
  // series; the colours' second round shifts the shape by one and the dash by two.
  const char* kShapes[] = {"<circle", "<rect c", "<polygo", "<polygo"};
  std::set<std::string> first_twelve;
  for (const std::string& svg : Charts(html)) {
    for (int s = 0; s < 13; ++s) {
      const size_t series = svg.find("data-series=\"schedule=S" + std::to_string(s) + "\"");
      ASSERT_NE(series, std::string::npos) << s;
      const size_t line = svg.find("<polyline", series);
      EXPECT_EQ(Attribute(svg, line, "stroke"), kPalette[s % 12]) << s;
      const std::string polyline = svg.substr(line, svg.find("/>", line) - line);
      const int shape = (s + s / 12) % 4;
      const int dash = (s + 2 * (s / 12)) % 4;
      EXPECT_EQ(polyline.find("stroke-dasharray") != std::string::npos, dash != 0) << s;
      const size_t marker = svg.find("class=\"marker\"", line);
      EXPECT_EQ(svg.substr(svg.rfind('<', marker), 7), kShapes[shape]) << s;
      if (s < 12) first_twelve.insert(Attribute(svg, line, "stroke"));
    }
    // The legend lists the series in order, each in its colour.
    size_t at = svg.find("class=\"legend-entry\"");
    for (int s = 0; s < 13; ++s) {
      ASSERT_NE(at, std::string::npos) << s;
      EXPECT_EQ(Attribute(svg, svg.find("<line", at), "stroke"), kPalette[s % 12]) << s;
      EXPECT_NE(svg.find(">schedule=S" + std::to_string(s) + "</text>", at), std::string::npos);
      at = svg.find("class=\"legend-entry\"", at + 1);
    }
  }
  EXPECT_EQ(first_twelve.size(), 12u);
}

TEST(HtmlReport, ThroughputIsInTokensWhenTheRunsHaveThemAndMfuHasItsChart) {
  const std::string csv =
      Header("microbatches") +
      Row(0, "8", {{kTokensColumn, "1500000"}, {kMfuColumn, "0.4"}, {kSamplesColumn, "366.2"}}) +
      Row(1, "16", {{kTokensColumn, "3000000"}, {kMfuColumn, "0.45"}, {kSamplesColumn, "732.4"}});
  HtmlReportSummary summary;
  const std::string html = Render(csv, &summary);
  EXPECT_EQ(summary.charts, 4);
  std::vector<std::string> metrics;
  for (const std::string& svg : Charts(html)) metrics.push_back(Attribute(svg, 0, "data-metric"));
  EXPECT_EQ(metrics, (std::vector<std::string>{"tokens_per_s", "mfu", "peak_memory_bytes",
                                               "bubble_over_makespan"}));
  const std::string tokens = ChartOf(html, "tokens_per_s");
  // 1.5 and 3 M: steps of 0.5 M give 0.0 .. 3.0, 7 ticks.
  EXPECT_NE(tokens.find(">throughput (M tokens/s)</text>"), std::string::npos);
  EXPECT_NE(tokens.find(">2.5</text>"), std::string::npos);
  EXPECT_NE(tokens.find("<title>point 0 (microbatches=8): 1.5 M tokens/s</title>"),
            std::string::npos);
  const std::string mfu = ChartOf(html, "mfu");
  // 40 and 45 %: steps of 5 give 10 ticks, 10 gives 0 .. 50.
  EXPECT_NE(mfu.find(">MFU (%)</text>"), std::string::npos);
  EXPECT_NE(mfu.find(">50</text>"), std::string::npos);
  EXPECT_EQ(mfu.find(">45</text>"), std::string::npos);
  EXPECT_NE(mfu.find("<title>point 1 (microbatches=16): 45%</title>"), std::string::npos);
  EXPECT_NE(html.find("<b>Highest throughput that fits in memory</b>: point 1 (microbatches=16): "
                      "3 M tokens/s, MFU 45%, peak memory 1 GiB, <abbr title=\"bubble_over_makespan = 1 \u2212 "
                      "\u03a3busy / (ranks \u00b7 makespan): the share of the GPUs&#39; time idle, "
                      "0 to 100%\">bubble</abbr> 25%.</p>"),
            std::string::npos);
}

TEST(HtmlReport, OomPointsAreMarkedAndTheCapacityIsALine) {
  // Peaks of 40, 60 and 90 GiB on 80 GiB GPUs: the last runs out of memory.
  auto row = [](int point, const std::string& pp, const std::string& samples,
                const std::string& peak, const std::string& oom) {
    return Row(point, pp,
               {{kSamplesColumn, samples}, {kPeakMemoryColumn, peak},
                {kCapacityColumn, "85899345920"}, {kOomColumn, oom}});
  };
  const std::string csv = Header("pp") + row(0, "4", "100", "42949672960", "false") +
                          row(1, "8", "150", "64424509440", "false") +
                          row(2, "16", "300", "96636764160", "true");
  const std::string html = Render(csv);
  const std::string memory = ChartOf(html, "peak_memory_bytes");
  // The OOM point's cross, and the legend's.
  EXPECT_EQ(Count(memory, "<g class=\"oom\">"), 2);
  EXPECT_NE(memory.find("<g class=\"oom\"><title>point 2 (pp=16): 90 GiB of 80 GiB, OOM</title>"),
            std::string::npos);
  EXPECT_NE(memory.find("<g class=\"legend-entry oom-entry\">"), std::string::npos);
  EXPECT_NE(memory.find(">OOM (out of memory)</text>"), std::string::npos);
  // y ticks 0 .. 100 GiB (steps of 20) over 300 px from y = 344: 80 GiB is at 344 - 240 = 104.
  const size_t line = memory.find("class=\"capacity\"");
  ASSERT_NE(line, std::string::npos);
  const size_t tag = memory.rfind("<line", line);
  EXPECT_EQ(Attribute(memory, tag, "y1"), "104.0");
  EXPECT_EQ(Attribute(memory, tag, "y2"), "104.0");
  EXPECT_EQ(Count(memory, "class=\"capacity\""), 1);
  EXPECT_NE(memory.find(">GPU capacity 80 GiB</text>"), std::string::npos);
  // Every chart marks the OOM point; only the memory chart has the capacity.
  const std::string throughput = ChartOf(html, "samples_per_s");
  EXPECT_EQ(Count(throughput, "<g class=\"oom\">"), 2);
  EXPECT_EQ(throughput.find("class=\"capacity\""), std::string::npos);
  EXPECT_NE(html.find("<td class=\"oom\" title=\"true\" data-value=\"true\">OOM</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<p class=\"oom-note\">1 point of 3 runs out of memory (OOM)"),
            std::string::npos);
  // The best point is the fastest that fits: point 1, not the OOM point 2.
  EXPECT_NE(html.find("<b>Highest throughput that fits in memory</b>: point 1 (pp=8): "
                      "150 samples/s, peak memory 60 GiB of 80 GiB, <abbr title=\"bubble_over_makespan "
                      "= 1 \u2212 \u03a3busy / (ranks \u00b7 makespan): the share of the GPUs&#39; "
                      "time idle, 0 to 100%\">bubble</abbr> 25%.</p>"),
            std::string::npos);
}

TEST(HtmlReport, OomBarsAreHatched) {
  const std::string csv =
      Header("platform") +
      Row(0, "h100", {{kCapacityColumn, "85899345920"}, {kOomColumn, "false"}}) +
      Row(1, "a100-40", {{kCapacityColumn, "42949672960"}, {kOomColumn, "true"},
                         {kPeakMemoryColumn, "53687091200"}});
  const std::string memory = ChartOf(Render(csv), "peak_memory_bytes");
  EXPECT_NE(memory.find("class=\"chart bars\""), std::string::npos);
  EXPECT_NE(memory.find("<pattern id=\"oom-hatch-peak_memory_bytes\""), std::string::npos);
  EXPECT_EQ(Count(memory, "<rect class=\"oom-bar\""), 1);
  EXPECT_NE(memory.find("<title>point 1 (platform=a100-40): 50 GiB of 40 GiB, OOM</title>"),
            std::string::npos);
  // Two capacities, two lines, the larger first.
  EXPECT_EQ(Count(memory, "class=\"capacity\""), 2);
  EXPECT_LT(memory.find(">GPU capacity 80 GiB</text>"), memory.find(">GPU capacity 40 GiB</text>"));
}

TEST(HtmlReport, TableShowsRoundedValuesWithUnitsAndKeepsTheFileValues) {
  const std::string csv =
      Header("pp") + Row(0, "4",
                         {{kMakespanColumn, "0.0125"},
                          {kBubbleColumn, "0.24313962300173908"},
                          {kTokensColumn, "1234567"}});
  const std::string html = Render(csv);
  EXPECT_NE(html.find("<td class=\"num\" title=\"0.0125\" data-value=\"0.0125\">12.5 ms</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" title=\"0.24313962300173908\" "
                      "data-value=\"0.24313962300173908\">24.31%</td>"),
            std::string::npos);
  EXPECT_NE(html.find("data-value=\"1234567\">1.235 M/s</td>"), std::string::npos);
  EXPECT_NE(html.find("data-value=\"1073741824\">1 GiB</td>"), std::string::npos);
  EXPECT_NE(html.find("data-value=\"0\">unlimited</td>"), std::string::npos);
  EXPECT_NE(html.find("data-value=\"0.5\">500 ms</td>"), std::string::npos);  // wall_s
  EXPECT_NE(html.find("<td title=\"false\" data-value=\"false\">no</td>"),
            std::string::npos);
  // Columns empty in every row are left out, and named.
  EXPECT_NE(html.find("Left out, empty in every row: <code>mfu</code>, <code>hfu</code>, "
                      "<code>time_to_train_s</code>, <code>gpu_hours</code>, <code>cost</code>, "
                      "<code>error</code>.</p>"),
            std::string::npos);
  EXPECT_EQ(html.find("<th title=\"sort by mfu\">"), std::string::npos);
  EXPECT_NE(html.find("<th title=\"sort by tokens_per_s\">tokens_<wbr>per_<wbr>s</th>"),
            std::string::npos);
}

// A run's CSV of two schedules: 8 microbatches on 2 replicas in 40 ms and 50 ms, i.e. 400 and 320
// microbatches/s; GPipe's peak memory is over the GPU's capacity.
std::string TwoSchedulesRunCsv() {
  return std::string(kRunCsvHeader) +
         "1F1B,4,4,8,ideal,simgrid,0.04,0.25,0.3333333333333333,0.25,0,64,48,0,1073741824,"
         "85899345920,0,,,400,,,,,2,1,0,0,0\n"
         "GPipe,4,4,8,ideal,simgrid,0.05,0.4,0.6666666666666666,0.4,0,64,48,0,96636764160,"
         "85899345920,4,,,320,,,,,2,1,0,0,0\n";
}

TEST(HtmlReport, ReadsARunCsvWithTheScheduleAsItsAxis) {
  const std::string csv = TwoSchedulesRunCsv();
  HtmlReportSummary summary;
  const std::string html = Render(csv, &summary);
  EXPECT_EQ(summary.points, 2);
  EXPECT_EQ(summary.plotted, 2);
  EXPECT_EQ(summary.charts, 3);
  EXPECT_NE(html.find("<h1>ppsim run report</h1>"), std::string::npos);
  EXPECT_NE(html.find("(a run's CSV: one point per schedule): 2 points (2 ok)."),
            std::string::npos);
  EXPECT_NE(html.find("<li><b>schedule</b>: categorical, 2 values: 1F1B, GPipe</li>"),
            std::string::npos);
  EXPECT_NE(html.find("data-value=\"400\">400/s</td><td class=\"num\" title=\"400\" "
                      "data-value=\"400\">400/s</td>"),
            std::string::npos);  // throughput_microbatches_per_s = 8 x 2 / 0.04, samples_per_s
  EXPECT_NE(html.find("data-value=\"320\">320/s</td>"), std::string::npos);
  // A run CSV has no static memory, error or wall time.
  EXPECT_NE(html.find("Left out, empty in every row: <code>tokens_per_s</code>, <code>mfu</code>, "
                      "<code>hfu</code>, <code>static_memory_bytes</code>, "
                      "<code>time_to_train_s</code>, <code>gpu_hours</code>, <code>cost</code>, "
                      "<code>error</code>, <code>wall_s</code>.</p>"),
            std::string::npos);
  const std::string memory = ChartOf(html, "peak_memory_bytes");
  EXPECT_EQ(Count(memory, "<rect class=\"bar\""), 2);
  EXPECT_EQ(Count(memory, "<rect class=\"oom-bar\""), 1);
  EXPECT_EQ(Count(memory, "class=\"capacity\""), 1);
}

CliResult Report(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"report"};
  all.insert(all.end(), args.begin(), args.end());
  return Cli(all);
}

std::string TempPath(const std::string& name) { return ::testing::TempDir() + name; }

std::string RenderWith(const std::string& csv, const ReportOptions& options) {
  std::string html;
  const Status status = RenderHtmlReport(csv, "r.csv", options, &html);
  EXPECT_TRUE(status.ok()) << status.message();
  return html;
}

// The polyline points of the series `label` as (x, y) pairs.
std::vector<std::pair<double, double>> SeriesPoints(const std::string& svg,
                                                    const std::string& label) {
  const size_t at = svg.find("data-series=\"" + label + "\"");
  EXPECT_NE(at, std::string::npos) << label;
  std::istringstream coordinates(Attribute(svg, svg.find("<polyline", at), "points"));
  std::vector<std::pair<double, double>> points;
  std::string pair;
  while (coordinates >> pair) {
    points.push_back({std::stod(pair.substr(0, pair.find(','))),
                      std::stod(pair.substr(pair.find(',') + 1))});
  }
  return points;
}

TEST(HtmlReport, HeaderSaysWhatWasSimulatedAndWhereTheResultsCameFrom) {
  ReportOptions options;
  options.about.ppsim_version = "0.1.0";
  options.about.command = "ppsim sweep e.yaml -o r.csv";
  options.about.experiment = "microbatch-sweep";
  options.about.experiment_file = "e.yaml";
  options.about.simulated = {{"model", "llama3-8b"},
                             {"cluster", "h100-node, 8 GPUs"},
                             {"parallelism", "pp 4 \u00b7 tp 1 \u00b7 dp 2"}};
  const std::string html =
      RenderWith(Header("pp") + OkRow(0, "4", "0.1") + OkRow(1, "8", "0.2"), options);
  EXPECT_NE(html.find("<h1>ppsim sweep report: microbatch-sweep</h1>"), std::string::npos);
  for (const char* fact :
       {"<dt>model</dt><dd>llama3-8b</dd>", "<dt>cluster</dt><dd>h100-node, 8 GPUs</dd>",
        "<dt>parallelism</dt><dd>pp 4 \u00b7 tp 1 \u00b7 dp 2</dd>",
        "<dt>experiment</dt><dd>microbatch-sweep \u00b7 file e.yaml</dd>",
        "<dt>results</dt><dd><code>r.csv</code></dd>",
        "<dt>simulated with</dt><dd>ppsim 0.1.0</dd>",
        "<dt>command</dt><dd><code>ppsim sweep e.yaml -o r.csv</code></dd>"}) {
    EXPECT_NE(html.find(fact), std::string::npos) << fact;
  }
  // Without the facts, the header says so rather than leaving them out.
  const std::string bare = Render(Header("pp") + OkRow(0, "4", "0.1"));
  EXPECT_NE(bare.find("<dt>model</dt><dd class=\"unknown\">not recorded</dd>"), std::string::npos);
  EXPECT_NE(bare.find("<dt>command</dt><dd class=\"unknown\">not recorded</dd>"),
            std::string::npos);
}

TEST(HtmlReport, MicrobatchesSixteenToOneTwentyEightAreOnABaseTwoLogAxis) {
  const std::string csv = Header("microbatches") + OkRow(0, "16", "0.1") + OkRow(1, "32", "0.2") +
                          OkRow(2, "64", "0.3") + OkRow(3, "128", "0.4");
  const std::string svg = Charts(Render(csv))[0];
  EXPECT_NE(svg.find("<g class=\"x-axis\" data-scale=\"log2\">"), std::string::npos);
  for (const char* tick : {">16</text>", ">32</text>", ">64</text>", ">128</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  // Each doubling is a third of the 480 px plot: markers 160 px apart.
  const std::vector<double> xs = PolylineXs(svg);
  ASSERT_EQ(xs.size(), 4u);
  for (size_t i = 1; i < xs.size(); ++i) EXPECT_NEAR(xs[i] - xs[i - 1], 160, 0.051) << i;
}

TEST(HtmlReport, EqualSeriesStayVisible) {
  // 1F1B and GPipe with equal values at every point.
  const std::string csv = Header("schedule,pp") + OkRow(0, "1F1B,4", "0.1") +
                          OkRow(1, "1F1B,8", "0.2") + OkRow(2, "GPipe,4", "0.1") +
                          OkRow(3, "GPipe,8", "0.2");
  for (const std::string& svg : Charts(Render(csv))) {
    EXPECT_EQ(SeriesPoints(svg, "schedule=1F1B"), SeriesPoints(svg, "schedule=GPipe"));
    const size_t first = svg.find("<polyline", svg.find("data-series=\"schedule=1F1B\""));
    const size_t second = svg.find("<polyline", svg.find("data-series=\"schedule=GPipe\""));
    // The line under (drawn first) is wider: 2 x 1.4 px against 2 px; the one over is dashed.
    EXPECT_EQ(Attribute(svg, first, "stroke-width"), "2.8");
    EXPECT_EQ(Attribute(svg, second, "stroke-width"), "2.0");
    EXPECT_EQ(svg.substr(first, svg.find("/>", first) - first).find("stroke-dasharray"),
              std::string::npos);
    EXPECT_EQ(Attribute(svg, second, "stroke-dasharray"), "7 3");
    // Circles under squares; each line ends in its label, one line apart.
    EXPECT_EQ(svg.substr(svg.rfind('<', svg.find("class=\"marker\"", first)), 7), "<circle");
    EXPECT_EQ(svg.substr(svg.rfind('<', svg.find("class=\"marker\"", second)), 7), "<rect c");
    const size_t a = svg.find(">1F1B</text>");
    const size_t b = svg.find(">GPipe</text>");
    ASSERT_NE(a, std::string::npos);
    ASSERT_NE(b, std::string::npos);
    const double ya = std::stod(Attribute(svg, svg.rfind("<text", a), "y"));
    const double yb = std::stod(Attribute(svg, svg.rfind("<text", b), "y"));
    EXPECT_GE(std::fabs(ya - yb), 14);
  }
}

TEST(HtmlReport, OomPointsFarAboveTheOthersAreDrawnInABandWithTheirValue) {
  // 40 and 60 GiB fit 80 GiB GPUs; 472 GiB does not and is more than twice 80 GiB.
  auto row = [](int point, const std::string& pp, const std::string& peak, const std::string& oom) {
    return Row(point, pp,
               {{kPeakMemoryColumn, peak}, {kCapacityColumn, "85899345920"}, {kOomColumn, oom}});
  };
  const std::string csv = Header("pp") + row(0, "2", "42949672960", "false") +
                          row(1, "3", "64424509440", "false") +
                          row(2, "5", "506806140928", "true");
  const std::string memory = ChartOf(Render(csv), "peak_memory_bytes");
  EXPECT_EQ(Count(memory, "class=\"oom-band\""), 1);
  EXPECT_NE(memory.find(">472 GiB</text>"), std::string::npos);
  // The scale stops at the capacity: 0 to 80 GiB in steps of 20 (9 ticks of 10 are too many).
  EXPECT_NE(memory.find("class=\"y-tick\">80</text>"), std::string::npos);
  EXPECT_EQ(memory.find("class=\"y-tick\">100</text>"), std::string::npos);
  EXPECT_EQ(memory.find("class=\"y-tick\">500</text>"), std::string::npos);
  // The banded point is still marked OOM, in the band: 14 px above the plot's top.
  const size_t plot = memory.find("fill=\"none\" stroke=\"#888\"");
  const double top = std::stod(Attribute(memory, memory.rfind("<rect", plot), "y"));
  const std::vector<std::pair<double, double>> points = SeriesPoints(memory, "");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_NEAR(points[2].second, top - 14, 0.051);
}

TEST(HtmlReport, WideRatesAreOnALogAxis) {
  // 10 and 1000 samples/s: 100x, a base-10 log axis from 0.01 to 1 K samples/s.
  const std::string csv = Header("pp") + Row(0, "4", {{kSamplesColumn, "10"}}) +
                          Row(1, "8", {{kSamplesColumn, "1000"}});
  const std::string svg = Charts(Render(csv))[0];
  EXPECT_NE(svg.find("data-y-scale=\"log10\""), std::string::npos);
  EXPECT_NE(svg.find(">throughput (K samples/s), log scale</text>"), std::string::npos);
  const std::vector<std::pair<double, double>> points = SeriesPoints(svg, "");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NEAR(points[0].second - points[1].second, 300, 0.051);  // the whole plot's height
}

TEST(HtmlReport, EveryBubbleMetricIsDefinedWhereItIsShown) {
  const std::string html = Render(Header("pp") + OkRow(0, "4", "0.1") + OkRow(1, "8", "0.2"));
  const std::string bubble = ChartOf(html, "bubble_over_makespan");
  const std::string definition =
      "bubble_over_makespan = 1 \u2212 \u03a3busy / (ranks \u00b7 makespan): the share of the "
      "GPUs&#39; time idle, 0 to 100%";
  EXPECT_NE(bubble.find("<title>" + definition + "</title>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"definition\">" + definition + "</span></figcaption>"),
            std::string::npos);
  EXPECT_NE(html.find("<dt>bubble_over_ideal</dt><dd>(ranks \u00b7 makespan \u2212 \u03a3busy) / "
                      "\u03a3busy: idle time over busy time"),
            std::string::npos);
  EXPECT_NE(html.find("<dt>stage_bubble_rate</dt><dd>(S \u2212 busy of that rank) / S"),
            std::string::npos);
  for (const char* column : {"bubble_over_makespan", "bubble_over_ideal", "stage_bubble_rate"}) {
    const size_t th = html.find(std::string("<th title=\"sort by ") + column + "\"><abbr title=\"");
    EXPECT_NE(th, std::string::npos) << column;
  }
}

TEST(HtmlReport, BaselineGivesASpeedUpChart) {
  // 200 samples/s at point 0, 400 and 100 at points 1 and 2: 1x, 2x and 0.5x.
  const std::string csv = Header("pp") + Row(0, "4", {}) +
                          Row(1, "8", {{kSamplesColumn, "400"}}) +
                          Row(2, "16", {{kSamplesColumn, "100"}});
  ReportOptions options;
  options.baseline = "0";
  const std::string html = RenderWith(csv, options);
  const std::string speedup = ChartOf(html, "speedup_vs_baseline");
  ASSERT_FALSE(speedup.empty());
  EXPECT_NE(speedup.find("point 1 (pp=8): 2.000\u00d7"), std::string::npos);
  EXPECT_NE(speedup.find("point 2 (pp=16): 0.500\u00d7"), std::string::npos);
  EXPECT_NE(html.find("<dt>baseline</dt><dd>point 0 (pp=4)</dd>"), std::string::npos);
  // It follows the throughput chart.
  EXPECT_LT(html.find("data-metric=\"samples_per_s\""),
            html.find("data-metric=\"speedup_vs_baseline\""));
}

TEST(HtmlReport, BaselineMustNameAnOkPoint) {
  const std::string csv = Header("pp") + OkRow(0, "4", "0.1") + FailedRow(1, "8", "deadlock");
  ReportOptions options;
  options.baseline_where = "--baseline";
  std::string html;
  options.baseline = "9";
  EXPECT_EQ(RenderHtmlReport(csv, "r.csv", options, &html).message(),
            "--baseline: no point '9'; valid: a point of the file (0-1) or a value of its first "
            "axis");
  options.baseline = "1";
  EXPECT_EQ(RenderHtmlReport(csv, "r.csv", options, &html).message(),
            "--baseline: point 1 is failed; the baseline must be an ok point");
}

TEST(HtmlReport, BarsSpreadAcrossTheChart) {
  // Two schedules of a run's CSV: two groups, each a 180 px slot of the 360 px plot, its bar
  // centred in it and 36 px wide.
  const std::string csv = TwoSchedulesRunCsv();
  const std::string svg = Charts(Render(csv))[0];
  const size_t first = svg.find("<rect class=\"bar\"");
  const size_t second = svg.find("<rect class=\"bar\"", first + 1);
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(Attribute(svg, first, "width"), "36.0");
  EXPECT_NEAR(std::stod(Attribute(svg, second, "x")) - std::stod(Attribute(svg, first, "x")), 180,
              0.051);
  const size_t plot = svg.find("fill=\"none\" stroke=\"#888\"");
  const size_t frame = svg.rfind("<rect", plot);
  EXPECT_EQ(Attribute(svg, frame, "width"), "360.0");
  EXPECT_NEAR(std::stod(Attribute(svg, first, "x")) - std::stod(Attribute(svg, frame, "x")),
              90 - 18, 0.051);
}

TEST(HtmlReportCommand, WritesTheReportAndSaysSo) {
  const std::string input = TempPath("report_ok.csv");
  const std::string output = TempPath("report_ok.html");
  std::remove(output.c_str());
  std::ofstream(input) << Header("pp") + OkRow(0, "4", "0.1") + OkRow(1, "8", "0.2");
  const CliResult r = Report({input, "-o", output});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "wrote " + output + " (2 points, 3 charts)\n");
  std::ifstream file(output);
  const std::string html((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::string expected;
  ASSERT_TRUE(
      RenderHtmlReport(Header("pp") + OkRow(0, "4", "0.1") + OkRow(1, "8", "0.2"), input, &expected)
          .ok());
  EXPECT_EQ(html, expected);
  EXPECT_FALSE(Exists(output + ".tmp"));
}

TEST(HtmlReportCommand, ReportsWhatPpsimRunWritesAsCsv) {
  // 1F1B and GPipe, p = 4, m = 8, F = 1 ms, B = 2 ms on the ideal platform: both take
  // (m + p - 1)(F + B) = 33 ms.
  const CliResult run = Cli({"run", "--schedule", "1F1B,GPipe", "--pp", "4", "--microbatches", "8",
                             "--f", "1ms", "--b", "2ms", "--platform", "ideal", "--format", "csv"});
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string input = TempPath("run.csv");
  const std::string output = TempPath("run.html");
  std::ofstream(input) << run.out;
  const CliResult r = Report({input, "-o", output});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + output + " (2 points, 3 charts)\n");
  const std::string html = ReadFile(output);
  EXPECT_EQ(Count(html, "\">33 ms</td>"), 2);
  EXPECT_EQ(Count(ChartOf(html, "samples_per_s"), "<rect class=\"bar\""), 2);
}

TEST(HtmlReportCommand, TakesLongOutputOption) {
  const std::string input = TempPath("report_long.csv");
  const std::string output = TempPath("report_long.html");
  std::ofstream(input) << Header("pp");
  const CliResult r = Report({"--output=" + output, input});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + output + " (0 points, 0 charts)\n");
}

TEST(HtmlReportCommand, UnreadableInputExitsTwo) {
  const std::string input = TempPath("no_such_results.csv");
  const CliResult r = Report({input, "-o", TempPath("never.html")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, input + ": cannot read: No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(HtmlReportCommand, ReadsTheAboutFileAndJsonLinesBesideTheCsv) {
  const std::string input = TempPath("report_about.csv");
  const std::string output = TempPath("report_about.html");
  std::ofstream(input) << Header("pp") + OkRow(0, "4", "0.1");
  std::ofstream(TempPath("report_about.about.json"))
      << "{\"ppsim_version\": \"9.9\", \"command\": \"ppsim sweep e.yaml\", \"experiment\": "
         "\"study\", \"experiment_file\": \"e.yaml\"}\n";
  std::ofstream(TempPath("report_about.jsonl"))
      << "{\"point\":0,\"values\":{\"pp\":\"4\"},\"status\":\"ok\",\"error\":\"\",\"wall_s\":0.5,"
         "\"result\":{\"pp\":4,\"platform\":\"h100-node\",\"gpus\":4,\"tp\":1,\"dp\":1,"
         "\"model\":\"llama3-8b\"}}\n";
  const CliResult r = Report({input, "-o", output});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream file(output);
  const std::string html((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const char* fact : {"<h1>ppsim sweep report: study</h1>", "<dd>llama3-8b</dd>",
                           "<dd>h100-node, 4 GPUs</dd>", "<dd>pp 4 \u00b7 tp 1 \u00b7 dp 1</dd>",
                           "<dd>ppsim 9.9</dd>", "<dd><code>ppsim sweep e.yaml</code></dd>",
                           "<dd>study \u00b7 file e.yaml</dd>"}) {
    EXPECT_NE(html.find(fact), std::string::npos) << fact;
  }
}

TEST(HtmlReportCommand, MalformedAboutFileExitsTwo) {
  const std::string input = TempPath("report_bad_about.csv");
  const std::string output = TempPath("report_bad_about.html");
  std::remove(output.c_str());
  std::ofstream(input) << Header("pp") + OkRow(0, "4", "0.1");
  std::ofstream(TempPath("report_bad_about.about.json")) << "{\"command\": 3}\n";
  const CliResult r = Report({input, "-o", output});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, TempPath("report_bad_about.about.json") +
                       ": not a JSON object of strings; an about file is {\"ppsim_version\": ..., "
                       "\"command\": ..., \"experiment\": ..., \"experiment_file\": ...}\n");
  EXPECT_FALSE(Exists(output));
}

TEST(HtmlReportCommand, UnknownBaselineExitsTwo) {
  const std::string input = TempPath("report_baseline.csv");
  std::ofstream(input) << Header("pp") + OkRow(0, "4", "0.1") + OkRow(1, "8", "0.2");
  const CliResult r = Report({input, "-o", TempPath("report_baseline.html"), "--baseline", "7"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "--baseline: no point '7'; valid: a point of the file (0-1) or a value of its first "
            "axis\n");
}

TEST(HtmlReportCommand, BadCsvExitsTwoAndWritesNothing) {
  const std::string input = TempPath("report_bad.csv");
  const std::string output = TempPath("report_bad.html");
  std::remove(output.c_str());
  std::ofstream(input) << "point,pp\n";
  const CliResult r = Report({input, "-o", output});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, input + ":1: missing column 'makespan_s'; " + kValid + "\n");
  EXPECT_FALSE(Exists(output));
  EXPECT_FALSE(Exists(output + ".tmp"));
}

TEST(HtmlReportCommand, UnwritableOutputExitsTwo) {
  const std::string input = TempPath("report_unwritable.csv");
  const std::string output = TempPath("no_such_dir/report.html");
  std::ofstream(input) << Header("pp");
  const CliResult r = Report({input, "-o", output});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, output + ": cannot write: No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(HtmlReportCommand, MissingOutputIsAUsageError) {
  const CliResult r = Report({"results.csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "ppsim report: missing -o REPORT.html; usage: ppsim report RESULTS.csv -o "
            "REPORT.html [--baseline POINT]\n");
}

TEST(HtmlReportCommand, UnknownOptionIsAUsageError) {
  const CliResult r = Report({"results.csv", "-o", "r.html", "--format", "pdf"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "--format: unknown option; see 'ppsim report --help' for the valid options\n");
}

TEST(HtmlReportCommand, HelpPrintsUsage) {
  const CliResult r = Report({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("usage: ppsim report RESULTS.csv -o REPORT.html [--baseline POINT]\n", 0),
            0u);
}

}  // namespace
}  // namespace ppsim
