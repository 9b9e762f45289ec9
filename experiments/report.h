// Printing run results: a human table, JSON, or CSV. Output is deterministic: the same results
// give byte-identical text (numbers are printed in their shortest round-trip form).
#ifndef PPSIM_EXPERIMENTS_REPORT_H_
#define PPSIM_EXPERIMENTS_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "experiments/run.h"
#include "base/status.h"
#include "base/csv.h"
#include "base/escape.h"
#include "base/numbers.h"

namespace ppsim {

enum class OutputFormat { kTable, kJson, kCsv };

// "table", "json", "csv"; the message names `what` (the flag) and the valid names.
Status ParseOutputFormat(std::string_view what, std::string_view text, OutputFormat* format);

// One run: table with a per-rank section; JSON object; CSV header and one row.
// Several runs: a comparison table; a JSON array of objects; CSV header and one row per run.
std::string FormatResults(const std::vector<RunResult>& results, OutputFormat format);

// Left-aligned columns separated by two spaces, one line per row.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows);

// One run as a JSON object on a single line (the --format json object, compacted).
std::string FormatResultJsonLine(const RunResult& result);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_REPORT_H_
