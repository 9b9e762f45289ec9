#include "report/chart_scale.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/svg.h"

namespace ppsim {

double ChartScale::Fraction(double value) const {
  if (hi == lo) return 0;
  if (!log()) return (value - lo) / (hi - lo);
  return (std::log(value) - std::log(lo)) / (std::log(hi) - std::log(lo));
}

namespace {

// The scale spans its ticks, first to last.
ChartScale SpanTicks(ChartScale scale) {
  scale.lo = scale.ticks.front();
  scale.hi = scale.ticks.back();
  return scale;
}

}  // namespace

ChartScale LinearScale(double lo, double hi, int max_ticks, double min_step) {
  if (!(hi > lo)) {
    if (lo == 0) {
      hi = 1;
    } else {
      const double pad = std::fabs(lo) * 0.1;
      lo -= pad;
      hi += pad;
    }
  }
  int64_t first = 0;
  int count = 2;
  double step = 1;
  int decimals = 0;
  NiceStep(static_cast<int>(std::floor(std::log10((hi - lo) / (max_ticks - 1)))) - 1,
           [&](double s, int exponent) {
             if (s < min_step) return false;
             step = s;
             first = static_cast<int64_t>(std::floor(lo / s + 1e-9));
             const int64_t last = static_cast<int64_t>(std::ceil(hi / s - 1e-9));
             count = static_cast<int>(last - first + 1);
             decimals = std::max(0, -exponent);
             return count <= max_ticks;
           });
  ChartScale scale;
  for (int i = 0; i < count; ++i) {
    const double at = static_cast<double>(first + i) * step;
    scale.ticks.push_back(at);
    scale.labels.push_back(FormatFixed(at, decimals));
  }
  return SpanTicks(std::move(scale));
}

ChartScale Log2Scale(double lo, double hi) {
  ChartScale scale;
  scale.kind = ScaleKind::kLog2;
  const int first = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
  const int last = std::max(first + 1, static_cast<int>(std::ceil(std::log2(hi) - 1e-9)));
  for (int e = first; e <= last; ++e) {
    const double at = std::ldexp(1.0, e);
    scale.ticks.push_back(at);
    scale.labels.push_back(FormatFixed(at, std::max(0, -e)));
  }
  return SpanTicks(std::move(scale));
}

ChartScale Log10Scale(double lo, double hi) {
  ChartScale scale;
  scale.kind = ScaleKind::kLog10;
  static constexpr double kMantissas[] = {1, 2, 5};
  int exponent = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  // The largest 1-2-5 value at or below lo, then each next one up to the first at or above hi.
  int m = 2;
  while (m > 0 && kMantissas[m] * std::pow(10.0, exponent) > lo * (1 + 1e-9)) --m;
  while (true) {
    const double at = kMantissas[m] * std::pow(10.0, exponent);
    scale.ticks.push_back(at);
    scale.labels.push_back(FormatFixed(at, std::max(0, -exponent)));
    if (at >= hi * (1 - 1e-9) && scale.ticks.size() >= 2) break;
    if (++m == 3) {
      m = 0;
      ++exponent;
    }
  }
  return SpanTicks(std::move(scale));
}

bool IsPowerOfTwo(double value) {
  if (!(value >= 1) || value != std::floor(value)) return false;
  int exponent = 0;
  return std::frexp(value, &exponent) == 0.5;
}

ScaleKind ChooseScaleKind(const std::vector<double>& values, bool powers_of_two_allowed) {
  if (values.empty()) return ScaleKind::kLinear;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (!(*lo > 0)) return ScaleKind::kLinear;
  const bool powers = powers_of_two_allowed &&
                      std::all_of(values.begin(), values.end(), IsPowerOfTwo);
  if (powers && *hi >= 4 * *lo) return ScaleKind::kLog2;
  if (*hi > 10 * *lo) return powers ? ScaleKind::kLog2 : ScaleKind::kLog10;
  return ScaleKind::kLinear;
}

}  // namespace ppsim
