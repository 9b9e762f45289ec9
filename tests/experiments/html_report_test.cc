// The HTML report of a sweep's results CSV: parsing errors verbatim, the charts chosen from the
// axes, escaping, self-containment and determinism; and `ppsim report`.
#include "experiments/html_report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/cli.h"
#include "tests/support/cli.h"

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

// An ok row: `axes` is the comma-joined axis values.
std::string OkRow(int point, const std::string& axes, const std::string& makespan_s,
                  const std::string& bubble = "0.25",
                  const std::string& peak_bytes = "1073741824") {
  return std::to_string(point) + "," + (axes.empty() ? "" : axes + ",") + makespan_s + "," +
         bubble + ",0.5,0.1,100,200,,,," + peak_bytes + ",536870912,0,false,,,,ok,,0.5\n";
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
  EXPECT_NE(html.find("<th title=\"sort by wall_s\">wall_s</th>"), std::string::npos);
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

TEST(HtmlReport, FirstColumnMustBePoint) {
  EXPECT_EQ(RenderError("index,pp," + std::string(kMetricHeader) + "\n"),
            std::string("r.csv:1: first column is 'index', expected 'point'; ") + kValid);
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
  const std::vector<std::string> metrics = {"makespan_s", "bubble_over_makespan",
                                            "peak_memory_bytes"};
  for (size_t c = 0; c < charts.size(); ++c) {
    EXPECT_EQ(Attribute(charts[c], 0, "data-metric"), metrics[c]);
    EXPECT_EQ(Count(charts[c], "<polyline"), 3);
    const std::map<std::string, int> expected = {
        {"schedule=1F1B", 4}, {"schedule=GPipe", 4}, {"schedule=ZB-H1", 4}};
    EXPECT_EQ(PolylinePoints(charts[c]), expected);
    EXPECT_EQ(Count(charts[c], "class=\"legend-entry\""), 3);
    EXPECT_NE(charts[c].find(">microbatches</text>"), std::string::npos);
  }
  EXPECT_NE(charts[0].find(">makespan (ms)</text>"), std::string::npos);
  EXPECT_NE(charts[1].find(">bubble / makespan (%)</text>"), std::string::npos);
  EXPECT_NE(charts[2].find(">peak memory (GiB)</text>"), std::string::npos);
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

TEST(HtmlReport, NumericAxisThatOnlyMovesWithTheScheduleGivesBars) {
  // stages_per_rank is 1 for 1F1B and 2 for Interleaved1F1B: a line would join nothing.
  const std::string csv = Header("schedule,stages_per_rank") + OkRow(0, "1F1B,1", "0.1") +
                          OkRow(1, "Interleaved1F1B,2", "0.2") + OkRow(2, "ZB-H1,1", "0.3");
  const std::vector<std::string> charts = Charts(Render(csv));
  ASSERT_EQ(charts.size(), 3u);
  EXPECT_EQ(Count(charts[0], "<rect class=\"bar\""), 3);
  EXPECT_EQ(Count(charts[0], "<polyline"), 0);
  EXPECT_EQ(Count(charts[0], "data-series=\"stages_per_rank=1\""), 2);
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
  const std::string svg = Charts(Render(csv))[1];
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

CliResult Report(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"report"};
  all.insert(all.end(), args.begin(), args.end());
  return Cli(all);
}

std::string TempPath(const std::string& name) { return ::testing::TempDir() + name; }

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
            "REPORT.html\n");
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
  EXPECT_EQ(r.out.rfind("usage: ppsim report RESULTS.csv -o REPORT.html\n", 0), 0u);
}

}  // namespace
}  // namespace ppsim
