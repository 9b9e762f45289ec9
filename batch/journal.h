// A sweep's journal: the rows of finished points, on disk as they finish, so that nothing
// computed is lost. For `-o results.csv` it is results.csv.partial and results.jsonl.partial: a
// header, then a line per point, each line written with one write(). The final files replace it
// (written whole through .tmp, then renamed) when the sweep ends.
#ifndef PPSIM_BATCH_JOURNAL_H_
#define PPSIM_BATCH_JOURNAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "batch/results.h"

namespace ppsim {

// The JSON lines file beside a results CSV: "r.csv" -> "r.jsonl", anything else + ".jsonl".
std::string JsonLinesPath(const std::string& csv_path);

// Finished points: the CSV row and the JSON line of each, by point index.
struct JournalRows {
  std::map<int64_t, std::string> csv;
  std::map<int64_t, std::string> json;
};

class Journal {
 public:
  // The journal of a sweep that writes `csv_path` (and JsonLinesPath(csv_path)). `options` names
  // the sweep's options (resume) in messages; it must outlive the journal.
  Journal(std::string csv_path, const Locator& options);
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();

  // An interrupted sweep's journal is on disk.
  bool exists() const;

  // The rows an earlier run of the same experiment finished: from the journal when there is one,
  // else from the finished outputs (none when neither exists). Every row is checked
  // (batch/results.h): a torn or malformed row, a CSV row without its JSON line (or one that
  // disagrees with it) and a row outside [0, points) are left out, to be run again, each with a
  // message in *dropped; with `retry_failed` so are failed, timeout and crashed points.
  // InvalidInput when the header differs from `header` (another experiment) or when a row's axis
  // values differ from `values_of(point)`; `describe(point)` names the point in that message.
  Status Load(const std::string& header, int64_t points, bool retry_failed,
              const std::function<const std::vector<std::string>&(int64_t)>& values_of,
              const std::function<std::string(int64_t)>& describe, JournalRows* rows,
              std::vector<std::string>* dropped) const;

  // Starts the journal as `header` and `rows`, written whole, then opens it for appending.
  Status Start(const std::string& header, const JournalRows& rows);

  // Appends one finished point, each line with one write(). InvalidInput naming the file and the
  // reason (a full disk) when a write fails; the journal up to the last whole line resumes.
  Status Append(const std::string& csv_line, const std::string& json_line);

  // Writes the final files — `header` and `rows` in point order — and removes the journal.
  Status Finish(const std::string& header, const JournalRows& rows);

 private:
  std::string csv_path_;
  const Locator& options_;
  std::string json_path_;
  int csv_fd_ = -1;
  int json_fd_ = -1;
};

}  // namespace ppsim

#endif  // PPSIM_BATCH_JOURNAL_H_
