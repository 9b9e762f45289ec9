// Printing run results: a human table, JSON, or CSV. Output is deterministic: the same results
// give byte-identical text (numbers are printed in their shortest round-trip form).
#ifndef PPSIM_EXPERIMENTS_RUN_OUTPUT_H_
#define PPSIM_EXPERIMENTS_RUN_OUTPUT_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/run.h"
#include "base/status.h"
#include "base/csv.h"
#include "base/escape.h"
#include "base/numbers.h"

namespace ppsim {

enum class OutputFormat { kTable, kJson, kCsv };

// "table", "json", "csv"; the message starts with `what` (where the name was written) and lists
// the valid names.
Status ParseOutputFormat(std::string_view what, std::string_view text, OutputFormat* format);

// One run: table with a per-rank section; JSON object; CSV header and one row.
// Several runs: a comparison table; a JSON array of objects; CSV header and one row per run.
std::string FormatResults(const std::vector<RunResult>& results, OutputFormat format);

// Left-aligned columns separated by two spaces, one line per row.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows);

// "out of memory: 1F1B rank 0 needs 95.3 GiB of 80 GiB; ..." naming every rank of `results` that
// does not fit, or "" when all fit.
std::string OutOfMemoryReport(const std::vector<RunResult>& results);

// One run as a JSON object: what --format json prints (pretty, base/json.h) and sweeps keep in
// their JSON lines (compact).
nlohmann::ordered_json RunJson(const RunResult& result);

// One run as a JSON object on a single line (RunJson, compact).
std::string FormatResultJsonLine(const RunResult& result);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_OUTPUT_H_
