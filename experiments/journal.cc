#include "experiments/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/files.h"
#include "base/numbers.h"

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

bool ReadWholeLines(const std::string& path, std::vector<std::string>* lines) {
  std::string text;
  if (!ReadFile(path, &text).ok()) return false;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    lines->push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return true;
}

int64_t ResultLinePoint(const std::string& line, bool json) {
  const std::string key = "{\"point\": ";
  if (json && line.rfind(key, 0) != 0) return -1;
  const size_t offset = json ? key.size() : 0;
  const size_t end = line.find_first_not_of("0123456789", offset);
  int64_t point = -1;
  if (!ParseWhole(std::string_view(line).substr(offset, end - offset), &point)) return -1;
  return point;
}

std::string JsonLinesPath(const std::string& csv_path) {
  if (csv_path.size() > 4 && csv_path.ends_with(".csv")) {
    return csv_path.substr(0, csv_path.size() - 4) + ".jsonl";
  }
  return csv_path + ".jsonl";
}

Journal::Journal(std::string csv_path)
    : csv_path_(std::move(csv_path)), json_path_(JsonLinesPath(csv_path_)) {}

Journal::~Journal() {
  if (csv_fd_ >= 0) ::close(csv_fd_);
  if (json_fd_ >= 0) ::close(json_fd_);
}

bool Journal::exists() const { return Exists(csv_path_ + ".partial"); }

Status Journal::Load(const std::string& header, int64_t points,
                     const std::function<std::string(int64_t)>& row_prefix,
                     const std::function<std::string(int64_t)>& describe,
                     JournalRows* rows) const {
  *rows = JournalRows();
  const bool journal = exists();
  const std::string from = journal ? csv_path_ + ".partial" : csv_path_;
  const std::string json_from = journal ? json_path_ + ".partial" : json_path_;
  std::vector<std::string> lines;
  if (!ReadWholeLines(from, &lines) || lines.empty()) return Status();
  if (lines[0] != header) {
    return Status::InvalidInput(from + ":1: its columns are not this experiment's; start over "
                                "without --resume (expected: " + header + ")");
  }
  std::vector<std::string> json_lines;
  if (!ReadWholeLines(json_from, &json_lines)) json_lines.clear();
  std::map<int64_t, std::string> json_by_point;
  for (const std::string& line : json_lines) json_by_point[ResultLinePoint(line, true)] = line;
  for (size_t i = 1; i < lines.size(); ++i) {
    const int64_t point = ResultLinePoint(lines[i], false);
    // Rows without their JSON line are run again.
    if (point < 0 || point >= points || json_by_point.count(point) == 0) continue;
    if (lines[i].rfind(row_prefix(point) + ",", 0) != 0) {
      return Status::InvalidInput(from + ":" + std::to_string(i + 1) + ": point " +
                                  std::to_string(point) + " is not (" + describe(point) +
                                  ") in this experiment; start over without --resume");
    }
    rows->csv[point] = lines[i];
    rows->json[point] = json_by_point[point];
  }
  return Status();
}

Status Journal::Start(const std::string& header, const JournalRows& rows) {
  Status status = WriteRows(header, rows, csv_path_ + ".partial", json_path_ + ".partial");
  if (!status.ok()) return status;
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
                                "; the sweep stopped, and --resume continues it");
  }
  if (!WriteAll(csv_fd_, csv_line + "\n")) {
    return Status::InvalidInput(csv_path_ + ".partial: cannot write: " + std::strerror(errno) +
                                "; the sweep stopped, and --resume continues it");
  }
  return Status();
}

Status Journal::Finish(const std::string& header, const JournalRows& rows) {
  Status status = WriteRows(header, rows, csv_path_, json_path_);
  if (!status.ok()) return status;
  std::remove((csv_path_ + ".partial").c_str());
  std::remove((json_path_ + ".partial").c_str());
  return Status();
}

}  // namespace ppsim
