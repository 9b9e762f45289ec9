#include "experiments/html_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "experiments/sweep.h"
#include "models/units.h"
#include "base/escape.h"

namespace ppsim {
namespace {

// The columns after the axes (experiments/sweep.h), and indexes into them.
constexpr const auto& kMetricColumns = kResultMetricColumns;
constexpr int kMetricColumnCount =
    static_cast<int>(sizeof(kResultMetricColumns) / sizeof(kResultMetricColumns[0]));
// Indexes into kMetricColumns. The first kNumericMetrics columns hold numbers on ok rows.
constexpr int kMakespan = 0;
constexpr int kBubble = 1;
constexpr int kPeakMemory = 4;
constexpr int kNumericMetrics = 6;
constexpr int kOom = 6;
constexpr int kStatus = 7;
constexpr int kError = 8;
constexpr int kWall = 9;

constexpr std::string_view kValidHeader =
    "a results CSV has point, the swept axes, then makespan_s, bubble_over_makespan, "
    "stage_bubble_rate, throughput_microbatches_per_s, peak_memory_bytes, static_memory_bytes, "
    "oom, status, error, wall_s";

constexpr std::string_view kStatuses[] = {"ok", "failed", "skipped", "timeout", "crashed"};
constexpr int kOk = 0;
constexpr int kStatusCount = 5;

constexpr int kMaxErrors = 20;

// Layout, in SVG pixels. Text widths are estimated conservatively per character.
constexpr double kCharPx = 7;       // 12px text
constexpr double kTitleCharPx = 9;  // 14px bold titles
constexpr double kPlotHeight = 300;
constexpr double kLinePlotWidth = 520;
constexpr double kPlotTop = 44;
constexpr double kLegendRowPx = 18;
constexpr double kLegendBesideMaxPx = 320;
constexpr size_t kMaxLabelChars = 80;
constexpr size_t kMaxBarLabelChars = 40;
constexpr int kMaxTicks = 8;

// Tableau 10: distinguishable, and a series keeps its colour in every chart.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kPaletteSize = 10;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Estimated width: characters of three or more UTF-8 bytes (CJK and the like) count double.
double TextWidth(std::string_view text, double char_px = kCharPx) {
  double chars = 0;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (IsContinuationByte(c)) continue;
    chars += u >= 0xE1 ? 2 : 1;
  }
  return chars * char_px;
}

// At most `max_chars` characters, ending in an ellipsis when cut.
std::string Truncate(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsContinuationByte(text[i])) continue;
    if (chars == max_chars - 1) {
      size_t rest = 0;
      for (size_t j = i; j < text.size(); ++j) rest += IsContinuationByte(text[j]) ? 0 : 1;
      if (rest > 1) return text.substr(0, i) + "\u2026";
      return text;
    }
    ++chars;
  }
  return text;
}

