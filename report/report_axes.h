// The swept axes of a results table as the report sees them: numeric (a number, bandwidth, size,
// duration or FLOP rate) or categorical, their distinct values, and the unit they are shown in.
// Columns that move together (an axis swept `with` another) are one axis.
#ifndef PPSIM_REPORT_REPORT_AXES_H_
#define PPSIM_REPORT_REPORT_AXES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "batch/results.h"

namespace ppsim {

enum class AxisKind { kCategorical, kNumber, kBandwidth, kSize, kDuration, kFlopRate };

// "categorical", "number", "bandwidth", ...
std::string_view KindName(AxisKind kind);

struct DisplayUnit {
  double scale;  // base units per display unit
  const char* name;
};
inline constexpr DisplayUnit kDurationUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
inline constexpr DisplayUnit kSizeUnits[] = {
    {1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}, {1, "B"}};
inline constexpr DisplayUnit kBandwidthUnits[] = {
    {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}};
// Counts as config/units.h HumanCount shows them.
inline constexpr DisplayUnit kCountUnits[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}, {1, ""}};
inline constexpr DisplayUnit kFlopRateUnits[] = {{1e18, "EFLOP/s"}, {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"},
                                   {1e9, "GFLOP/s"},  {1e6, "MFLOP/s"},  {1e3, "KFLOP/s"},
                                   {1, "FLOP/s"}};

// The largest unit not above `largest` (the smallest unit when all are).
template <size_t N>
DisplayUnit PickUnit(const DisplayUnit (&units)[N], double largest) {
  for (const DisplayUnit& u : units) {
    if (largest >= u.scale) return u;
  }
  return units[N - 1];
}

struct Axis {
  // The results table's axis columns this axis shows (0-based, after `point`), the one that
  // determines the others first; their names, and those joined: "schedule / stages_per_rank".
  std::vector<int> columns;
  std::vector<std::string> names;
  std::string name;
  AxisKind kind = AxisKind::kCategorical;
  // Per row: the first column's value in base units (numeric; +inf when empty), or the index of
  // its text in order of first appearance (categorical). Equal keys are the same value.
  std::vector<double> key;
  std::map<double, std::string> text_of_key;  // the first AxisValue seen for each key
  int64_t finite_values = 0;                  // distinct non-empty values
  bool varies = false;
  double scale = 1;  // base units per display unit
  std::string unit;  // display unit; "" for plain numbers and categories
};

inline bool IsNumeric(const Axis& axis) { return axis.kind != AxisKind::kCategorical; }

// Every axis of `results`, in the order of their first columns. A column is numeric when each of
// its non-empty values parses with one and the same parser, tried in order (plain number,
// bandwidth, size, duration, FLOP rate), and all are finite; otherwise categorical. It varies when
// it has more than one distinct value.
//
// A varying column whose value is determined by another varying column's over all the rows (equal
// values there, equal values here) joins that column's axis: the README's `schedule` swept `with`
// `stages_per_rank` is one axis "schedule / stages_per_rank", also when two schedules share a
// stages_per_rank. When two columns determine each other, the first leads. An axis of several
// columns is numeric when all of them are (keyed, shown and titled by the first), else categorical.
std::vector<Axis> ClassifyAxes(const ResultsTable& results);

// The axis's value in `row`: its columns' texts joined with " / " ("Interleaved1F1B / 2").
std::string AxisValue(const ResultsTable& results, const Axis& axis, const ResultRow& row);

// The axis's columns with their values in `row`: "schedule=1F1B / stages_per_rank=1".
std::string AxisAssignment(const ResultsTable& results, const Axis& axis, const ResultRow& row);

// The axis's title on a chart: "NIC bandwidth (set.nic.bandwidth, Gb/s)", "microbatches",
// "schedule / stages_per_rank".
std::string AxisTitle(const Axis& axis);

}  // namespace ppsim

#endif  // PPSIM_REPORT_REPORT_AXES_H_
