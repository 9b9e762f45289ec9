// A sweep's progress: one updating line on a terminal ("12/500 points, 0 failed, ETA 3.2 s"), or
// a line per finished point otherwise ("[12/500] point 11 ok (schedule=1F1B, ...)").
#ifndef PPSIM_BATCH_PROGRESS_H_
#define PPSIM_BATCH_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace ppsim {

class SweepProgress {
 public:
  // `total` points in this shard, `resumed` of them done before this run.
  SweepProgress(std::ostream& out, bool terminal, size_t total, size_t resumed);

  // A point finished; `failed` counts it as a failure.
  void PointDone(int64_t point, const std::string& description, const std::string& status,
                 const std::string& error, bool failed);
  // Ends the updating line on a terminal.
  void Finish();

  size_t failed() const { return failed_; }

 private:
  std::ostream& out_;
  bool terminal_;
  size_t total_;
  size_t resumed_;
  size_t done_;
  size_t failed_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ppsim

#endif  // PPSIM_BATCH_PROGRESS_H_
