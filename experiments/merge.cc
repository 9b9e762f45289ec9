#include "experiments/merge.h"

#include <cerrno>
#include <cstring>
#include <map>

#include "base/files.h"
#include "experiments/journal.h"

namespace ppsim {

Status MergeResults(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) return Status::InvalidInput("ppsim merge: no input files");
  const bool json = output.ends_with(".jsonl");
  std::string header;
  std::map<int64_t, std::string> rows;
  std::map<int64_t, std::string> from;
  for (const std::string& input : inputs) {
    std::vector<std::string> lines;
    if (!ReadWholeLines(input, &lines)) {
      return Status::InvalidInput(input + ": cannot read: " + std::strerror(errno));
    }
    size_t first = 0;
    if (!json) {
      if (lines.empty()) return Status::InvalidInput(input + ": empty; expected a results CSV");
      if (header.empty()) header = lines[0];
      if (lines[0] != header) {
        return Status::InvalidInput(input + ":1: its columns differ from " + inputs[0] +
                                    "'s; merge shards of one experiment");
      }
      first = 1;
    }
    for (size_t i = first; i < lines.size(); ++i) {
      const int64_t point = ResultLinePoint(lines[i], json);
      if (point < 0) {
        return Status::InvalidInput(input + ":" + std::to_string(i + 1) +
                                    ": not a result line (it should start with the point)");
      }
      if (rows.count(point)) {
        return Status::InvalidInput(input + ":" + std::to_string(i + 1) + ": point " +
                                    std::to_string(point) + " is also in " + from[point]);
      }
      rows[point] = lines[i];
      from[point] = input;
    }
  }
  // Gaps are counted, not walked: a point numbered 10^18 is one line to read, not 10^18 steps.
  std::string missing;
  int64_t expected = 0;
  int64_t missing_count = 0;
  for (const auto& [point, row] : rows) {
    for (int64_t gap = expected; gap < point && gap < expected + 10; ++gap) {
      if (missing_count + (gap - expected) < 10) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(gap);
      }
    }
    missing_count += point - expected;
    expected = point + 1;
  }
  if (missing_count > 0) {
    return Status::InvalidInput("ppsim merge: point" + std::string(missing_count > 1 ? "s " : " ") +
                                missing + (missing_count > 10 ? ", ... (" +
                                                                    std::to_string(missing_count) +
                                                                    " in all)"
                                                              : "") +
                                " missing; give every shard's output");
  }
  std::string text = json ? "" : header + "\n";
  for (const auto& [point, row] : rows) text += row + "\n";
  return WriteWholeFile("", output, text);
}

}  // namespace ppsim
