// The report's SVG charts: one chart of one metric over the planned points (experiments/
// chart_plan.h), as a line chart or a grouped bar chart. Axes are linear, with ticks at 1, 2 or 5 x
// 10^k steps (whole steps when every x is whole), at most 8; a series has the same colour in every
// chart (base/svg.h's palette, then other marker shapes).
#ifndef PPSIM_EXPERIMENTS_SVG_CHART_H_
#define PPSIM_EXPERIMENTS_SVG_CHART_H_

#include <string>
#include <vector>

#include "experiments/chart_plan.h"
#include "experiments/report_axes.h"
#include "experiments/results.h"

namespace ppsim {

struct ChartMetric {
  int metric;
  const char* title;
  const char* quantity;  // y axis title before the unit
};

// The charts a report draws.
inline constexpr ChartMetric kCharts[] = {
    {kMakespanColumn, "Makespan (makespan_s)", "makespan"},
    {kBubbleColumn, "Bubble over makespan (bubble_over_makespan)", "bubble / makespan"},
    {kPeakMemoryColumn, "Peak memory (peak_memory_bytes)", "peak memory"},
};

std::string LineChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                      const ChartMetric& chart);
std::string BarChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                     const ChartMetric& chart);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_SVG_CHART_H_
