// The results of a sweep: one schema, written by the sweep and read back by resume, merge and the
// report. For `-o results.csv` there are two files:
//
//   results.csv    RFC 4180 CSV. The header is
//                    point,<axis 1>,...,<axis k>,makespan_s,bubble_over_makespan,
//                    bubble_over_ideal,stage_bubble_rate,throughput_microbatches_per_s,
//                    samples_per_s,tokens_per_s,mfu,hfu,peak_memory_bytes,static_memory_bytes,
//                    memory_capacity_bytes,oom,time_to_train_s,gpu_hours,cost,status,error,wall_s
//                  then one row per point in point order. `point` is the 0-based index of the
//                  point (a whole number, each once); the axes (k >= 0) hold the values as the user
//                  wrote them ("1F1B", "32", "400Gbps"); status is ok, failed, skipped, timeout or
//                  crashed. An ok row has a number in each metric column but tokens_per_s, mfu,
//                  hfu, time_to_train_s, gpu_hours and cost, which are empty when the run has no
//                  such value (no sequence length, no model, no recomputation, no --train-tokens,
//                  no --gpu-hour-cost), and true or false in oom; other rows leave them empty and
//                  explain themselves in error. wall_s is a number (it may be empty on a row that
//                  is not ok).
//                  Each metric column but throughput_microbatches_per_s (microbatches x dp /
//                  makespan), static_memory_bytes (the largest rank's) and oom (any rank out of
//                  memory) is the run's JSON field of the same name; memory_capacity_bytes is 0
//                  when memory is unlimited.
//   results.jsonl  the same points as JSON lines, written with the JSON library:
//                    {"point": 3, "values": {"<axis>": "<value>", ...}, "status": "ok",
//                     "error": "", "wall_s": 0.02, "result": {...}}
//                  where "result" (ok rows only) is the run's JSON, as `ppsim run --format json`.
//
// Numbers are written in their shortest round-trip form (base/numbers.h).
#ifndef PPSIM_BATCH_RESULTS_H_
#define PPSIM_BATCH_RESULTS_H_

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace ppsim {

// Results files are read up to this size (about 3 million points).
inline constexpr int64_t kMaxResultsBytes = int64_t{1} << 30;

// What an ok row holds in a column after `point` and the axes.
enum class ColumnRole {
  kMetric,          // a number
  kOptionalMetric,  // a number, or empty when the run has no such value
  kOther,           // oom, status, error, wall_s: checked one by one
};

struct ResultColumnInfo {
  std::string_view name;
  ColumnRole role;
};

// The columns after `point` and the axes, in order.
inline constexpr ResultColumnInfo kResultColumns[] = {
    {"makespan_s", ColumnRole::kMetric},
    {"bubble_over_makespan", ColumnRole::kMetric},
    {"bubble_over_ideal", ColumnRole::kMetric},
    {"stage_bubble_rate", ColumnRole::kMetric},
    {"throughput_microbatches_per_s", ColumnRole::kMetric},
    {"samples_per_s", ColumnRole::kMetric},
    {"tokens_per_s", ColumnRole::kOptionalMetric},
    {"mfu", ColumnRole::kOptionalMetric},
    {"hfu", ColumnRole::kOptionalMetric},
    {"peak_memory_bytes", ColumnRole::kMetric},
    {"static_memory_bytes", ColumnRole::kMetric},
    {"memory_capacity_bytes", ColumnRole::kMetric},
    {"oom", ColumnRole::kOther},
    {"time_to_train_s", ColumnRole::kOptionalMetric},
    {"gpu_hours", ColumnRole::kOptionalMetric},
    {"cost", ColumnRole::kOptionalMetric},
    {"status", ColumnRole::kOther},
    {"error", ColumnRole::kOther},
    {"wall_s", ColumnRole::kOther},
};
// Indexes into kResultColumns.
enum ResultColumn : int {
  kMakespanColumn,
  kBubbleColumn,  // bubble_over_makespan
  kBubbleOverIdealColumn,
  kStageBubbleColumn,
  kThroughputColumn,  // throughput_microbatches_per_s
  kSamplesColumn,
  kTokensColumn,
  kMfuColumn,
  kHfuColumn,
  kPeakMemoryColumn,
  kStaticMemoryColumn,
  kCapacityColumn,  // memory_capacity_bytes
  kOomColumn,
  kTimeToTrainColumn,
  kGpuHoursColumn,
  kCostColumn,
  kStatusColumn,
  kErrorColumn,
  kWallColumn,
  kResultColumnCount,
};
static_assert(std::size(kResultColumns) == kResultColumnCount);

inline bool IsMetric(int column) { return kResultColumns[column].role != ColumnRole::kOther; }

// The metric values of an ok point, by ResultColumn: set for every kMetric column (but
// static_memory_bytes of a row read from a run CSV, ReadRunCsv), and for a kOptionalMetric column
// when the run has the value; unset for the kOther columns.
using ResultValues = std::array<std::optional<double>, kResultColumnCount>;

// Reads `cell` of metric column `column` (IsMetric) of an ok row into *value: a number, or for a
// kOptionalMetric column an empty cell (*value unset). Returns "" or the problem, without where:
// "mfu 'high' is not a number; mfu is a number, or empty when the run has none".
std::string ReadMetricCell(int column, const std::string& cell, std::optional<double>* value);

// throughput_microbatches_per_s: `microbatches` on each of `dp` replicas in `makespan_s`; 0 when
// the makespan is 0.
double MicrobatchesPerS(int64_t microbatches, int64_t dp, double makespan_s);

enum class PointStatus { kOk = 0, kFailed, kSkipped, kTimeout, kCrashed };
inline constexpr int kPointStatusCount = 5;

std::string_view PointStatusName(PointStatus status);
// False unless `name` is one of ok, failed, skipped, timeout, crashed.
bool ParsePointStatus(std::string_view name, PointStatus* status);
// failed, timeout and crashed: the point ran and did not finish (--retry-failed runs it again).
bool IsFailure(PointStatus status);

// The CSV header of a sweep over `axes`.
std::string ResultsHeader(const std::vector<std::string>& axes);

// What a point came to, as the sweep records it.
struct PointOutcome {
  PointStatus status = PointStatus::kOk;
  std::string error;  // one line; "" when ok
  double wall_s = 0;
  // ok only:
  ResultValues values;
  bool oom = false;
  // The run's JSON (experiments/run_output.h RunJson) as compact text (base/json.h): the point's
  // process lays it out once and the sweep copies it into the JSON line as it is.
  std::string result;
};

// A point process's outcome as text, and back: how the point's process tells the sweep. One JSON
// line of everything but the result, then the result's text. ParsePointOutcome is false on
// anything that is not such a text.
std::string SerializePointOutcome(const PointOutcome& outcome);
bool ParsePointOutcome(std::string_view text, PointOutcome* outcome);

// The CSV line (no line break) and the JSON line of point `point`, whose axis values are `values`.
std::string ResultCsvLine(int64_t point, const std::vector<std::string>& values,
                          const PointOutcome& outcome);
std::string ResultJsonLine(int64_t point, const std::vector<std::string>& axes,
                           const std::vector<std::string>& values, const PointOutcome& outcome);

// A row read back from a results CSV.
struct ResultRow {
  int64_t line = 0;  // the 1-based line the record starts on
  int64_t point = 0;
  PointStatus status = PointStatus::kOk;
  std::vector<std::string> fields;        // every column, as text
  ResultValues values;                    // ok rows
  bool oom = false;                       // ok rows
};

struct ResultsTable {
  std::vector<std::string> header;
  int axis_count = 0;
  std::vector<ResultRow> rows;  // in point order

  const std::string& AxisText(const ResultRow& row, int axis) const {
    return row.fields[1 + axis];
  }
  // The text of `column` (a ResultColumn) in `row`.
  const std::string& Cell(const ResultRow& row, int column) const {
    return row.fields[1 + axis_count + column];
  }
  std::vector<std::string> Axes() const {
    return {header.begin() + 1, header.begin() + 1 + axis_count};
  }
  // The row as CSV text, as it was read (no line break).
  std::string CsvLine(const ResultRow& row) const;
};

// Reads a results CSV (`source` names it in messages). Errors are InvalidInput, one line per
// problem, "SOURCE:LINE: what is wrong; what is valid": an empty file, a malformed header, a CSV
// syntax error, a row with the wrong number of fields, a bad point, status, number or oom value
// (on an ok row an empty cell is a bad number unless its column is optional), a repeated point.
// Every bad row is reported (up to 20).
//
// With `dropped` (a sweep resuming from its journal) bad rows are not errors: they are left out,
// each with its message in *dropped, and so is a torn last record (one that does not end in a
// line break). The header is checked either way.
Status ReadResultsCsv(std::string_view text, const std::string& source, ResultsTable* table,
                      std::vector<std::string>* dropped = nullptr);

// Reads a `ppsim run --format csv` file (experiments/run_output.h: a row per schedule) as a
// results table with one axis, schedule: record k is point k - 1, ok. Each metric column is the
// run CSV's column of the same name, but throughput_microbatches_per_s (from its microbatches, dp
// and makespan_s) and static_memory_bytes (not in a run CSV: an empty cell, no value); oom is
// oom_ranks > 0; error and wall_s are empty. The run CSV may hold more columns, in any order.
// Errors are InvalidInput, "SOURCE:LINE: ...", as for ReadResultsCsv: a missing column (naming
// those a run CSV has), a CSV syntax error, a row with the wrong number of fields, a bad number.
Status ReadRunCsv(std::string_view text, const std::string& source, ResultsTable* table);

// A line read back from a results JSON lines file.
struct ResultJsonRow {
  int64_t line = 0;
  int64_t point = 0;
  PointStatus status = PointStatus::kOk;
  std::string text;  // the line, as read
};

// Reads a results JSON lines file. Each line is a JSON object (nesting at most 64 deep) with a
// whole "point" >= 0, "values" (an object of strings, keyed by the axes in order), a valid
// "status", a string "error", a number "wall_s", and an object "result" exactly when ok. *axes
// names the expected axes; when empty, the first line's keys set it. Errors and `dropped` as
// for ReadResultsCsv; points are not checked for repeats here.
Status ReadResultsJsonLines(std::string_view text, const std::string& source,
                            std::vector<std::string>* axes, std::vector<ResultJsonRow>* rows,
                            std::vector<std::string>* dropped = nullptr);

}  // namespace ppsim

#endif  // PPSIM_BATCH_RESULTS_H_
