#include "batch/results.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/csv.h"
#include "base/escape.h"
#include "base/json.h"
#include "base/names.h"
#include "base/numbers.h"

namespace ppsim {
namespace {

constexpr std::string_view kStatusNames[] = {"ok", "failed", "skipped", "timeout", "crashed"};

constexpr size_t kMaxErrors = 20;
constexpr int kMaxJsonDepth = 64;

// "a results CSV has point, the swept axes, then makespan_s, ..., wall_s": what a header holds.
std::string ValidHeader() {
  std::string text = "a results CSV has point, the swept axes, then ";
  for (int c = 0; c < kResultColumnCount; ++c) {
    text += (c ? ", " : "") + std::string(kResultColumns[c].name);
  }
  return text;
}

// "tokens_per_s, mfu, ... and cost": the columns an ok row may leave empty.
std::string OptionalColumns() {
  std::vector<std::string> names;
  for (const ResultColumnInfo& c : kResultColumns) {
    if (c.role == ColumnRole::kOptionalMetric) names.emplace_back(c.name);
  }
  std::string text;
  for (size_t n = 0; n < names.size(); ++n) {
    text += (n == 0 ? "" : n + 1 == names.size() ? " and " : ", ") + names[n];
  }
  return text;
}

std::string Where(const std::string& source, int64_t line) {
  return source + ":" + std::to_string(line) + ": ";
}

// Bad rows: errors, or (with `dropped`) rows left out. Joins the errors into one status.
class Problems {
 public:
  Problems(const std::string& source, std::vector<std::string>* dropped)
      : source_(source), dropped_(dropped) {}

  void Add(std::string message) {
    if (dropped_ != nullptr) {
      dropped_->push_back(std::move(message));
    } else if (errors_.size() < kMaxErrors) {
      errors_.push_back(std::move(message));
    } else {
      ++more_;
    }
  }

  Status ToStatus() const {
    if (errors_.empty()) return Status();
    std::string message;
    for (const std::string& e : errors_) message += (message.empty() ? "" : "\n") + e;
    if (more_ > 0) message += "\n" + source_ + ": " + Plural(more_, "more bad row") + " not shown";
    return Status::InvalidInput(message);
  }