std::string FormatFixed(double value, int decimals) {
  if (std::fabs(value) < 0.5 * std::pow(10.0, -decimals)) value = 0;  // never "-0"
  char buffer[400];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string Px(double value) { return FormatFixed(value, 1); }

std::string Short(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.4g", value);
  return buffer;
}

std::string Plural(int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// The whole text is a finite decimal number (as the sweep prints them, e.g. "1.2e-05").
bool ParseNumber(std::string_view text, double* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && stop == end && std::isfinite(*value);
}

bool ParseWhole(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && stop == end;
}

struct Record {
  int64_t line = 0;  // where the record starts
  std::vector<std::string> fields;
};

bool AtLineEnd(std::string_view text, size_t i) {
  return text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n'));
}

// Records end at LF or CRLF outside quotes; a final line break ends the last record.
Status ReadCsv(std::string_view text, const std::string& source, std::vector<Record>* records) {
  auto where = [&](int64_t line) { return source + ":" + std::to_string(line) + ": "; };
  size_t i = 0;
  int64_t line = 1;
  while (i < text.size()) {
    Record record;
    record.line = line;
    while (true) {
      std::string field;
      const size_t column = record.fields.size() + 1;
      if (i < text.size() && text[i] == '"') {
        const int64_t quote_line = line;
        ++i;
        while (true) {
          if (i >= text.size()) {
            return Status::InvalidInput(where(quote_line) +
                                        "unterminated quoted field; a quoted field ends with \" "
                                        "and a quote inside it is written \"\"");
          }
          const char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < text.size() && text[i] != ',' && !AtLineEnd(text, i)) {
          return Status::InvalidInput(
              where(line) + "'" + std::string(1, text[i]) + "' after the closing quote of field " +
              std::to_string(column) + "; a quoted field ends at a comma or the end of the line");
        }
      } else {
        while (i < text.size() && text[i] != ',' && !AtLineEnd(text, i)) {
          if (text[i] == '"') {
            return Status::InvalidInput(where(line) + "quote inside unquoted field " +
                                        std::to_string(column) +
                                        "; quote the whole field and double the quotes in it");
          }
          field += text[i++];
        }
      }
      record.fields.push_back(std::move(field));
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == '\r') ++i;
      if (i < text.size() && text[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    records->push_back(std::move(record));
  }
  return Status();
}

struct Row {
  int64_t line = 0;
  int64_t point = 0;
  int status = kOk;
  std::vector<std::string> fields;
  double metric[kNumericMetrics] = {};  // on ok rows
  bool oom = false;
};

struct Results {
  std::vector<std::string> header;
  int axis_count = 0;
  std::vector<Row> rows;  // in point order

  const std::string& AxisText(const Row& row, int axis) const { return row.fields[1 + axis]; }
  const std::string& Cell(const Row& row, int metric) const {
    return row.fields[1 + axis_count + metric];
  }
};

Status CheckHeader(const Record& header, const std::string& source, int* axis_count) {
  const std::string where = source + ":" + std::to_string(header.line) + ": ";
  const std::string valid = "; " + std::string(kValidHeader);
  const std::vector<std::string>& f = header.fields;
  if (f[0] != "point") {
    return Status::InvalidInput(where + "first column is " + Quoted(f[0]) + ", expected 'point'" + valid);
  }
  const auto makespan = std::find(f.begin() + 1, f.end(), kMetricColumns[kMakespan]);
  if (makespan == f.end()) {
    return Status::InvalidInput(where + "missing column 'makespan_s'" + valid);
  }
  const size_t first_metric = makespan - f.begin();
  for (int m = 0; m < kMetricColumnCount; ++m) {
    const size_t column = first_metric + m;
    if (column < f.size() && f[column] == kMetricColumns[m]) continue;
    const bool present = std::find(f.begin(), f.end(), kMetricColumns[m]) != f.end();
    if (!present || column >= f.size()) {
      return Status::InvalidInput(where + "missing column '" + std::string(kMetricColumns[m]) +
                                  "'" + valid);
    }
    return Status::InvalidInput(where + "column " + std::to_string(column + 1) + " is '" +
                                Printable(f[column]) + "', expected '" + std::string(kMetricColumns[m]) + "'" +
                                valid);
  }
  if (f.size() > first_metric + kMetricColumnCount) {
    return Status::InvalidInput(where + "unexpected column '" +
                                f[first_metric + kMetricColumnCount] + "' after wall_s" + valid);
  }
  for (size_t a = 1; a < first_metric; ++a) {
    if (f[a].empty()) {
      return Status::InvalidInput(where + "column " + std::to_string(a + 1) +
                                  " has no name; an axis column is named for the field it sweeps");
    }
  }
  for (size_t j = 1; j < f.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      if (f[i] == f[j]) {
        return Status::InvalidInput(where + "column " + std::to_string(j + 1) + " '" + Printable(f[j]) +
                                    "' repeats column " + std::to_string(i + 1) +
                                    "; each column appears once");
      }
    }
  }
  *axis_count = static_cast<int>(first_metric) - 1;
  return Status();
}

// One message for the first problem of the row, or "".
std::string CheckRow(const Results& results, const Record& record, const std::string& source,
                     Row* row) {
  const std::string where = source + ":" + std::to_string(record.line) + ": ";
  const size_t expected = results.header.size();
  if (record.fields.size() != expected) {
    return where + Plural(static_cast<int64_t>(record.fields.size()), "field") + ", expected " +
           std::to_string(expected);
  }
  row->line = record.line;
  row->fields = record.fields;
  if (!ParseWhole(row->fields[0], &row->point) || row->point < 0) {
    return where + "point '" + Printable(row->fields[0]) +
           "' is not a whole number >= 0; point is the 0-based index of the sweep point";
  }
  const std::string& status = results.Cell(*row, kStatus);
  row->status = -1;
  for (int s = 0; s < kStatusCount; ++s) {
    if (status == kStatuses[s]) row->status = s;
  }
  if (row->status < 0) {
    return where + "status '" + Printable(status) +
           "' is not valid; valid: ok, failed, skipped, timeout, "
           "crashed";
  }
  const std::string& wall = results.Cell(*row, kWall);
  double wall_s;
  if (!ParseNumber(wall, &wall_s) && !(wall.empty() && row->status != kOk)) {
    return where + "wall_s '" + Printable(wall) + "' is not a number; wall_s is the run's wall-clock seconds";
  }
  if (row->status != kOk) return "";
  for (int m = 0; m < kNumericMetrics; ++m) {
    const std::string& cell = results.Cell(*row, m);
    if (!ParseNumber(cell, &row->metric[m])) {
      return where + std::string(kMetricColumns[m]) + " '" + Printable(cell) +
             "' is not a number; an ok row has a number in each metric column";
    }
  }
  const std::string& oom = results.Cell(*row, kOom);
  if (oom != "true" && oom != "false") {
    return where + "oom '" + Printable(oom) + "' is not valid; valid: true, false";
  }
  row->oom = oom == "true";
  return "";
}

Status ParseResults(std::string_view text, const std::string& source, Results* results) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  if (text.empty()) {
    return Status::InvalidInput(source + ":1: empty file; " + std::string(kValidHeader));
  }
  std::vector<Record> records;
  Status status = ReadCsv(text, source, &records);
  if (!status.ok()) return status;
  status = CheckHeader(records[0], source, &results->axis_count);
  if (!status.ok()) return status;
  results->header = records[0].fields;

  std::vector<std::string> errors;
  int64_t more_errors = 0;
  std::map<int64_t, int64_t> line_of_point;
  for (size_t r = 1; r < records.size(); ++r) {
    Row row;
    std::string error = CheckRow(*results, records[r], source, &row);
    if (error.empty()) {
      const auto [it, inserted] = line_of_point.emplace(row.point, row.line);
      if (!inserted) {
        error = source + ":" + std::to_string(row.line) + ": point " + std::to_string(row.point) +
                " repeats line " + std::to_string(it->second) + "; each point appears once";
      }
    }
    if (error.empty()) {
      results->rows.push_back(std::move(row));
    } else if (errors.size() < kMaxErrors) {
      errors.push_back(std::move(error));
    } else {
      ++more_errors;
    }
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string& e : errors) message += (message.empty() ? "" : "\n") + e;
    if (more_errors > 0) {
      message += "\n" + source + ": " + Plural(more_errors, "more bad row") + " not shown";
    }
    return Status::InvalidInput(message);
  }
  std::stable_sort(results->rows.begin(), results->rows.end(),
                   [](const Row& a, const Row& b) { return a.point < b.point; });
  return Status();
}

enum class AxisKind { kCategorical, kNumber, kBandwidth, kSize, kDuration, kFlopRate };

constexpr AxisKind kNumericKinds[] = {AxisKind::kNumber, AxisKind::kBandwidth, AxisKind::kSize,
                                      AxisKind::kDuration, AxisKind::kFlopRate};

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

// In the parser's base unit (bytes/s, bytes, seconds, FLOP/s); false unless finite.
bool ParseAs(AxisKind kind, std::string_view text, double* value) {
  switch (kind) {
    case AxisKind::kCategorical:
      return false;
    case AxisKind::kNumber:
      return ParseNumber(text, value);
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

struct Unit {
  double scale;  // base units per display unit
  const char* name;
};
constexpr Unit kDurationUnits[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
constexpr Unit kSizeUnits[] = {
    {1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}, {1, "B"}};
constexpr Unit kBandwidthUnits[] = {
    {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}};
constexpr Unit kFlopRateUnits[] = {{1e18, "EFLOP/s"}, {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"},
                                   {1e9, "GFLOP/s"},  {1e6, "MFLOP/s"},  {1e3, "KFLOP/s"},
                                   {1, "FLOP/s"}};

// The largest unit not above `largest` (the smallest unit when all are).
template <size_t N>
Unit PickUnit(const Unit (&units)[N], double largest) {
  for (const Unit& u : units) {
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

bool IsNumeric(const Axis& axis) { return axis.kind != AxisKind::kCategorical; }

// The unit as the user wrote it after the number: "Gbps" of "400Gbps".
std::string_view UnitSuffix(std::string_view text) {
  const size_t last_digit = text.find_last_of("0123456789");
  return last_digit == std::string_view::npos ? text : text.substr(last_digit + 1);
}

// Shows the axis in the unit every value was written in, else the base unit with a prefix.
void ChooseDisplayUnit(const Results& results, int a, Axis* axis) {
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
  Unit unit{1, ""};
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

std::vector<Axis> ClassifyAxes(const Results& results) {
  std::vector<Axis> axes(results.axis_count);
  for (int a = 0; a < results.axis_count; ++a) {
    Axis& axis = axes[a];
    axis.name = results.header[1 + a];
    bool any_value = false;
    for (const Row& row : results.rows) any_value = any_value || !results.AxisText(row, a).empty();
    if (any_value) {
      for (AxisKind kind : kNumericKinds) {
        bool all = true;
        double value;
        for (const Row& row : results.rows) {
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
    for (const Row& row : results.rows) {
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
  int64_t not_plotted[kStatusCount] = {};
  int64_t missing_x = 0;  // ok rows without a value on the x axis
};

// Whether a line over `x_axis` would join anything: some combination of the other varying axes has
// ok points at two x values. When none does (the numeric axis only moves together with the others,
// as stages_per_rank with schedule), bars show the points better.
bool SomeLineHasTwoPoints(const Results& results, const std::vector<Axis>& axes,
                          const std::vector<int>& varying, int x_axis) {
  std::map<std::vector<double>, double> x_of_series;
  bool any_ok = false;
  for (size_t r = 0; r < results.rows.size(); ++r) {
    const double x = axes[x_axis].key[r];
    if (results.rows[r].status != kOk || !std::isfinite(x)) continue;
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

Plan MakePlan(const Results& results, const std::vector<Axis>& axes) {
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
    const Row& row = results.rows[r];
    if (row.status != kOk) {
      ++plan.not_plotted[row.status];
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
    for (int a : plan.series_axes) {
      label +=
          (label.empty() ? "" : ", ") + axes[a].name + "=" + results.AxisText(results.rows[r], a);
    }
    plan.series_labels.push_back(label);
  }
  for (auto& [key, index] : groups) {
    index = static_cast<int>(plan.group_labels.size());
    const Row& row = results.rows[group_first_row[key]];
    std::string label = plan.group_axis >= 0 ? results.AxisText(row, plan.group_axis)
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
std::string PointName(const Results& results, const std::vector<Axis>& axes, const Row& row) {
  std::string values;
  for (int a = 0; a < static_cast<int>(axes.size()); ++a) {
    if (!axes[a].varies) continue;
    values += (values.empty() ? "" : ", ") + axes[a].name + "=" + results.AxisText(row, a);
  }
  return "point " + std::to_string(row.point) + (values.empty() ? "" : " (" + values + ")");
}

struct ChartMetric {
  int metric;
  const char* title;
  const char* quantity;  // y axis title before the unit
};
constexpr ChartMetric kCharts[] = {
    {kMakespan, "Makespan (makespan_s)", "makespan"},
    {kBubble, "Bubble over makespan (bubble_over_makespan)", "bubble / makespan"},
    {kPeakMemory, "Peak memory (peak_memory_bytes)", "peak memory"},
};

// Values of one metric, in a display unit.
struct YAxis {
  std::string title;
  double scale = 1;                 // metric units per display unit
  std::vector<double> values;       // per plan point, in display units
  std::vector<std::string> labels;  // per plan point, for tooltips
};

YAxis MakeYAxis(const Results& results, const Plan& plan, const ChartMetric& chart) {
  YAxis y;
  double largest = 0;
  for (const PlotPoint& p : plan.points) {
    largest = std::max(largest, std::fabs(results.rows[p.row].metric[chart.metric]));
  }
  std::string unit;
  if (chart.metric == kMakespan) {
    const Unit u = PickUnit(kDurationUnits, largest);
    y.scale = u.scale;
    unit = u.name;
  } else if (chart.metric == kBubble) {
    y.scale = 0.01;
    unit = "%";
  } else {
    const Unit u = PickUnit(kSizeUnits, largest);
    y.scale = u.scale;
    unit = u.name;
  }
  y.title = std::string(chart.quantity) + " (" + unit + ")";
  for (const PlotPoint& p : plan.points) {
    const Row& row = results.rows[p.row];
    const double v = row.metric[chart.metric];
    y.values.push_back(v / y.scale);
    if (chart.metric == kMakespan) {
      y.labels.push_back(HumanDuration(v));
    } else if (chart.metric == kBubble) {
      y.labels.push_back(Short(v * 100) + " %");
    } else {
      y.labels.push_back(HumanBytes(v) + (row.oom ? " (OOM)" : ""));
    }
  }
  return y;
}

// Ticks at multiples of a 1, 2 or 5 × 10^k step covering [lo, hi].
struct Ticks {
  int64_t first = 0;
  int count = 2;
  double step = 1;
  int decimals = 0;

  double At(int i) const { return static_cast<double>(first + i) * step; }
  double Lo() const { return At(0); }
  double Hi() const { return At(count - 1); }
  std::string Label(int i) const { return FormatFixed(At(i), decimals); }
};

// The smallest step of at least `min_step` giving at most `max_ticks` (>= 3) ticks.
Ticks NiceTicks(double lo, double hi, int max_ticks, double min_step = 0) {
  if (!(hi > lo)) {
    if (lo == 0) {
      hi = 1;
    } else {
      const double pad = std::fabs(lo) * 0.1;
      lo -= pad;
      hi += pad;
    }
  }
  int exponent = static_cast<int>(std::floor(std::log10((hi - lo) / (max_ticks - 1)))) - 1;
  Ticks ticks;
  for (int attempt = 0; attempt < 60; ++exponent, ++attempt) {
    for (int m : {1, 2, 5}) {
      ticks.step = m * std::pow(10.0, exponent);
      if (ticks.step < min_step) continue;
      ticks.first = static_cast<int64_t>(std::floor(lo / ticks.step + 1e-9));
      const int64_t last = static_cast<int64_t>(std::ceil(hi / ticks.step - 1e-9));
      ticks.count = static_cast<int>(last - ticks.first + 1);
      ticks.decimals = std::max(0, -exponent);
      if (ticks.count <= max_ticks) return ticks;
    }
  }
  return ticks;
}

double MaxLabelWidth(const Ticks& ticks) {
  double width = 0;
  for (int i = 0; i < ticks.count; ++i) width = std::max(width, TextWidth(ticks.Label(i)));
  return width;
}

// x ticks whose labels leave at least 10px between them; whole steps when `whole` (microbatches
// have no 1.5).
Ticks FittingXTicks(double lo, double hi, double plot_width, bool whole) {
  Ticks ticks;
  for (int max_ticks = kMaxTicks; max_ticks >= 3; --max_ticks) {
    ticks = NiceTicks(lo, hi, max_ticks, whole ? 1 : 0);
    const double spacing = plot_width * ticks.step / (ticks.Hi() - ticks.Lo());
    if (MaxLabelWidth(ticks) + 10 <= spacing) break;
  }
  return ticks;
}

const char* Colour(int series) { return kPalette[series % kPaletteSize]; }

// Series past the palette repeat its colours with another marker shape.
std::string Marker(int series, double x, double y, const char* css_class,
                   const std::string& tooltip) {
  const std::string fill = Colour(series);
  std::string tag;
  std::string out;
  switch ((series / kPaletteSize) % 4) {
    case 0:
      tag = "circle";
      out = "<circle class=\"" + std::string(css_class) + "\" cx=\"" + Px(x) + "\" cy=\"" + Px(y) +
            "\" r=\"3.5\"";
      break;
    case 1:
      tag = "rect";
      out = "<rect class=\"" + std::string(css_class) + "\" x=\"" + Px(x - 3.5) + "\" y=\"" +
            Px(y - 3.5) + "\" width=\"7\" height=\"7\"";
      break;
    case 2:
      tag = "polygon";
      out = "<polygon class=\"" + std::string(css_class) + "\" points=\"" + Px(x) + "," +
            Px(y - 4.5) + " " + Px(x + 4.5) + "," + Px(y + 3.5) + " " + Px(x - 4.5) + "," +
            Px(y + 3.5) + "\"";
      break;
    default:
      tag = "polygon";
      out = "<polygon class=\"" + std::string(css_class) + "\" points=\"" + Px(x) + "," +
            Px(y - 5) + " " + Px(x + 5) + "," + Px(y) + " " + Px(x) + "," + Px(y + 5) + " " +
            Px(x - 5) + "," + Px(y) + "\"";
      break;
  }
  out += " fill=\"" + fill + "\"";
  if (tooltip.empty()) return out + "/>";
  return out + "><title>" + MarkupEscape(tooltip) + "</title></" + tag + ">";
}

std::string Text(double x, double y, const char* anchor, const std::string& text,
                 const std::string& extra = "") {
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + MarkupEscape(text) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2, const char* stroke,
                 const char* extra = "") {
  return "<line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" + Px(y2) +
         "\" stroke=\"" + stroke + "\"" + extra + "/>\n";
}

// A legend label, shortened when very long; the full text is its tooltip.
std::string LegendText(double x, double y, const std::string& label) {
  const std::string shown = Truncate(label, kMaxLabelChars);
  if (shown == label) return Text(x, y, "start", label);
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" text-anchor=\"start\"><title>" +
         MarkupEscape(label) + "</title>" + MarkupEscape(shown) + "</text>\n";
}

double LegendWidth(const std::vector<std::string>& labels) {
  double width = 0;
  for (const std::string& label : labels) {
    width = std::max(width, 28 + TextWidth(Truncate(label, kMaxLabelChars)));
  }
  return width;
}

bool HasLegend(const Plan& plan) {
  return plan.series_labels.size() > 1 ||
         (plan.series_labels.size() == 1 && !plan.series_labels[0].empty());
}

// Where the legend goes: beside the plot when narrow enough, else below everything else.
struct Frame {
  double plot_left = 0;
  double plot_width = 0;
  double below_plot = 0;  // height of the tick labels and x title band
  double width = 0;
  double height = 0;
  double legend_x = 0;
  double legend_y = 0;
};

Frame PlaceFrame(const std::string& title, double y_label_width, double plot_width,
                 double below_plot, double right_overhang, double x_title_width,
                 double legend_width, size_t legend_rows) {
  Frame f;
  f.plot_left = 28 + y_label_width + 8;
  f.plot_width = plot_width;
  f.below_plot = below_plot;
  const double plot_right = f.plot_left + plot_width;
  const double plot_bottom = kPlotTop + kPlotHeight;
  f.width = std::max({plot_right + right_overhang + 12, TextWidth(title, kTitleCharPx) + 24,
                      f.plot_left + plot_width / 2 + x_title_width / 2 + 12});
  f.height = plot_bottom + below_plot + 8;
  if (legend_rows == 0) return f;
  if (legend_width <= kLegendBesideMaxPx) {
    f.legend_x = std::max(plot_right + 24, plot_right + right_overhang + 12);
    f.legend_y = kPlotTop;
    f.width = std::max(f.width, f.legend_x + legend_width + 12);
    f.height = std::max(f.height, f.legend_y + legend_rows * kLegendRowPx + 8);
  } else {
    f.legend_x = f.plot_left;
    f.legend_y = plot_bottom + below_plot + 4;
    f.width = std::max(f.width, f.legend_x + legend_width + 12);
    f.height = f.legend_y + legend_rows * kLegendRowPx + 8;
  }
  return f;
}

std::string SvgOpen(const Frame& f, const ChartMetric& chart, const char* kind) {
  return "<svg class=\"chart " + std::string(kind) + "\" data-metric=\"" +
         std::string(kMetricColumns[chart.metric]) + "\" width=\"" + Px(f.width) + "\" height=\"" +
         Px(f.height) + "\" viewBox=\"0 0 " + Px(f.width) + " " + Px(f.height) +
         "\" role=\"img\" aria-label=\"" + MarkupEscape(chart.title) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n" +
         Text(12, 22, "start", chart.title, " font-size=\"14\" font-weight=\"bold\"");
}

// The y grid, tick labels and title, and the plot's frame.
std::string YAxisMarkup(const Frame& f, const Ticks& y, const std::string& title) {
  std::string out;
  const double bottom = kPlotTop + kPlotHeight;
  for (int i = 0; i < y.count; ++i) {
    const double py = bottom - (y.At(i) - y.Lo()) / (y.Hi() - y.Lo()) * kPlotHeight;
    out += Line(f.plot_left, py, f.plot_left + f.plot_width, py, "#e6e6e6");
    out += Text(f.plot_left - 6, py + 4, "end", y.Label(i));
  }
  const double middle = kPlotTop + kPlotHeight / 2;
  out += Text(16, middle, "middle", title, " transform=\"rotate(-90 16 " + Px(middle) + ")\"");
  out += "<rect x=\"" + Px(f.plot_left) + "\" y=\"" + Px(kPlotTop) + "\" width=\"" +
         Px(f.plot_width) + "\" height=\"" + Px(kPlotHeight) +
         "\" fill=\"none\" stroke=\"#888\"/>\n";
  return out;
}

Ticks MakeYTicks(const YAxis& y) {
  double lo = 0;
  double hi = 0;
  for (double v : y.values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return NiceTicks(lo, hi, kMaxTicks);
}

std::string LineChart(const Results& results, const std::vector<Axis>& axes, const Plan& plan,
                      const ChartMetric& chart) {
  const YAxis y = MakeYAxis(results, plan, chart);
  const Ticks y_ticks = MakeYTicks(y);
  const Axis& x_axis = axes[plan.x_axis];
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -x_lo;
  bool whole = true;
  for (const PlotPoint& p : plan.points) {
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    whole = whole && p.x == std::floor(p.x);
  }
  const Ticks x_ticks = FittingXTicks(x_lo, x_hi, kLinePlotWidth, whole);
  const std::string x_title = AxisTitle(x_axis.name, x_axis.unit);
  const bool legend = HasLegend(plan);
  const Frame f = PlaceFrame(
      chart.title, MaxLabelWidth(y_ticks), kLinePlotWidth, 44, MaxLabelWidth(x_ticks) / 2,
      TextWidth(x_title), LegendWidth(plan.series_labels), legend ? plan.series_labels.size() : 0);
  const double bottom = kPlotTop + kPlotHeight;
  auto px = [&](double x) {
    return f.plot_left + (x - x_ticks.Lo()) / (x_ticks.Hi() - x_ticks.Lo()) * f.plot_width;
  };
  auto py = [&](double v) {
    return bottom - (v - y_ticks.Lo()) / (y_ticks.Hi() - y_ticks.Lo()) * kPlotHeight;
  };

  std::string out = SvgOpen(f, chart, "lines");
  out += YAxisMarkup(f, y_ticks, y.title);
  for (int i = 0; i < x_ticks.count; ++i) {
    const double x = px(x_ticks.At(i));
    out += Line(x, bottom, x, bottom + 4, "#888");
    out += Text(x, bottom + 17, "middle", x_ticks.Label(i));
  }
  out += Text(f.plot_left + f.plot_width / 2, bottom + 37, "middle", x_title);

  for (size_t begin = 0; begin < plan.points.size();) {
    const int series = plan.points[begin].series;
    size_t end = begin;
    while (end < plan.points.size() && plan.points[end].series == series) ++end;
    std::string coordinates;
    for (size_t i = begin; i < end; ++i) {
      coordinates += (i == begin ? "" : " ") + Px(px(plan.points[i].x)) + "," + Px(py(y.values[i]));
    }
    out += "<g class=\"series\" data-series=\"" + MarkupEscape(plan.series_labels[series]) + "\">\n";
    out += "<polyline class=\"line\" points=\"" + coordinates + "\" fill=\"none\" stroke=\"" +
           Colour(series) + "\" stroke-width=\"2\"/>\n";
    for (size_t i = begin; i < end; ++i) {
      const Row& row = results.rows[plan.points[i].row];
      out += Marker(series, px(plan.points[i].x), py(y.values[i]), "marker",
                    PointName(results, axes, row) + ": " + y.labels[i]) +
             "\n";
    }
    out += "</g>\n";
    begin = end;
  }

  if (legend) {
    for (size_t s = 0; s < plan.series_labels.size(); ++s) {
      const double ly = f.legend_y + s * kLegendRowPx + 9;
      out += "<g class=\"legend-entry\">";
      out += Line(f.legend_x, ly, f.legend_x + 20, ly, Colour(static_cast<int>(s)),
                  " stroke-width=\"2\"");
      out += Marker(static_cast<int>(s), f.legend_x + 10, ly, "swatch", "");
      out += LegendText(f.legend_x + 28, ly + 4, plan.series_labels[s]);
      out += "</g>\n";
    }
  }
  return out + "</svg>\n";
}

std::string BarChart(const Results& results, const std::vector<Axis>& axes, const Plan& plan,
                     const ChartMetric& chart) {
  constexpr double kBarWidth = 16;
  constexpr double kBarGap = 2;
  constexpr double kGroupGap = 14;
  const YAxis y = MakeYAxis(results, plan, chart);
  const Ticks y_ticks = MakeYTicks(y);

  // Bars per group, and the x extent of each group.
  std::vector<int> bars_in_group(plan.group_labels.size(), 0);
  for (const PlotPoint& p : plan.points) ++bars_in_group[p.group];
  std::vector<double> group_left;
  double x = kGroupGap;
  for (int count : bars_in_group) {
    group_left.push_back(x);
    x += count * (kBarWidth + kBarGap) - kBarGap + kGroupGap;
  }
  const double plot_width = std::max(240.0, x);

  // Labels horizontal when every one fits its group, else vertical.
  bool horizontal = true;
  double longest = 0;
  std::vector<std::string> shown;
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    shown.push_back(Truncate(plan.group_labels[g], kMaxBarLabelChars));
    const double w = TextWidth(shown.back());
    longest = std::max(longest, w);
    const double room = bars_in_group[g] * (kBarWidth + kBarGap) - kBarGap + kGroupGap - 4;
    horizontal = horizontal && w <= room;
  }
  const double label_band = horizontal ? 22 : longest + 14;
  const std::string x_title =
      plan.group_axis >= 0 ? AxisTitle(axes[plan.group_axis].name, "") : "point";
  const bool legend = HasLegend(plan);
  const Frame f = PlaceFrame(chart.title, MaxLabelWidth(y_ticks), plot_width, label_band + 22, 0,
                             TextWidth(x_title), LegendWidth(plan.series_labels),
                             legend ? plan.series_labels.size() : 0);
  const double bottom = kPlotTop + kPlotHeight;
  auto py = [&](double v) {
    return bottom - (v - y_ticks.Lo()) / (y_ticks.Hi() - y_ticks.Lo()) * kPlotHeight;
  };

  std::string out = SvgOpen(f, chart, "bars");
  out += YAxisMarkup(f, y_ticks, y.title);
  std::vector<int> placed(plan.group_labels.size(), 0);
  const double zero = py(0);
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const PlotPoint& p = plan.points[i];
    const double left =
        f.plot_left + group_left[p.group] + placed[p.group]++ * (kBarWidth + kBarGap);
    const double top = std::min(zero, py(y.values[i]));
    const double height = std::fabs(py(y.values[i]) - zero);
    const Row& row = results.rows[p.row];
    out += "<rect class=\"bar\" data-series=\"" + MarkupEscape(plan.series_labels[p.series]) + "\" x=\"" +
           Px(left) + "\" y=\"" + Px(top) + "\" width=\"" + Px(kBarWidth) + "\" height=\"" +
           Px(height) + "\" fill=\"" + Colour(p.series) + "\"><title>" +
           MarkupEscape(PointName(results, axes, row) + ": " + y.labels[i]) + "</title></rect>\n";
  }
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    const double width = bars_in_group[g] * (kBarWidth + kBarGap) - kBarGap;
    const double centre = f.plot_left + group_left[g] + width / 2;
    const std::string tooltip = shown[g] == plan.group_labels[g]
                                    ? ""
                                    : "<title>" + MarkupEscape(plan.group_labels[g]) + "</title>";
    if (horizontal) {
      out += "<text x=\"" + Px(centre) + "\" y=\"" + Px(bottom + 17) +
             "\" text-anchor=\"middle\">" + tooltip + MarkupEscape(shown[g]) + "</text>\n";
    } else {
      const double ax = centre + 4;
      const double ay = bottom + 8;
      out += "<text x=\"" + Px(ax) + "\" y=\"" + Px(ay) +
             "\" text-anchor=\"end\" transform=\"rotate(-90 " + Px(ax) + " " + Px(ay) + ")\">" +
             tooltip + MarkupEscape(shown[g]) + "</text>\n";
    }
  }
  out += Text(f.plot_left + f.plot_width / 2, bottom + label_band + 15, "middle", x_title);

  if (legend) {
    for (size_t s = 0; s < plan.series_labels.size(); ++s) {
      const double ly = f.legend_y + s * kLegendRowPx + 9;
      out += "<g class=\"legend-entry\"><rect class=\"swatch\" x=\"" + Px(f.legend_x + 4) +
             "\" y=\"" + Px(ly - 6) + "\" width=\"12\" height=\"12\" fill=\"" +
             Colour(static_cast<int>(s)) + "\"/>";
      out += LegendText(f.legend_x + 28, ly + 4, plan.series_labels[s]);
      out += "</g>\n";
    }
  }
  return out + "</svg>\n";
}

constexpr std::string_view kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;color:#222;line-height:1.4}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:18px;margin:28px 0 8px}
code{font-size:13px;background:#f4f4f4;padding:1px 4px}
figure{margin:0 0 20px;overflow-x:auto}
svg.chart{display:block;background:#fff}
.note{color:#555}
.table-wrap{overflow-x:auto}
table.results{border-collapse:collapse;font-size:13px}
table.results th,table.results td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
table.results th{background:#f3f3f3;cursor:pointer;position:sticky;top:0}
table.results th[aria-sort=ascending]::after{content:" \25B2"}
table.results th[aria-sort=descending]::after{content:" \25BC"}
table.results td.num{text-align:right;font-variant-numeric:tabular-nums}
table.results td.error{white-space:pre-wrap;max-width:40em}
table.results tr.not-ok td{background:#fff3f0}
)";

// Sorts the table by a clicked column (numbers by value, empty cells last, ties in point order).
// The page reads the same without it.
constexpr std::string_view kScript = R"((function () {
  var table = document.getElementById('results');
  if (!table || !table.tHead || !table.tBodies.length) return;
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  var rows = Array.prototype.slice.call(body.rows);
  function compare(a, b) {
    if (a === b) return 0;
    if (a === '') return 1;
    if (b === '') return -1;
    var x = Number(a), y = Number(b);
    if (isFinite(x) && isFinite(y)) return x - y;
    return a < b ? -1 : 1;
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.tabIndex = 0;
    function sort() {
      var descending = th.getAttribute('aria-sort') === 'ascending';
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      var order = rows.map(function (row, index) { return [row, index, row.cells[col].textContent]; });
      order.sort(function (p, q) {
        var c = compare(p[2], q[2]);
        if (descending && p[2] !== '' && q[2] !== '') c = -c;
        return c !== 0 ? c : p[1] - q[1];
      });
      order.forEach(function (p) { body.appendChild(p[0]); });
    }
    th.addEventListener('click', sort);
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sort(); });
  });
})();
)";

std::string AxisSummary(const Axis& axis) {
  std::vector<std::string> values;
  for (const auto& [key, text] : axis.text_of_key)
    values.push_back(text.empty() ? "(empty)" : text);
  std::string out = "<li><b>" + MarkupEscape(axis.name) + "</b>: ";
  if (!axis.varies)
    return out + "constant, " + MarkupEscape(values.empty() ? "(no rows)" : values[0]) + "</li>\n";
  out += std::string(KindName(axis.kind)) + ", ";
  out += Plural(static_cast<int64_t>(values.size()), "value") + ": ";
  for (size_t i = 0; i < values.size() && i < 12; ++i)
    out += (i == 0 ? "" : ", ") + MarkupEscape(values[i]);
  if (values.size() > 12) out += ", \u2026";
  return out + "</li>\n";
}

std::string ChartsIntro(const std::vector<Axis>& axes, const Plan& plan) {
  auto names = [&](const std::vector<int>& list) {
    std::string out;
    for (size_t i = 0; i < list.size(); ++i) {
      out += (i == 0 ? "" : ", ") + std::string("<b>") + MarkupEscape(axes[list[i]].name) + "</b>";
    }
    return out;
  };
  std::string out = "<p>";
  if (!plan.bars) {
    out += "x axis: <b>" + MarkupEscape(axes[plan.x_axis].name) + "</b>";
    out += plan.series_axes.empty()
               ? "."
               : "; one line per combination of " + names(plan.series_axes) + ".";
  } else if (plan.group_axis >= 0) {
    out +=
        "No numeric axis varies, so the charts are bar charts: one bar per point, grouped by <b>" +
        MarkupEscape(axes[plan.group_axis].name) + "</b>";
    out += plan.series_axes.empty() ? "." : ", coloured by " + names(plan.series_axes) + ".";
  } else {
    out += "No axis varies, so the charts are bar charts with one bar per point.";
  }
  out += " Only ok points are plotted; hover a marker or bar for its values.</p>\n";
  return out;
}

std::string NotPlottedNote(const Plan& plan) {
  int64_t total = plan.missing_x;
  std::string reasons;
  for (int s = 0; s < kStatusCount; ++s) {
    if (plan.not_plotted[s] == 0) continue;
    total += plan.not_plotted[s];
    reasons += (reasons.empty() ? "" : ", ") + std::to_string(plan.not_plotted[s]) + " " +
               std::string(kStatuses[s]);
  }
  if (plan.missing_x > 0) {
    reasons += (reasons.empty() ? "" : ", ") + std::to_string(plan.missing_x) +
               " with no value on the x axis";
  }
  if (total == 0) return "";
  return "<p class=\"note\">" + Plural(total, "point") + (total == 1 ? " is" : " are") +
         " not plotted (" + reasons + "); see the table.</p>\n";
}

std::string ResultsTable(const Results& results, const std::vector<Axis>& axes) {
  const int columns = static_cast<int>(results.header.size());
  std::vector<bool> numeric(columns, false);
  numeric[0] = true;
  for (int a = 0; a < results.axis_count; ++a) numeric[1 + a] = IsNumeric(axes[a]);
  for (int m = 0; m < kNumericMetrics; ++m) numeric[1 + results.axis_count + m] = true;
  numeric[1 + results.axis_count + kWall] = true;
  const int error_column = 1 + results.axis_count + kError;

  std::string out =
      "<div class=\"table-wrap\">\n<table class=\"results\" id=\"results\">\n<thead><tr>";
  for (const std::string& name : results.header) {
    out += "<th title=\"sort by " + MarkupEscape(name) + "\">" + MarkupEscape(name) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const Row& row : results.rows) {
    out += row.status == kOk ? "<tr>" : "<tr class=\"not-ok\">";
    for (int c = 0; c < columns; ++c) {
      const std::string& cell = row.fields[c];
      std::string title;
      const int metric = c - 1 - results.axis_count;
      if (row.status == kOk && metric == kMakespan) title = HumanDuration(row.metric[kMakespan]);
      if (row.status == kOk && (metric == kPeakMemory || metric == kPeakMemory + 1)) {
        title = HumanBytes(row.metric[metric]);
      }
      out += "<td";
      if (numeric[c]) out += " class=\"num\"";
      if (c == error_column) out += " class=\"error\"";
      if (!title.empty()) out += " title=\"" + MarkupEscape(title) + "\"";
      out += ">" + MarkupEscape(cell) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</div>\n";
}

std::string Page(const Results& results, const std::vector<Axis>& axes, const Plan& plan,
                 const std::string& source, const std::vector<std::string>& charts) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>ppsim "
      "report: " +
      MarkupEscape(source) + "</title>\n<style>\n" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<h1>ppsim sweep report</h1>\n";
  out += "<p>Results from <code>" + MarkupEscape(source) + "</code>: ";
  if (results.rows.empty()) {
    out += "no points (the file has a header and no rows).</p>\n";
  } else {
    int64_t by_status[kStatusCount] = {};
    for (const Row& row : results.rows) ++by_status[row.status];
    std::string counts;
    for (int s = 0; s < kStatusCount; ++s) {
      if (by_status[s] == 0) continue;
      counts += (counts.empty() ? "" : ", ") + std::to_string(by_status[s]) + " " +
                std::string(kStatuses[s]);
    }
    out += Plural(static_cast<int64_t>(results.rows.size()), "point") + " (" + counts + ").</p>\n";
  }
  if (axes.empty()) {
    out += "<p>No swept axes.</p>\n";
  } else {
    out += "<p>Swept axes:</p>\n<ul class=\"axes\">\n";
    for (const Axis& axis : axes) out += AxisSummary(axis);
    out += "</ul>\n";
  }
  out += "<h2>Charts</h2>\n";
  if (charts.empty()) {
    out += "<p>Nothing to plot: no point finished ok.</p>\n";
  } else {
    out += ChartsIntro(axes, plan);
    for (const std::string& chart : charts) out += "<figure>\n" + chart + "</figure>\n";
  }
  out += NotPlottedNote(plan);
  out += "<h2>Results</h2>\n";
  out +=
      "<p class=\"note\">Every row of the file; not-ok rows are shaded. Click a column heading "
      "to sort (needs JavaScript).</p>\n";
  out += ResultsTable(results, axes);
  out += "<script>\n" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace

Status RenderHtmlReport(std::string_view csv_text, const std::string& source, std::string* html,
                        HtmlReportSummary* summary) {
  Results results;
  Status status = ParseResults(csv_text, source, &results);
  if (!status.ok()) return status;
  const std::vector<Axis> axes = ClassifyAxes(results);
  const Plan plan = MakePlan(results, axes);
  std::vector<std::string> charts;
  if (!plan.points.empty()) {
    for (const ChartMetric& chart : kCharts) {
      charts.push_back(plan.bars ? BarChart(results, axes, plan, chart)
                                 : LineChart(results, axes, plan, chart));
    }
  }
  *html = Page(results, axes, plan, source, charts);
  if (summary != nullptr) {
    summary->points = static_cast<int64_t>(results.rows.size());
    summary->plotted = static_cast<int64_t>(plan.points.size());
    summary->charts = static_cast<int32_t>(charts.size());
  }
  return Status();
}

}  // namespace ppsim
