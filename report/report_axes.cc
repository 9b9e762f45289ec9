#include "report/report_axes.h"

#include <cmath>
#include <limits>
#include <string_view>

#include "base/names.h"
#include "base/numbers.h"
#include "config/units.h"

namespace ppsim {
namespace {

constexpr NamedValue<AxisKind> kKindNames[] = {
    {"categorical", AxisKind::kCategorical}, {"number", AxisKind::kNumber},
    {"bandwidth", AxisKind::kBandwidth},     {"size", AxisKind::kSize},
    {"duration", AxisKind::kDuration},       {"FLOP rate", AxisKind::kFlopRate},
};

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

// One column as an axis of its own.
Axis ClassifyColumn(const ResultsTable& results, int a) {
  Axis axis;
  axis.columns = {a};
  axis.names = {results.header[1 + a]};
  axis.name = axis.names[0];
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
  return axis;
}

// Over all the rows, equal keys of `by` come with equal keys of `of`.
bool Determines(const Axis& by, const Axis& of) {
  std::map<double, double> seen;
  for (size_t r = 0; r < by.key.size(); ++r) {
    const auto [it, inserted] = seen.emplace(by.key[r], of.key[r]);
    if (!inserted && it->second != of.key[r]) return false;
  }
  return true;
}

// `lead`'s axis widened by the columns in `joined` (each determined by it).
Axis Join(const ResultsTable& results, const std::vector<Axis>& columns, int lead,
          const std::vector<int>& joined) {
  Axis axis = columns[lead];
  bool numeric = IsNumeric(axis);
  for (int c : joined) {
    axis.columns.push_back(c);
    axis.names.push_back(columns[c].name);
    axis.name += " / " + columns[c].name;
    numeric = numeric && IsNumeric(columns[c]);
  }
  if (!numeric) {
    axis.kind = AxisKind::kCategorical;
    axis.scale = 1;
    axis.unit.clear();
  }
  axis.text_of_key.clear();
  for (size_t r = 0; r < results.rows.size(); ++r) {
    axis.text_of_key.emplace(axis.key[r], AxisValue(results, axis, results.rows[r]));
  }
  return axis;
}

// "NIC bandwidth (set.nic.bandwidth, Gb/s)", "microbatches", "wall (s)".
std::string ColumnTitle(const std::string& name, const std::string& unit) {
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

}  // namespace

std::vector<Axis> ClassifyAxes(const ResultsTable& results) {
  std::vector<Axis> columns;
  for (int a = 0; a < results.axis_count; ++a) columns.push_back(ClassifyColumn(results, a));
  const int n = static_cast<int>(columns.size());
  // determines[d][c]: column d's value fixes column c's (both varying).
  std::vector<std::vector<bool>> determines(n, std::vector<bool>(n, false));
  for (int d = 0; d < n; ++d) {
    for (int c = 0; c < n; ++c) {
      determines[d][c] =
          d != c && columns[d].varies && columns[c].varies && Determines(columns[d], columns[c]);
    }
  }
  // A column another one determines follows it, unless they determine each other and it comes
  // first. Each such column joins the first leading column that determines it: one exists, since
  // "determines" is transitive and a chain of strictly determining columns ends.
  std::vector<bool> follows(n, false);
  for (int c = 0; c < n; ++c) {
    for (int d = 0; d < n; ++d) {
      if (determines[d][c] && (!determines[c][d] || d < c)) follows[c] = true;
    }
  }
  std::vector<std::vector<int>> joined(n);
  for (int c = 0; c < n; ++c) {
    if (!follows[c]) continue;
    for (int d = 0; d < n; ++d) {
      if (!follows[d] && determines[d][c]) {
        joined[d].push_back(c);
        break;
      }
    }
  }
  std::vector<Axis> axes;
  for (int c = 0; c < n; ++c) {
    if (follows[c]) continue;
    axes.push_back(joined[c].empty() ? columns[c] : Join(results, columns, c, joined[c]));
  }
  return axes;
}

std::string AxisValue(const ResultsTable& results, const Axis& axis, const ResultRow& row) {
  std::string value;
  for (size_t i = 0; i < axis.columns.size(); ++i) {
    value += (i == 0 ? "" : " / ") + results.AxisText(row, axis.columns[i]);
  }
  return value;
}

std::string AxisAssignment(const ResultsTable& results, const Axis& axis, const ResultRow& row) {
  std::string text;
  for (size_t i = 0; i < axis.columns.size(); ++i) {
    text += (i == 0 ? "" : " / ") + axis.names[i] + "=" + results.AxisText(row, axis.columns[i]);
  }
  return text;
}

std::string_view KindName(AxisKind kind) { return NameOf(kKindNames, kind); }

std::string AxisTitle(const Axis& axis) {
  std::string title = ColumnTitle(axis.names[0], axis.unit);
  for (size_t i = 1; i < axis.names.size(); ++i) title += " / " + axis.names[i];
  return title;
}

}  // namespace ppsim