 private:
  const std::string& source_;
  std::vector<std::string>* dropped_;
  std::vector<std::string> errors_;
  int64_t more_ = 0;
};

Status CheckHeader(const CsvRecord& header, const std::string& source, int* axis_count) {
  const std::string where = Where(source, header.line);
  const std::string valid = "; " + ValidHeader();
  const std::vector<std::string>& f = header.fields;
  if (f[0] != "point") {
    return Status::InvalidInput(where + "first column is " + Quoted(f[0]) + ", expected 'point'" +
                                valid);
  }
  const auto makespan = std::find(f.begin() + 1, f.end(), kResultColumns[kMakespanColumn].name);
  if (makespan == f.end())
    return Status::InvalidInput(where + "missing column 'makespan_s'" + valid);
  const size_t first_metric = makespan - f.begin();
  for (int m = 0; m < kResultColumnCount; ++m) {
    const size_t column = first_metric + m;
    const std::string name(kResultColumns[m].name);
    if (column < f.size() && f[column] == name) continue;
    const bool present = std::find(f.begin(), f.end(), name) != f.end();
    if (!present || column >= f.size()) {
      return Status::InvalidInput(where + "missing column '" + name + "'" + valid);
    }
    return Status::InvalidInput(where + "column " + std::to_string(column + 1) + " is '" +
                                Printable(f[column]) + "', expected '" + name + "'" + valid);
  }
  if (f.size() > first_metric + kResultColumnCount) {
    return Status::InvalidInput(where + "unexpected column '" +
                                Printable(f[first_metric + kResultColumnCount]) + "' after wall_s" +
                                valid);
  }
  for (size_t a = 1; a < first_metric; ++a) {
    if (f[a].empty()) {
      return Status::InvalidInput(where + "column " + std::to_string(a + 1) +
                                  " has no name; an axis column is named for the field it sweeps");
    }
  }
  std::map<std::string, size_t> first_of;
  for (size_t j = 0; j < f.size(); ++j) {
    const auto [it, inserted] = first_of.emplace(f[j], j);
    if (!inserted) {
      return Status::InvalidInput(where + "column " + std::to_string(j + 1) + " '" +
                                  Printable(f[j]) + "' repeats column " +
                                  std::to_string(it->second + 1) + "; each column appears once");
    }
  }
  *axis_count = static_cast<int>(first_metric) - 1;
  return Status();
}

// The first problem of the row, or "".
std::string CheckRow(const ResultsTable& table, const CsvRecord& record, const std::string& source,
                     ResultRow* row) {
  const std::string where = Where(source, record.line);
  const size_t expected = table.header.size();
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
  const std::string& status = table.Cell(*row, kStatusColumn);
  if (!ParsePointStatus(status, &row->status)) {
    return where + "status '" + Printable(status) +
           "' is not valid; valid: ok, failed, skipped, timeout, crashed";
  }
  const bool ok = row->status == PointStatus::kOk;
  const std::string& wall = table.Cell(*row, kWallColumn);
  double wall_s;
  if (!ParseFinite(wall, &wall_s) && !(wall.empty() && !ok)) {
    return where + "wall_s '" + Printable(wall) +
           "' is not a number; wall_s is the run's wall-clock seconds";
  }
  if (!ok) return "";
  for (int c = 0; c < kResultColumnCount; ++c) {
    if (!IsMetric(c)) continue;
    const std::string problem = ReadMetricCell(c, table.Cell(*row, c), &row->values[c]);
    if (!problem.empty()) return where + problem;
  }
  const std::string& oom = table.Cell(*row, kOomColumn);
  if (oom != "true" && oom != "false") {
    return where + "oom '" + Printable(oom) + "' is not valid; valid: true, false";
  }
  row->oom = oom == "true";
  return "";
}

// The first problem of a JSON line, or "".
std::string CheckJsonLine(std::string_view text, std::vector<std::string>* axes,
                          ResultJsonRow* row) {
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    return "nested more than " + std::to_string(kMaxJsonDepth) + " deep; a results line is flat";
  }
  const nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return "not valid JSON; each line is one JSON object";
  if (!value.is_object()) return "not a JSON object; each line is one JSON object";
  const auto point = value.find("point");
  if (point == value.end() || !point->is_number_integer() || point->get<int64_t>() < 0) {
    return "\"point\" is not a whole number >= 0";
  }
  row->point = point->get<int64_t>();
  const auto values = value.find("values");
  if (values == value.end() || !values->is_object()) return "\"values\" is not an object";
  // nlohmann::json keeps keys sorted; the order is checked on the text.
  std::vector<std::string> keys;
  for (const auto& [key, v] : values->items()) {
    if (!v.is_string()) return "values[" + Quoted(key) + "] is not a string";
    keys.push_back(key);
  }
  std::vector<std::string> expected = *axes;
  std::sort(expected.begin(), expected.end());
  if (axes->empty() && !keys.empty()) {
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text);
    for (const auto& [key, v] : ordered["values"].items()) axes->push_back(key);
  } else if (keys != expected) {
    return "\"values\" are not this sweep's axes";
  }
  const auto status = value.find("status");
  if (status == value.end() || !status->is_string() ||
      !ParsePointStatus(status->get<std::string>(), &row->status)) {
    return "\"status\" is not one of ok, failed, skipped, timeout, crashed";
  }
  const auto error = value.find("error");
  if (error == value.end() || !error->is_string()) return "\"error\" is not a string";
  const auto wall = value.find("wall_s");
  if (wall == value.end() || !wall->is_number()) return "\"wall_s\" is not a number";
  const auto result = value.find("result");
  const bool ok = row->status == PointStatus::kOk;
  if (ok != (result != value.end())) return "\"result\" is there exactly when status is ok";
  if (ok && !result->is_object()) return "\"result\" is not an object";
  row->text = std::string(text);
  return "";
}

}  // namespace

std::string_view PointStatusName(PointStatus status) {
  return kStatusNames[static_cast<int>(status)];
}

bool ParsePointStatus(std::string_view name, PointStatus* status) {
  for (int s = 0; s < kPointStatusCount; ++s) {
    if (name == kStatusNames[s]) {
      *status = static_cast<PointStatus>(s);
      return true;
    }
  }
  return false;
}

