// The swept axes of a results table as the report sees them: numeric (a number, bandwidth, size,
// duration or FLOP rate) or categorical, their distinct values, and the unit they are shown in.
#ifndef PPSIM_EXPERIMENTS_REPORT_AXES_H_
#define PPSIM_EXPERIMENTS_REPORT_AXES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiments/results.h"

namespace ppsim {

enum class AxisKind { kCategorical, kNumber, kBandwidth, kSize, kDuration, kFlopRate };

// "number", "bandwidth", ...
const char* KindName(AxisKind kind);

struct DisplayUnit {
  double scale;  // base units per display unit
  const char* name;
};
inline constexpr DisplayUnit kDurationUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
inline constexpr DisplayUnit kSizeUnits[] = {
    {1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}, {1, "B"}};
inline constexpr DisplayUnit kBandwidthUnits[] = {
    {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}};
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
  std::string name;
  AxisKind kind = AxisKind::kCategorical;
  // Per row: the value in base units (numeric; +inf when empty), or the index of the text in order
  // of first appearance (categorical). Equal keys are the same value.
  std::vector<double> key;
  std::map<double, std::string> text_of_key;  // the first text seen for each key
  int64_t finite_values = 0;                  // distinct non-empty values
  bool varies = false;
  double scale = 1;  // base units per display unit
  std::string unit;  // display unit; "" for plain numbers and categories
};

inline bool IsNumeric(const Axis& axis) { return axis.kind != AxisKind::kCategorical; }

// Every axis of `results`: an axis is numeric when each of its non-empty values parses with one
// and the same parser, tried in order (plain number, bandwidth, size, duration, FLOP rate), and
// all are finite; otherwise categorical. It varies when it has more than one distinct value.
std::vector<Axis> ClassifyAxes(const ResultsTable& results);

// "NIC bandwidth (set.nic.bandwidth, Gb/s)", "microbatches", "wall (s)".
std::string AxisTitle(const std::string& name, const std::string& unit);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_REPORT_AXES_H_
