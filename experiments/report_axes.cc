#include "experiments/report_axes.h"

#include <cmath>
#include <limits>
#include <string_view>

#include "base/numbers.h"
#include "models/units.h"

namespace ppsim {
namespace {

constexpr AxisKind kNumericKinds[] = {AxisKind::kNumber, AxisKind::kBandwidth, AxisKind::kSize,
                                      AxisKind::kDuration, AxisKind::kFlopRate};

// In the parser's base unit (bytes/s, bytes, seconds, FLOP/s); false unless finite.
bool ParseAs(AxisKind kind, std::string_view text, double* value) {
  switch (kind) {
    case AxisKind::kCategorical:
      return false;
    case AxisKind::kNumber:
      return ParseFinite(text, value);
    case AxisKind::kBandwidth:
      if (!ParseBandwidth("", text, value).ok()) return false;
      break;
    case AxisKind::kSize: {
      int64_t bytes;
      if (!ParseSize("", text, &bytes).ok()) return false;
      *value = static_cast<double>(bytes);
      break;
    }
    case AxisKind::kDuration:
      if (!ParseDuration("", text, value).ok()) return false;
      break;
    case AxisKind::kFlopRate:
      if (!ParseFlopRate("", text, value).ok()) return false;
      break;
  }
  return std::isfinite(*value);
}



// The unit as the user wrote it after the number: "Gbps" of "400Gbps".
std::string_view UnitSuffix(std::string_view text) {
  const size_t last_digit = text.find_last_of("0123456789");
  return last_digit == std::string_view::npos ? text : text.substr(last_digit + 1);
}

// Shows the axis in the unit every value was written in, else the base unit with a prefix.
void ChooseDisplayUnit(const ResultsTable& results, int a, Axis* axis) {
  if (axis->kind == AxisKind::kNumber) {
    // Plain numbers of a million and more are shown in a power of 1000, so ticks stay short.
    double largest = 0;
    for (double key : axis->key) {
      if (std::isfinite(key)) largest = std::max(largest, std::fabs(key));
    }
    if (largest >= 1e6) {
      const int exponent = 3 * static_cast<int>(std::floor(std::log10(largest) / 3));
      axis->scale = std::pow(10.0, exponent);
      axis->unit = "\u00d71e" + std::to_string(exponent);
    }
    return;
  }
  std::string common;
  bool same = true;
  bool first = true;
  double largest = 0;
  for (size_t r = 0; r < results.rows.size(); ++r) {
    const std::string& text = results.AxisText(results.rows[r], a);
    if (text.empty()) continue;
    largest = std::max(largest, std::fabs(axis->key[r]));
    const std::string suffix(UnitSuffix(text));
    if (first) common = suffix;
    same = same && suffix == common;
    first = false;
  }
  double scale;
  if (same && !common.empty() && ParseAs(axis->kind, "1" + common, &scale) && scale > 0) {
    axis->scale = scale;
    axis->unit = common;
    // "Gbps" reads better on an axis as "Gb/s".
    if (axis->unit.size() >= 3 && axis->unit.compare(axis->unit.size() - 3, 3, "bps") == 0) {
      axis->unit = axis->unit.substr(0, axis->unit.size() - 3) + "b/s";
    }
    return;
  }
  DisplayUnit unit{1, ""};
  switch (axis->kind) {
    case AxisKind::kBandwidth:
      unit = PickUnit(kBandwidthUnits, largest);
      break;
    case AxisKind::kSize:
      unit = PickUnit(kSizeUnits, largest);
      break;
    case AxisKind::kDuration:
      unit = PickUnit(kDurationUnits, largest);
      break;
    case AxisKind::kFlopRate:
      unit = PickUnit(kFlopRateUnits, largest);
      break;
    default:
      break;
  }
  axis->scale = unit.scale;
  axis->unit = unit.name;
}

}  // namespace

const char* KindName(AxisKind kind) {
  switch (kind) {
    case AxisKind::kCategorical:
      return "categorical";
    case AxisKind::kNumber:
      return "number";
    case AxisKind::kBandwidth:
      return "bandwidth";
    case AxisKind::kSize:
      return "size";
    case AxisKind::kDuration:
      return "duration";
    case AxisKind::kFlopRate:
      return "FLOP rate";
  }
  return "";
}

std::vector<Axis> ClassifyAxes(const ResultsTable& results) {
  std::vector<Axis> axes(results.axis_count);
  for (int a = 0; a < results.axis_count; ++a) {
    Axis& axis = axes[a];
    axis.name = results.header[1 + a];
    bool any_value = false;
    for (const ResultRow& row : results.rows) any_value = any_value || !results.AxisText(row, a).empty();
    if (any_value) {
      for (AxisKind kind : kNumericKinds) {
        bool all = true;
        double value;
        for (const ResultRow& row : results.rows) {
          const std::string& text = results.AxisText(row, a);
          if (!text.empty() && !ParseAs(kind, text, &value)) {
            all = false;
            break;
          }
        }
        if (all) {
          axis.kind = kind;
          break;
        }
      }
    }
    std::map<std::string, double> category;
    for (const ResultRow& row : results.rows) {
      const std::string& text = results.AxisText(row, a);
      double key;
      if (!IsNumeric(axis)) {
        key = category.emplace(text, static_cast<double>(category.size())).first->second;
      } else if (text.empty()) {
        key = std::numeric_limits<double>::infinity();
      } else {
        ParseAs(axis.kind, text, &key);
      }
      axis.key.push_back(key);
      if (axis.text_of_key.emplace(key, text).second && std::isfinite(key)) ++axis.finite_values;
    }
    axis.varies = axis.text_of_key.size() > 1;
    if (IsNumeric(axis)) ChooseDisplayUnit(results, a, &axis);
  }
  return axes;
}

// "NIC bandwidth (set.nic.bandwidth, Gb/s)", "microbatches", "wall (s)".
std::string AxisTitle(const std::string& name, const std::string& unit) {
  if (name.find('.') == std::string::npos) return unit.empty() ? name : name + " (" + unit + ")";
  static const std::map<std::string, std::string> kWords = {
      {"nic", "NIC"}, {"gpu", "GPU"}, {"nvlink", "NVLink"}, {"pcie", "PCIe"}, {"p2p", "P2P"},
      {"hbm", "HBM"}, {"tp", "TP"},   {"pp", "PP"},         {"dp", "DP"},     {"cpu", "CPU"}};
  std::vector<std::string> words;
  std::string word;
  for (char c : name + ".") {
    if (c == '.' || c == '_' || c == '-') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (words.size() > 1 && words[0] == "set") words.erase(words.begin());
  std::string description;
  for (const std::string& w : words) {
    const auto it = kWords.find(w);
    description += (description.empty() ? "" : " ") + (it == kWords.end() ? w : it->second);
  }
  return description + " (" + name + (unit.empty() ? "" : ", " + unit) + ")";
}

}  // namespace ppsim
