// Printing run results: a human table, JSON, or CSV. Output is deterministic: the same results
// give byte-identical text (numbers are printed in their shortest round-trip form).
#ifndef PPSIM_EXPERIMENTS_RUN_OUTPUT_H_
#define PPSIM_EXPERIMENTS_RUN_OUTPUT_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/csv.h"
#include "base/escape.h"
#include "base/numbers.h"
#include "base/status.h"
#include "experiments/run.h"

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

// A run's headline figures, as its outputs show them and a sweep records them: each optional one
// is set only when the run has it (tokens/s with a sequence length, MFU with a model, HFU with
// recomputation, the time to train and GPU-hours with train tokens, the cost with a price too).
// Memory: the largest rank's peak and capacity (0: unlimited).
struct RunHeadline {
  double makespan_s = 0;
  double bubble_over_makespan = 0;
  double bubble_over_ideal = 0;
  double stage_bubble_rate = 0;
  double samples_per_s = 0;
  std::optional<double> tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours, cost;
  int64_t peak_memory_bytes = 0;
  int64_t memory_capacity_bytes = 0;
  bool oom = false;
};
RunHeadline HeadlineOf(const RunResult& result);

// One run as a JSON object: what --format json prints (pretty, base/json.h) and sweeps keep in
// their JSON lines (compact).
nlohmann::ordered_json RunJson(const RunResult& result);

// A framework's launch (--emit) as the run's JSON holds it ({framework, gpus, text,
// schedule_csv_name, schedule_csv, file, import_command, notes}; the CSV fields only with a CSV,
// `file` only when written) and as its table ends: the text (or where it was written), the import
// command and the notes. `label` names the run (its schedule).
nlohmann::ordered_json LaunchJson(const FrameworkLaunch& launch, const std::string& import_command,
                                  const std::string& file);
std::string LaunchText(const FrameworkLaunch& launch, const std::string& label,
                       const std::string& import_command, const std::string& file);

// One run as a JSON object on a single line (RunJson, compact).
std::string FormatResultJsonLine(const RunResult& result);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_OUTPUT_H_
