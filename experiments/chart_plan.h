// What the report's charts show: which axis is x (or that they are bar charts), which axes make
// the series, and which rows are plotted in which order.
#ifndef PPSIM_EXPERIMENTS_CHART_PLAN_H_
#define PPSIM_EXPERIMENTS_CHART_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/report_axes.h"
#include "experiments/results.h"

namespace ppsim {

struct PlotPoint {
  size_t row;
  int series;
  int group;  // bar charts
  double x;   // line charts, in display units
};

struct Plan {
  bool bars = false;
  int x_axis = -1;
  int group_axis = -1;
  std::vector<int> series_axes;
  std::vector<std::string> series_labels;  // "" when there is one series and nothing varies
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

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_CHART_PLAN_H_
