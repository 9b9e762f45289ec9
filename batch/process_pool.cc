#include "batch/process_pool.h"

#include <poll.h>

#include <algorithm>

namespace ppsim {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

ProcessPool::ProcessPool(int32_t parallel, double timeout_s)
    : parallel_(std::max(1, parallel)), timeout_s_(timeout_s) {}

Status ProcessPool::Start(size_t job, const std::function<std::string()>& work) {
  Running child;
  child.job = job;
  child.start = Clock::now();
  RETURN_IF_ERROR(child.process.Start(work, /*own_group=*/true));
  running_.push_back(std::move(child));
  return Status();
}

std::vector<ProcessPool::Finished> ProcessPool::Wait() {
  std::vector<pollfd> fds;
  int wait_ms = 200;
  for (const Running& c : running_) {
    fds.push_back({c.process.fd(), POLLIN, 0});
    if (timeout_s_ > 0) {
      const double left = timeout_s_ - Seconds(Clock::now() - c.start);
      wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
    }
  }
  ::poll(fds.data(), fds.size(), wait_ms);
  std::vector<Finished> finished;
  for (size_t k = 0; k < running_.size();) {
    Running& c = running_[k];
    bool ended = false;
    if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) ended = !c.process.Read();
    Finished f;
    f.job = c.job;
    if (!ended && timeout_s_ > 0 && Seconds(Clock::now() - c.start) > timeout_s_) {
      f.timed_out = true;
      f.wait_status = c.process.Kill();
    } else if (ended) {
      f.wait_status = c.process.Wait();
    } else {
      ++k;
      continue;
    }
    f.output = c.process.output();
    f.wall_s = Seconds(Clock::now() - c.start);
    finished.push_back(std::move(f));
    fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(k));
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return finished;
}

}  // namespace ppsim
