#include "batch/progress.h"

#include <cstdio>
#include <string>

#include "config/units.h"

namespace ppsim {

SweepProgress::SweepProgress(std::ostream& out, bool terminal, size_t total, size_t resumed)
    : out_(out),
      terminal_(terminal),
      total_(total),
      resumed_(resumed),
      done_(resumed),
      start_(std::chrono::steady_clock::now()) {}

void SweepProgress::PointDone(int64_t point, const std::string& description,
                              const std::string& status, const std::string& error, bool failed) {
  ++done_;
  if (failed) ++failed_;
  if (!terminal_) {
    // One write a line (an unbuffered stderr writes each piece on its own).
    out_ << "[" + std::to_string(done_) + "/" + std::to_string(total_) + "] point " +
                std::to_string(point) + " " + status + " (" + description + ")" +
                (error.empty() ? "" : ": " + error) + "\n";
    return;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const size_t ran = done_ - resumed_;
  const double eta = ran > 0 ? elapsed / static_cast<double>(ran) * (total_ - done_) : 0;
  char line[160];
  std::snprintf(line, sizeof(line), "\r%zu/%zu points, %zu failed, ETA %s   ", done_, total_,
                failed_, HumanDuration(eta).c_str());
  out_ << line << std::flush;
}

void SweepProgress::Finish() {
  if (terminal_) out_ << "\n";
}

}  // namespace ppsim
