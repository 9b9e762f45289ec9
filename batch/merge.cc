#include "batch/merge.h"

#include <map>

#include "base/csv.h"
#include "base/files.h"
#include "batch/results.h"

namespace ppsim {
namespace {

// Where each point was read: "FILE:LINE".
using Origins = std::map<int64_t, std::string>;

Status AddPoint(const std::string& input, int64_t line, int64_t point, std::string text,
                std::map<int64_t, std::string>* rows, Origins* from) {
  const std::string here = input + ":" + std::to_string(line);
  const auto [it, inserted] = from->emplace(point, here);
  if (!inserted) {
    return Status::InvalidInput(here + ": point " + std::to_string(point) + " is also in " +
                                it->second + "; give each shard's output once");
  }
  (*rows)[point] = std::move(text);
  return Status();
}

// "point 3 missing", "points 3, 4, 9 missing", "points 0, 1, ... (10^18 in all) missing": gaps are
// counted, not walked, so a point numbered 10^18 is one line to read, not 10^18 steps.
std::string Missing(const std::map<int64_t, std::string>& rows) {
  constexpr int64_t kShown = 10;
  std::string missing;
  int64_t expected = 0;
  int64_t count = 0;
  for (const auto& [point, row] : rows) {
    for (int64_t gap = expected; gap < point && count + (gap - expected) < kShown; ++gap) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(gap);
    }
    count += point - expected;
    expected = point + 1;
  }
  if (count == 0) return "";
  return "ppsim merge: point" + std::string(count > 1 ? "s " : " ") + missing +
         (count > kShown ? ", ... (" + std::to_string(count) + " in all)" : "") +
         " missing; give every shard's output";
}

}  // namespace

Status MergeResults(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) return Status::InvalidInput("ppsim merge: no input files");
  const bool json = output.ends_with(".jsonl");
  std::vector<std::string> header;
  std::vector<std::string> axes;
  std::map<int64_t, std::string> rows;
  Origins from;
  for (const std::string& input : inputs) {
    std::string text;
    RETURN_IF_ERROR(ReadFile(input, &text, kMaxResultsBytes, "results"));
    if (json) {
      std::vector<ResultJsonRow> lines;
      RETURN_IF_ERROR(ReadResultsJsonLines(text, input, &axes, &lines));
      for (ResultJsonRow& line : lines) {
        RETURN_IF_ERROR(AddPoint(input, line.line, line.point, std::move(line.text), &rows, &from));
      }
      continue;
    }
    ResultsTable table;
    RETURN_IF_ERROR(ReadResultsCsv(text, input, &table));
    if (header.empty()) header = table.header;
    if (table.header != header) {
      return Status::InvalidInput(input + ":1: its columns differ from " + inputs[0] +
                                  "'s; merge shards of one experiment");
    }
    for (const ResultRow& row : table.rows) {
      RETURN_IF_ERROR(AddPoint(input, row.line, row.point, table.CsvLine(row), &rows, &from));
    }
  }
  const std::string missing = Missing(rows);
  if (!missing.empty()) return Status::InvalidInput(missing);
  std::string text;
  if (!json) {
    for (size_t c = 0; c < header.size(); ++c) text += (c ? "," : "") + CsvField(header[c]);
    text += "\n";
  }
  for (const auto& [point, row] : rows) text += row + "\n";
  return WriteWholeFile("", output, text);
}

}  // namespace ppsim