bool IsFailure(PointStatus status) {
  return status == PointStatus::kFailed || status == PointStatus::kTimeout ||
         status == PointStatus::kCrashed;
}

std::string ResultsHeader(const std::vector<std::string>& axes) {
  std::string header = "point";
  for (const std::string& axis : axes) header += "," + CsvField(axis);
  for (const ResultColumnInfo& column : kResultColumns) header += "," + std::string(column.name);
  return header;
}

std::string ReadMetricCell(int column, const std::string& cell, std::optional<double>* value) {
  const std::string name(kResultColumns[column].name);
  double number;
  if (ParseFinite(cell, &number)) {
    *value = number;
    return "";
  }
  value->reset();
  if (kResultColumns[column].role == ColumnRole::kMetric) {
    return name + " '" + Printable(cell) +
           "' is not a number; an ok row has a number in each metric column but " +
           OptionalColumns() + ", which may be empty";
  }
  if (cell.empty()) return "";
  return name + " '" + Printable(cell) + "' is not a number; " + name +
         " is a number, or empty when the run has none";
}

double MicrobatchesPerS(int64_t microbatches, int64_t dp, double makespan_s) {
  return makespan_s > 0 ? static_cast<double>(microbatches) * static_cast<double>(dp) / makespan_s
                        : 0;
}

std::string SerializePointOutcome(const PointOutcome& o) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (int c = 0; c < kResultColumnCount; ++c) {
    if (!IsMetric(c)) continue;
    const std::string name(kResultColumns[c].name);
    values[name] = o.values[c] ? nlohmann::ordered_json(*o.values[c]) : nullptr;
  }
  nlohmann::ordered_json json = {
      {"status", PointStatusName(o.status)},
      {"error", o.error},
      {"wall_s", o.wall_s},
      {"values", values},
      {"oom", o.oom},
  };
  // dump() escapes every line break inside strings: the first one ends the JSON.
  return json.dump() + "\n" + o.result;
}

