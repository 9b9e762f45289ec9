// The scales of the report's charts: where a value goes on an axis and which ticks it gets.
//
// An axis is linear, with ticks at multiples of a 1, 2 or 5 x 10^k step, or logarithmic when its
// values span a wide range: base 2 (a tick at each power of two) when every value is a power of
// two (microbatches 16 to 128), else base 10 with ticks at 1, 2 and 5 x 10^k. Values are in
// display units (report/chart_plan.h); a scale maps them to a fraction of the axis's length.
#ifndef PPSIM_REPORT_CHART_SCALE_H_
#define PPSIM_REPORT_CHART_SCALE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ppsim {

enum class ScaleKind { kLinear, kLog2, kLog10 };

struct ChartScale {
  ScaleKind kind = ScaleKind::kLinear;
  double lo = 0;  // the axis's ends: the first and last ticks
  double hi = 1;
  std::vector<double> ticks;  // increasing, ticks.front() == lo, ticks.back() == hi
  std::vector<std::string> labels;  // per tick

  bool log() const { return kind != ScaleKind::kLinear; }
  // Where `value` is between lo (0) and hi (1): linear, or linear in log(value) on a log scale.
  // REQUIRES: value > 0 on a log scale.
  double Fraction(double value) const;
};

// Ticks at multiples of the smallest 1, 2 or 5 x 10^k step of at least `min_step` giving at
// most `max_ticks` (>= 3) ticks that cover [lo, hi]; an empty range is widened (by 10% of |lo|,
// or to [0, 1] at 0).
ChartScale LinearScale(double lo, double hi, int max_ticks, double min_step = 0);

// A tick at each power of two from the largest at or below lo to the smallest at or above hi.
// REQUIRES: 0 < lo <= hi.
ChartScale Log2Scale(double lo, double hi);

// Ticks at 1, 2 and 5 x 10^k from the largest at or below lo to the smallest at or above hi
// (labels in plain decimals: "0.5", "20", "5000"). REQUIRES: 0 < lo <= hi.
ChartScale Log10Scale(double lo, double hi);

// Whether values in [lo, hi] are drawn on a log scale: all positive and hi > 10 lo; or, when
// `powers_of_two_allowed`, all whole powers of two spanning at least 4x (three of them).
// Returns kLinear otherwise. `values` are all the values; lo and hi their extremes.
ScaleKind ChooseScaleKind(const std::vector<double>& values, bool powers_of_two_allowed);

// True when `value` is a whole power of two (1, 2, 4, ...).
bool IsPowerOfTwo(double value);

}  // namespace ppsim

#endif  // PPSIM_REPORT_CHART_SCALE_H_
