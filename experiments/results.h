// The results of a sweep: one schema, written by the sweep and read back by resume, merge and the
// report. For `-o results.csv` there are two files:
//
//   results.csv    RFC 4180 CSV. The header is
//                    point,<axis 1>,...,<axis k>,makespan_s,bubble_over_makespan,
//                    stage_bubble_rate,throughput_microbatches_per_s,peak_memory_bytes,
//                    static_memory_bytes,oom,status,error,wall_s
//                  then one row per point in point order. `point` is the 0-based index of the
//                  point (a whole number, each once); the axes (k >= 0) hold the values as the user
//                  wrote them ("1F1B", "32", "400Gbps"); status is ok, failed, skipped, timeout or
//                  crashed. An ok row has a number in each of the six metric columns and true or
//                  false in oom; other rows leave them empty and explain themselves in error.
//                  wall_s is a number (it may be empty on a row that is not ok).
//   results.jsonl  the same points as JSON lines, written with the JSON library:
//                    {"point": 3, "values": {"<axis>": "<value>", ...}, "status": "ok",
//                     "error": "", "wall_s": 0.02, "result": {...}}
//                  where "result" (ok rows only) is the run's JSON, as `ppsim run --format json`.
//
// Numbers are written in their shortest round-trip form (base/numbers.h).
#ifndef PPSIM_EXPERIMENTS_RESULTS_H_
#define PPSIM_EXPERIMENTS_RESULTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace ppsim {

// Results files are read up to this size (about 3 million points).
inline constexpr int64_t kMaxResultsBytes = int64_t{1} << 30;

// The columns after `point` and the axes, in order.
inline constexpr std::string_view kResultMetricColumns[] = {
    "makespan_s",        "bubble_over_makespan", "stage_bubble_rate",
    "throughput_microbatches_per_s", "peak_memory_bytes", "static_memory_bytes",
    "oom",               "status",               "error",
    "wall_s"};
inline constexpr int kResultMetricColumnCount = 10;
// Indexes into kResultMetricColumns. The first kNumericMetrics hold numbers on ok rows.
enum ResultColumn : int {
  kMakespanColumn = 0,
  kBubbleColumn = 1,
  kStageBubbleColumn = 2,
  kThroughputColumn = 3,
  kPeakMemoryColumn = 4,
  kStaticMemoryColumn = 5,
  kOomColumn = 6,
  kStatusColumn = 7,
  kErrorColumn = 8,
  kWallColumn = 9,
};
inline constexpr int kNumericMetrics = 6;

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
  double makespan_s = 0;
  double bubble_over_makespan = 0;
  double stage_bubble_rate = 0;
  double throughput_microbatches_per_s = 0;
  int64_t peak_memory_bytes = 0;
  int64_t static_memory_bytes = 0;
  bool oom = false;
  nlohmann::ordered_json result;  // the run's JSON (experiments/run_output.h RunJson)
};

// A point process's outcome as one JSON text, and back: how the point's process tells the sweep.
// ParsePointOutcome is false on anything that is not such a text.
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
  double metric[kNumericMetrics] = {};    // ok rows
  bool oom = false;                       // ok rows
};

struct ResultsTable {
  std::vector<std::string> header;
  int axis_count = 0;
  std::vector<ResultRow> rows;  // in point order

  const std::string& AxisText(const ResultRow& row, int axis) const {
    return row.fields[1 + axis];
  }
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
// syntax error, a row with the wrong number of fields, a bad point, status, number or oom value,
// a repeated point. Every bad row is reported (up to 20).
//
// With `dropped` (a sweep resuming from its journal) bad rows are not errors: they are left out,
// each with its message in *dropped, and so is a torn last record (one that does not end in a
// line break). The header is checked either way.
Status ReadResultsCsv(std::string_view text, const std::string& source, ResultsTable* table,
                      std::vector<std::string>* dropped = nullptr);

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

#endif  // PPSIM_EXPERIMENTS_RESULTS_H_