bool ParsePointOutcome(std::string_view text, PointOutcome* o) {
  const size_t end = text.find('\n');
  if (end == std::string_view::npos) return false;
  const std::string_view result = text.substr(end + 1);
  const nlohmann::ordered_json json =
      nlohmann::ordered_json::parse(text.substr(0, end), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return false;
  try {
    if (!ParsePointStatus(json.at("status").get<std::string>(), &o->status)) return false;
    o->error = json.at("error").get<std::string>();
    o->wall_s = json.at("wall_s").get<double>();
    const auto& values = json.at("values");
    for (int c = 0; c < kResultColumnCount; ++c) {
      o->values[c].reset();
      if (!IsMetric(c)) continue;
      const auto& value = values.at(std::string(kResultColumns[c].name));
      if (value.is_number()) {
        o->values[c] = value.get<double>();
        continue;
      }
      // An ok point has every kMetric value; null is "none" anywhere else.
      const bool required =
          o->status == PointStatus::kOk && kResultColumns[c].role == ColumnRole::kMetric;
      if (!value.is_null() || required) return false;
    }
    o->oom = json.at("oom").get<bool>();
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  // An ok point's result is an object (whole: the process exited 0 after writing it).
  if (o->status == PointStatus::kOk &&
      (result.size() < 2 || result.front() != '{' || result.back() != '}')) {
    return false;
  }
  o->result = std::string(result);
  return true;
}

std::string ResultCsvLine(int64_t point, const std::vector<std::string>& values,
                          const PointOutcome& o) {
  std::string row = std::to_string(point);
  for (const std::string& value : values) row += "," + CsvField(value);
  const bool ok = o.status == PointStatus::kOk;
  for (int c = 0; c < kStatusColumn; ++c) {
    row += ",";
    if (!ok) continue;
    if (c == kOomColumn) {
      row += o.oom ? "true" : "false";
    } else if (o.values[c]) {
      row += FormatNumber(*o.values[c]);
    }
  }
  return row + "," + std::string(PointStatusName(o.status)) + "," + CsvField(o.error) + "," +
         FormatNumber(o.wall_s);
}

std::string ResultJsonLine(int64_t point, const std::vector<std::string>& axes,
                           const std::vector<std::string>& values, const PointOutcome& o) {
  nlohmann::ordered_json json;
  json["point"] = point;
  json["values"] = nlohmann::ordered_json::object();
  for (size_t c = 0; c < axes.size(); ++c) json["values"][axes[c]] = values[c];
  json["status"] = PointStatusName(o.status);
  json["error"] = o.error;
  json["wall_s"] = JsonNumber(o.wall_s);
  std::string line = FormatJsonCompact(json);
  if (o.status == PointStatus::kOk) {
    // The compact layout's last member, the result as the point's process laid it out.
    line.pop_back();
    line += ", \"result\": " + (o.result.empty() ? std::string("null") : o.result) + "}";
  }
  return line;
}

std::string ResultsTable::CsvLine(const ResultRow& row) const {
  std::string line;
  for (size_t f = 0; f < row.fields.size(); ++f) line += (f ? "," : "") + CsvField(row.fields[f]);
  return line;
}

Status ReadResultsCsv(std::string_view text, const std::string& source, ResultsTable* table,
                      std::vector<std::string>* dropped) {
  *table = ResultsTable();
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  if (text.empty()) {
    return Status::InvalidInput(source + ":1: empty file; " + ValidHeader());
  }
  std::vector<CsvRecord> records;
  Status status = ReadCsv(text, source, &records);
  Problems problems(source, dropped);
  if (!status.ok()) {
    if (dropped == nullptr || records.size() < 2) return status;
    problems.Add(status.message() + " (the rest is read again)");
  } else if (dropped != nullptr && !text.ends_with('\n') && records.size() > 1) {
    problems.Add(Where(source, records.back().line) + "torn last line (no line break)");
    records.pop_back();
  }
  RETURN_IF_ERROR(CheckHeader(records[0], source, &table->axis_count));
  table->header = records[0].fields;
  std::map<int64_t, int64_t> line_of_point;
  for (size_t r = 1; r < records.size(); ++r) {
    ResultRow row;
    std::string error = CheckRow(*table, records[r], source, &row);
    if (error.empty()) {
      const auto [it, inserted] = line_of_point.emplace(row.point, row.line);
      if (!inserted) {
        error = Where(source, row.line) + "point " + std::to_string(row.point) + " repeats line " +
                std::to_string(it->second) + "; each point appears once";
      }
    }
    if (error.empty()) {
      table->rows.push_back(std::move(row));
    } else {
      problems.Add(std::move(error));
    }
  }
  status = problems.ToStatus();
  if (!status.ok()) {
    *table = ResultsTable();
    return status;
  }
  std::stable_sort(table->rows.begin(), table->rows.end(),
                   [](const ResultRow& a, const ResultRow& b) { return a.point < b.point; });
  return Status();
}

namespace {

// The run CSV's columns a results table is made of, beside the metric columns of the same name.
constexpr std::string_view kRunCsvKeys[] = {"schedule", "microbatches", "dp", "oom_ranks"};

// The metric columns a run CSV has under the same name: all but the sweep's own two.
bool InRunCsv(int column) {
  return IsMetric(column) && column != kThroughputColumn && column != kStaticMemoryColumn;
}

std::string ValidRunHeader() {
  std::string text = "a run CSV (a run's CSV output) has ";
  for (std::string_view key : kRunCsvKeys) text += std::string(key) + ", ";
  std::string metrics;
  for (int c = 0; c < kResultColumnCount; ++c) {
    if (InRunCsv(c)) metrics += (metrics.empty() ? "" : ", ") + std::string(kResultColumns[c].name);
  }
  return text + metrics;
}

// A run CSV's row as a results row: the first problem, or "".
std::string RunRow(const std::vector<int>& key_at, const std::vector<int>& metric_at, size_t fields,
                   const CsvRecord& record, int64_t point, const std::string& source,
                   ResultRow* row) {
  const std::string where = Where(source, record.line);
  const std::vector<std::string>& f = record.fields;
  if (f.size() != fields) {
    return where + Plural(static_cast<int64_t>(f.size()), "field") + ", expected " +
           std::to_string(fields);
  }
  int64_t whole[std::size(kRunCsvKeys)] = {};
  for (size_t k = 1; k < std::size(kRunCsvKeys); ++k) {
    if (!ParseWhole(f[key_at[k]], &whole[k]) || whole[k] < 0) {
      return where + std::string(kRunCsvKeys[k]) + " '" + Printable(f[key_at[k]]) +
             "' is not a whole number >= 0";
    }
  }
  row->line = record.line;
  row->point = point;
  row->status = PointStatus::kOk;
  row->fields = {std::to_string(point), f[key_at[0]]};
  for (int c = 0; c < kResultColumnCount; ++c) {
    std::string cell;
    if (InRunCsv(c)) {
      cell = f[metric_at[c]];
      const std::string problem = ReadMetricCell(c, cell, &row->values[c]);
      if (!problem.empty()) return where + problem;
    } else if (c == kThroughputColumn) {
      row->values[c] = MicrobatchesPerS(whole[1], whole[2], *row->values[kMakespanColumn]);
      cell = FormatNumber(*row->values[c]);
    } else if (c == kOomColumn) {
      row->oom = whole[3] > 0;
      cell = row->oom ? "true" : "false";
    } else if (c == kStatusColumn) {
      cell = "ok";
    }
    row->fields.push_back(cell);
  }
  return "";
}

}  // namespace

Status ReadRunCsv(std::string_view text, const std::string& source, ResultsTable* table) {
  *table = ResultsTable();
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<CsvRecord> records;
  RETURN_IF_ERROR(ReadCsv(text, source, &records));
  if (records.empty()) {
    return Status::InvalidInput(source + ":1: empty file; " + ValidRunHeader());
  }
  const std::vector<std::string>& header = records[0].fields;
  auto find = [&](std::string_view name, int* at) {
    const auto it = std::find(header.begin(), header.end(), name);
    *at = static_cast<int>(it - header.begin());
    if (it != header.end()) return Status();
    return Status::InvalidInput(Where(source, records[0].line) + "missing column '" +
                                std::string(name) + "'; " + ValidRunHeader());
  };
  std::vector<int> key_at(std::size(kRunCsvKeys));
  std::vector<int> metric_at(kResultColumnCount, -1);
  for (size_t k = 0; k < std::size(kRunCsvKeys); ++k) {
    RETURN_IF_ERROR(find(kRunCsvKeys[k], &key_at[k]));
  }
  for (int c = 0; c < kResultColumnCount; ++c) {
    if (!InRunCsv(c)) continue;
    RETURN_IF_ERROR(find(kResultColumns[c].name, &metric_at[c]));
  }
  ResultsTable read;
  read.header = {"point", "schedule"};
  for (const ResultColumnInfo& column : kResultColumns) read.header.emplace_back(column.name);
  read.axis_count = 1;
  Problems problems(source, nullptr);
  for (size_t r = 1; r < records.size(); ++r) {
    ResultRow row;
    std::string error = RunRow(key_at, metric_at, header.size(), records[r],
                               static_cast<int64_t>(r - 1), source, &row);
    if (error.empty()) {
      read.rows.push_back(std::move(row));
    } else {
      problems.Add(std::move(error));
    }
  }
  Status status = problems.ToStatus();
  if (status.ok()) *table = std::move(read);
  return status;
}

Status ReadResultsJsonLines(std::string_view text, const std::string& source,
                            std::vector<std::string>* axes, std::vector<ResultJsonRow>* rows,
                            std::vector<std::string>* dropped) {
  rows->clear();
  Problems problems(source, dropped);
  int64_t line = 0;
  size_t start = 0;
  while (start < text.size()) {
    ++line;
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (dropped != nullptr) {
        problems.Add(Where(source, line) + "torn last line (no line break)");
        break;
      }
      end = text.size();
    }
    ResultJsonRow row;
    row.line = line;
    const std::string error = CheckJsonLine(text.substr(start, end - start), axes, &row);
    if (error.empty()) {
      rows->push_back(std::move(row));
    } else {
      problems.Add(Where(source, line) + error);
    }
    start = end + 1;
  }
  Status status = problems.ToStatus();
  if (!status.ok()) rows->clear();
  return status;
}

}  // namespace ppsim
