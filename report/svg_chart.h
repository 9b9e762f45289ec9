// The report's SVG charts: one chart of one metric (report/chart_plan.h ChartSpec) over the
// planned points that have a value in it, as a line chart or a grouped bar chart. Axes are linear,
// with ticks at 1, 2 or 5 x 10^k steps (whole steps when every x is whole), at most 8.
//
// Series s has palette colour s (base/svg.h) in every chart; past the palette's twelve colours
// they repeat with another marker shape and, on lines, a dash. A point that runs out of memory
// carries a red cross (class "oom"; a bar is also hatched red) and the legend an "OOM" entry. With
// capacity_lines each distinct GPU capacity (memory_capacity_bytes > 0) of the shown points is a
// dashed red line (class "capacity") labelled "GPU capacity 80 GiB", inside the y range.
//
// Hooks for tests and the browser check: <svg class="chart lines|bars" data-metric="COLUMN">,
// markers "marker", bars "bar", series groups and bars carry data-series, legend entries
// "legend-entry" (the OOM one also "oom-entry").
#ifndef PPSIM_REPORT_SVG_CHART_H_
#define PPSIM_REPORT_SVG_CHART_H_

#include <string>
#include <vector>

#include "report/chart_plan.h"
#include "report/report_axes.h"
#include "batch/results.h"

namespace ppsim {

// REQUIRES: !plan.bars (plan.x_axis is an axis of `axes`).
std::string LineChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                      const ChartSpec& chart);
// REQUIRES: plan.bars.
std::string BarChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                     const ChartSpec& chart);

}  // namespace ppsim

#endif  // PPSIM_REPORT_SVG_CHART_H_
