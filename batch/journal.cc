#include "batch/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/files.h"
#include "base/escape.h"
#include "base/numbers.h"
#include "batch/results.h"

namespace ppsim {
namespace {

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// `header` and the rows as a CSV file and a JSON lines file, each written whole. The JSON lines
// go first: a CSV row without its JSON line is run again on --resume.
Status WriteRows(const std::string& header, const JournalRows& rows, const std::string& csv_path,
                 const std::string& json_path) {
  std::string csv_text = header + "\n";
  std::string json_text;
  for (const auto& [point, row] : rows.csv) csv_text += row + "\n";
  for (const auto& [point, line] : rows.json) json_text += line + "\n";
  Status status = WriteWholeFile("", json_path, json_text);
  if (status.ok()) status = WriteWholeFile("", csv_path, csv_text);
  return status;
}

}  // namespace

std::string JsonLinesPath(const std::string& csv_path) {
  if (csv_path.size() > 4 && csv_path.ends_with(".csv")) {
    return csv_path.substr(0, csv_path.size() - 4) + ".jsonl";
  }
  return csv_path + ".jsonl";
}

Journal::Journal(std::string csv_path, const Locator& options)
    : csv_path_(std::move(csv_path)), options_(options), json_path_(JsonLinesPath(csv_path_)) {}

Journal::~Journal() {
  if (csv_fd_ >= 0) ::close(csv_fd_);
  if (json_fd_ >= 0) ::close(json_fd_);
}

bool Journal::exists() const { return Exists(csv_path_ + ".partial"); }

Status Journal::Load(const std::string& header, int64_t points, bool retry_failed,
                     const std::function<const std::vector<std::string>&(int64_t)>& values_of,
                     const std::function<std::string(int64_t)>& describe, JournalRows* rows,
                     std::vector<std::string>* dropped) const {
  *rows = JournalRows();
  const bool journal = exists();
  const std::string from = journal ? csv_path_ + ".partial" : csv_path_;
  const std::string json_from = journal ? json_path_ + ".partial" : json_path_;
  std::string csv_text;
  if (!Exists(from)) return Status();
  RETURN_IF_ERROR(ReadFile(from, &csv_text, kMaxResultsBytes, "results"));
  if (csv_text.empty()) return Status();
  const std::string first_line = csv_text.substr(0, csv_text.find('\n'));
  if (first_line != header && first_line != header + "\r") {
    return Status::InvalidInput(from +
                                ":1: its columns are not this experiment's; start over "
                                "without " +
                                options_.Name("resume") + " (expected: " + Printable(header) + ")");
  }
  ResultsTable table;
  RETURN_IF_ERROR(ReadResultsCsv(csv_text, from, &table, dropped));
  std::string json_text;
  if (Exists(json_from)) {
    RETURN_IF_ERROR(ReadFile(json_from, &json_text, kMaxResultsBytes, "results"));
  }
  std::vector<std::string> axes = table.Axes();
  std::vector<ResultJsonRow> json_rows;
  RETURN_IF_ERROR(ReadResultsJsonLines(json_text, json_from, &axes, &json_rows, dropped));
  std::map<int64_t, const ResultJsonRow*> json_of;
  for (const ResultJsonRow& row : json_rows) json_of[row.point] = &row;
  for (const ResultRow& row : table.rows) {
    const std::string where = from + ":" + std::to_string(row.line) + ": ";
    if (row.point >= points) {
      dropped->push_back(where + "point " + std::to_string(row.point) + " is not in this "
                         "experiment's " + std::to_string(points) + " points");
      continue;
    }
    const std::vector<std::string>& values = values_of(row.point);
    if (!std::equal(values.begin(), values.end(), row.fields.begin() + 1)) {
      return Status::InvalidInput(
          where + "point " + std::to_string(row.point) + " is not (" + describe(row.point) +
          ") in this experiment; start over without " + options_.Name("resume"));
    }
    const auto json = json_of.find(row.point);
    if (json == json_of.end() || json->second->status != row.status) {
      dropped->push_back(where + "point " + std::to_string(row.point) +
                         " has no matching line in " + json_from);
      continue;
    }
    if (retry_failed && IsFailure(row.status)) continue;
    rows->csv[row.point] = table.CsvLine(row);
    rows->json[row.point] = json->second->text;
  }
  return Status();
}

Status Journal::Start(const std::string& header, const JournalRows& rows) {
  RETURN_IF_ERROR(WriteRows(header, rows, csv_path_ + ".partial", json_path_ + ".partial"));
  for (auto [path, fd] : {std::pair{csv_path_ + ".partial", &csv_fd_},
                          std::pair{json_path_ + ".partial", &json_fd_}}) {
    *fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (*fd < 0) return Status::InvalidInput(path + ": cannot write: " + std::strerror(errno));
  }
  return Status();
}

Status Journal::Append(const std::string& csv_line, const std::string& json_line) {
  // The JSON line first: a CSV row without it is run again on --resume.
  if (!WriteAll(json_fd_, json_line + "\n")) {
    return Status::InvalidInput(json_path_ + ".partial: cannot write: " + std::strerror(errno) +
                                "; the sweep stopped, and " + options_.Name("resume") +
                                " continues it");
  }
  if (!WriteAll(csv_fd_, csv_line + "\n")) {
    return Status::InvalidInput(csv_path_ + ".partial: cannot write: " + std::strerror(errno) +
                                "; the sweep stopped, and " + options_.Name("resume") +
                                " continues it");
  }
  return Status();
}

Status Journal::Finish(const std::string& header, const JournalRows& rows) {
  RETURN_IF_ERROR(WriteRows(header, rows, csv_path_, json_path_));
  std::remove((csv_path_ + ".partial").c_str());
  std::remove((json_path_ + ".partial").c_str());
  return Status();
}

}  // namespace ppsim
