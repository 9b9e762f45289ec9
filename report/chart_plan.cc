#include "report/chart_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

namespace ppsim {
namespace {

// Whether a line over `x_axis` would join anything: some combination of the other varying axes has
// ok points at two x values. When none does (the numeric axis only moves together with the others,
// as stages_per_rank with schedule), bars show the points better.
bool SomeLineHasTwoPoints(const ResultsTable& results, const std::vector<Axis>& axes,
                          const std::vector<int>& varying, int x_axis) {
  std::map<std::vector<double>, double> x_of_series;
  bool any_ok = false;
  for (size_t r = 0; r < results.rows.size(); ++r) {
    const double x = axes[x_axis].key[r];
    if (results.rows[r].status != PointStatus::kOk || !std::isfinite(x)) continue;
    any_ok = true;
    std::vector<double> key;
    for (int a : varying) {
      if (a != x_axis) key.push_back(axes[a].key[r]);
    }
    const auto [it, inserted] = x_of_series.emplace(key, x);
    if (!inserted && it->second != x) return true;
  }
  return !any_ok;
}

}  // namespace

Plan MakePlan(const ResultsTable& results, const std::vector<Axis>& axes) {
  Plan plan;
  std::vector<int> varying;
  for (int a = 0; a < static_cast<int>(axes.size()); ++a) {
    if (axes[a].varies) varying.push_back(a);
  }
  for (int a : varying) {
    if (IsNumeric(axes[a]) && axes[a].finite_values > 1) {
      plan.x_axis = a;
      break;
    }
  }
  if (plan.x_axis >= 0 && !SomeLineHasTwoPoints(results, axes, varying, plan.x_axis)) {
    plan.x_axis = -1;
  }
  plan.bars = plan.x_axis < 0;
  if (plan.bars && !varying.empty()) plan.group_axis = varying[0];
  for (int a : varying) {
    if (a != plan.x_axis && a != plan.group_axis) plan.series_axes.push_back(a);
  }

  std::vector<size_t> plotted;
  for (size_t r = 0; r < results.rows.size(); ++r) {
    const ResultRow& row = results.rows[r];
    if (row.status != PointStatus::kOk) {
      ++plan.not_plotted[static_cast<int>(row.status)];
    } else if (!plan.bars && !std::isfinite(axes[plan.x_axis].key[r])) {
      ++plan.missing_x;
    } else {
      plotted.push_back(r);
    }
  }
  auto series_key = [&](size_t r) {
    std::vector<double> key;
    for (int a : plan.series_axes) key.push_back(axes[a].key[r]);
    return key;
  };
  auto group_key = [&](size_t r) {
    return plan.group_axis >= 0 ? axes[plan.group_axis].key[r]
                                : static_cast<double>(results.rows[r].point);
  };
  std::map<std::vector<double>, int> series;
  std::map<double, int> groups;
  std::map<std::vector<double>, size_t> series_first_row;
  std::map<double, size_t> group_first_row;
  for (size_t r : plotted) {
    series.emplace(series_key(r), 0);
    series_first_row.emplace(series_key(r), r);
    groups.emplace(group_key(r), 0);
    group_first_row.emplace(group_key(r), r);
  }
  for (auto& [key, index] : series) {
    index = static_cast<int>(plan.series_labels.size());
    const size_t r = series_first_row[key];
    std::string label;
    std::string values;
    for (int a : plan.series_axes) {
      label += (label.empty() ? "" : ", ") + AxisAssignment(results, axes[a], results.rows[r]);
      values += (values.empty() ? "" : ", ") + AxisValue(results, axes[a], results.rows[r]);
    }
    plan.series_labels.push_back(label);
    plan.series_values.push_back(values);
  }
  for (auto& [key, index] : groups) {
    index = static_cast<int>(plan.group_labels.size());
    const ResultRow& row = results.rows[group_first_row[key]];
    std::string label = plan.group_axis >= 0 ? AxisValue(results, axes[plan.group_axis], row)
                                             : "point " + std::to_string(row.point);
    plan.group_labels.push_back(label.empty() ? "(empty)" : label);
  }
  for (size_t r : plotted) {
    PlotPoint p{r, series[series_key(r)], groups[group_key(r)], 0};
    if (!plan.bars) p.x = axes[plan.x_axis].key[r] / axes[plan.x_axis].scale;
    plan.points.push_back(p);
  }
  std::stable_sort(plan.points.begin(), plan.points.end(),
                   [&](const PlotPoint& a, const PlotPoint& b) {
                     if (plan.bars) {
                       return std::pair(a.group, a.series) < std::pair(b.group, b.series);
                     }
                     return std::pair(a.series, a.x) < std::pair(b.series, b.x);
                   });
  return plan;
}

// "point 3 (schedule=1F1B, microbatches=16)"
std::string PointName(const ResultsTable& results, const std::vector<Axis>& axes,
                      const ResultRow& row) {
  std::string values;
  for (int a = 0; a < static_cast<int>(axes.size()); ++a) {
    if (!axes[a].varies) continue;
    values += (values.empty() ? "" : ", ") + AxisAssignment(results, axes[a], row);
  }
  return "point " + std::to_string(row.point) + (values.empty() ? "" : " (" + values + ")");
}

std::string_view MetricDefinition(int column) {
  switch (column) {
    case kBubbleColumn:
      return "bubble_over_makespan = 1 \u2212 \u03a3busy / (ranks \u00b7 makespan): the share of "
             "the GPUs' time idle, 0 to 100%";
    case kBubbleOverIdealColumn:
      return "bubble_over_ideal = (ranks \u00b7 makespan \u2212 \u03a3busy) / \u03a3busy: idle "
             "time over busy time, Megatron's (p\u22121)/m for 1F1B; grows without bound";
    case kStageBubbleColumn:
      return "stage_bubble_rate = (S \u2212 busy of that rank) / S, S the largest span (first "
             "compute start to last compute end of a rank): the zero-bubble paper's, per stage";
    default:
      return "";
  }
}

namespace {

ChartSpec ThroughputChart(bool tokens) {
  if (tokens) {
    return {kTokensColumn, "tokens_per_s", "Throughput (tokens_per_s)",
            "Tokens per second over all replicas: higher is better.", "throughput", "tokens/s",
            ChartUnit::kRate};
  }
  return {kSamplesColumn, "samples_per_s", "Throughput (samples_per_s)",
          "Samples (sequences) per second over all replicas: higher is better.", "throughput",
          "samples/s", ChartUnit::kRate};
}

}  // namespace

std::vector<ChartSpec> ChooseCharts(const ResultsTable& results, const Plan& plan,
                                    const ResultRow* baseline) {
  std::vector<ChartSpec> charts;
  if (plan.points.empty()) return charts;
  auto some_value = [&](int column) {
    for (const PlotPoint& p : plan.points) {
      if (results.rows[p.row].values[column]) return true;
    }
    return false;
  };
  const ChartSpec throughput = ThroughputChart(some_value(kTokensColumn));
  const std::optional<double> base =
      baseline == nullptr ? std::nullopt : baseline->values[throughput.column];
  charts.push_back(throughput);
  if (base && *base > 0) {
    ChartSpec speedup = throughput;
    speedup.metric = "speedup_vs_baseline";
    speedup.title = "Speed-up vs baseline (" + std::string(throughput.metric) + ")";
    speedup.question = "Each point's throughput over the baseline point's: above 1 is faster.";
    speedup.quantity = "speed-up";
    speedup.unit = ChartUnit::kRatio;
    speedup.baseline = *base;
    speedup.definition = "speed-up = " + throughput.metric + " of the point / " +
                         throughput.metric + " of the baseline point";
    charts.push_back(speedup);
  }
  if (some_value(kMfuColumn)) {
    charts.push_back({kMfuColumn, "mfu", "Model FLOPs utilization (mfu)",
                      "Model FLOPs per second over the GPUs' peak: higher is better.", "MFU", "",
                      ChartUnit::kFraction});
  }
  charts.push_back({kPeakMemoryColumn, "peak_memory_bytes", "Peak memory (peak_memory_bytes)",
                    "The fullest rank's peak memory against the GPU's capacity (dashed line): a "
                    "point above it runs out of memory.",
                    "peak memory", "", ChartUnit::kBytes, /*capacity_lines=*/true});
  charts.push_back({kBubbleColumn, "bubble_over_makespan", "Bubble (bubble_over_makespan)",
                    "The share of the GPUs' time idle: lower is better.", "bubble / makespan", "",
                    ChartUnit::kFraction, false, std::string(MetricDefinition(kBubbleColumn))});
  return charts;
}

}  // namespace ppsim
