// Work run in child processes, at most N at a time, each stopped after a timeout: a sweep's
// points, a search's candidates.
//
// Each job runs in a fresh process of its own (SimGrid runs one engine per process, and a job
// that crashes takes down only itself), forked by one of N warm workers: processes forked from
// the pool's process once, which take job after job over a pipe, fork the job's process, and send
// back its output and how it ended, in the order the jobs came. The pool's process only writes a
// job's number and reads its answer, so it never forks or reaps per job. A worker holds up to two
// jobs, so that it never waits for the pool's process, and starts its next job's process as soon
// as the current one has sent its whole output, while that one's process is still exiting: the
// processes' start-up and tear-down overlap the work. The memory is laid out for forking
// (base/fork_memory.h): the pool's process in huge pages before its first worker, the workers' and
// the jobs' own allocations each in a heap of their own. A job that runs past the timeout is
// stopped with its worker (each worker leads its own process group), which is replaced; the
// worker's other job is handed on again; so when a worker dies. Nothing outlives the pool:
// destroying it kills and reaps every worker and job, and a worker or job dies with the process
// that started it (base/subprocess.h).
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
  // What a job's process returns (run in that process; it sees the memory of the pool's process
  // as it was when the worker was forked, i.e. when the pool first needed it).
  using Work = std::function<std::string(size_t job)>;

  // How a job ended.
  struct Finished {
    size_t job = 0;       // as given to Start
    std::string output;   // what the work returned (complete only when it exited 0)
    int wait_status = 0;  // of the job's process (or of its worker, when the worker died)
    bool timed_out = false;
    double wall_s = 0;
  };

  // `parallel` jobs run at most; a job running longer than `timeout_s` is killed (0: never), and
  // one that ended after it is reported as timed out too.
  ProcessPool(int32_t parallel, double timeout_s, Work work);

  // Full when every worker holds its two jobs (one running, one waiting in the worker).
  bool full() const { return busy_ >= parallel_ * kJobsPerWorker; }
  bool empty() const { return busy_ == 0; }

  // Hands `job` to the worker that holds the fewest (forking one while fewer than `parallel` run).
  // REQUIRES: !full().
  Status Start(size_t job);

  // Waits up to 200 ms (less when a timeout falls due) for jobs to end, and returns the ones that
  // ended.
  std::vector<Finished> Wait();

 private:
  static constexpr int32_t kJobsPerWorker = 2;
  struct Held {
    size_t job = 0;
    // When the job started running, as far as the pool can tell: when it was handed over or when
    // the worker answered the job before it, whichever is later.
    std::chrono::steady_clock::time_point since;
  };
  struct Worker {
    Subprocess process;
    std::vector<Held> jobs;  // in the order handed over; the first runs
  };
  // Writes `job` to a worker (forking one when needed).
  Status Hand(size_t job);
  // Takes every complete answer out of `worker`'s output.
  void TakeAnswers(Worker* worker, std::vector<Finished>* finished);

  int32_t parallel_;
  double timeout_s_;
  Work work_;
  int32_t busy_ = 0;
  // The pool's process lays its memory out for forking (base/fork_memory.h) before its first
  // worker.
  bool collapsed_ = false;
  std::vector<Worker> workers_;
};

}  // namespace ppsim

#endif  // PPSIM_BATCH_PROCESS_POOL_H_
