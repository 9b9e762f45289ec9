// What the report's charts show: which metrics (one chart per question), which axis is x (or that
// they are bar charts), which axes make the series, and which rows are plotted in which order.
#ifndef PPSIM_REPORT_CHART_PLAN_H_
#define PPSIM_REPORT_CHART_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/report_axes.h"
#include "batch/results.h"

namespace ppsim {

struct PlotPoint {
  size_t row;
  int series;
  int group;  // bar charts
  double x;   // line charts, in display units
};

// Series s is drawn in palette colour s (base/svg.h) in every chart of a report: the series are
// numbered once, here, in the order of their axis values.
struct Plan {
  bool bars = false;
  int x_axis = -1;
  int group_axis = -1;
  std::vector<int> series_axes;
  // "schedule=1F1B / stages_per_rank=1, pp=4"; "" when there is one series and nothing varies
  std::vector<std::string> series_labels;
  // The series' axis values only, for the labels at the lines' ends: "1F1B / 1, 4".
  std::vector<std::string> series_values;
  std::vector<std::string> group_labels;
  std::vector<PlotPoint> points;  // lines: by series, then x; bars: by group, then series
  int64_t not_plotted[kPointStatusCount] = {};  // by status
  int64_t missing_x = 0;  // ok rows without a value on the x axis
};

// The x axis is the first numeric axis that varies; every combination of the other varying axes is
// a series, drawn as a line in increasing x. With no such axis, or when no series would have ok
// points at two x values, the charts are grouped bar charts: one bar per ok point, grouped by the
// first varying axis and coloured by the combination of the others.
Plan MakePlan(const ResultsTable& results, const std::vector<Axis>& axes);

// "point 3 (schedule=1F1B, microbatches=16)": the point and its varying axes.
std::string PointName(const ResultsTable& results, const std::vector<Axis>& axes,
                      const ResultRow& row);

// How a chart's values are shown.
enum class ChartUnit {
  kRate,      // per second, with a 1000-power prefix: "throughput (M tokens/s)"
  kFraction,  // as a percentage: "MFU (%)"
  kBytes,     // with a 1024-power unit: "peak memory (GiB)"
  kRatio,     // a point's value over the baseline's: "speed-up (x)"
};

// One chart: a metric column over the plan's points (those with a value in it).
struct ChartSpec {
  int column;                 // a ResultColumn (batch/results.h)
  std::string metric;         // its name (data-metric): the column's, or "speedup_vs_baseline"
  std::string title;          // "Throughput (tokens_per_s)"
  std::string question;       // the caption: what the chart answers, what is better
  std::string quantity;       // the y axis title before its unit: "throughput", "MFU"
  std::string rate_unit;      // kRate: "tokens/s"
  ChartUnit unit;
  bool capacity_lines = false;  // draw each distinct memory_capacity_bytes > 0 as a line
  // How the metric is computed, shown under the title and as its tooltip; "" for none.
  std::string definition;
  double baseline = 0;  // kRatio: the baseline point's value of `column` (> 0)
};

// The definitions of the three bubble metrics (README "What the numbers mean"), by ResultColumn:
// kBubbleColumn, kBubbleOverIdealColumn and kStageBubbleColumn; "" for any other column.
std::string_view MetricDefinition(int column);

// The charts of a report, one per question, in this order: throughput (tokens_per_s when some
// plotted point has a value there, else samples_per_s); MFU, when some plotted point has one; peak
// memory with the GPU's capacity; the bubble as bubble_over_makespan (the share of the GPUs' time
// idle, 0 to 100%: the cost of the bubble directly, unlike bubble_over_ideal, which grows without
// bound). None when nothing is plotted. Every chart marks the plotted points that run out of
// memory.
//
// With `baseline` (a row of `results`, ok, with a throughput), after the throughput chart one of
// the "Speed-up vs baseline": each point's throughput over the baseline's (the same column as the throughput
// chart).
std::vector<ChartSpec> ChooseCharts(const ResultsTable& results, const Plan& plan,
                                    const ResultRow* baseline = nullptr);

}  // namespace ppsim

#endif  // PPSIM_REPORT_CHART_PLAN_H_
