// Work run in child processes, at most N at a time, each stopped after a timeout: a sweep's
// points. Each child leads its own process group, so stopping it stops what it started. Nothing
// outlives the pool: destroying it kills and reaps every child still running, and a child dies
// with the pool's process (base/subprocess.h).
#ifndef PPSIM_BATCH_PROCESS_POOL_H_
#define PPSIM_BATCH_PROCESS_POOL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/subprocess.h"

namespace ppsim {

class ProcessPool {
 public:
  // How a child ended.
  struct Finished {
    size_t job = 0;      // as given to Start
    std::string output;  // what the work returned (complete only when it exited 0)
    int wait_status = 0;
    bool timed_out = false;
    double wall_s = 0;
  };

  // `parallel` children at most; a child running longer than `timeout_s` is killed (0: never).
  ProcessPool(int32_t parallel, double timeout_s);

  bool full() const { return static_cast<int32_t>(running_.size()) >= parallel_; }
  bool empty() const { return running_.empty(); }

  // Starts `work` for `job` in a child. REQUIRES: !full().
  Status Start(size_t job, const std::function<std::string()>& work);

  // Waits up to 200 ms (less when a timeout falls due) for children to send output or end, and
  // returns the ones that ended, reaped.
  std::vector<Finished> Wait();

 private:
  struct Running {
    size_t job = 0;
    Subprocess process;
    std::chrono::steady_clock::time_point start;
  };

  int32_t parallel_;
  double timeout_s_;
  std::vector<Running> running_;
};

}  // namespace ppsim

#endif  // PPSIM_BATCH_PROCESS_POOL_H_
