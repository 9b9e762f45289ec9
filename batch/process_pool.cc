#include "batch/process_pool.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string_view>

#include "base/files.h"
#include "base/fork_memory.h"

namespace ppsim {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// An answer: the job (8 bytes), the wait status of its process (4), the output's size (8), the
// output; in the machine's byte order (both ends are the same program).
constexpr size_t kAnswerHeader = 8 + 4 + 8;

bool ReadWhole(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A job's process as its worker sees it. Its output is framed (its size, 8 bytes, then the
// output), so that the worker knows it complete before the process has exited.
struct JobProcess {
  uint64_t job = 0;
  Subprocess process;
  bool ended = false;  // its output has ended: the process has exited (or died)

  bool Complete() const {
    const std::string& out = process.output();
    uint64_t size = 0;
    if (out.size() < 8) return false;
    std::memcpy(&size, out.data(), 8);
    return out.size() - 8 >= size;
  }
  std::string_view Output() const {
    const std::string& out = process.output();
    return out.size() < 8 ? std::string_view() : std::string_view(out).substr(8);
  }
};

bool Answer(int output, uint64_t job, int32_t wait_status, std::string_view out) {
  const uint64_t size = out.size();
  std::string answer(kAnswerHeader, '\0');
  std::memcpy(answer.data(), &job, 8);
  std::memcpy(answer.data() + 8, &wait_status, 4);
  std::memcpy(answer.data() + 12, &size, 8);
  answer += out;
  return WriteAll(output, answer);
}

// A worker's life: job numbers in, each run in a process of its own, answers out in the order the
// jobs came; ends when the pool closes its input (or a write fails) and its jobs are answered. The
// next job's process starts once the running one has sent its whole output; that one is reaped
// as it exits.
void ServeJobs(const ProcessPool::Work& work, int input, int output) {
  // The worker's own allocations stay out of the memory its jobs' processes share with it.
  UseJobHeap();
  std::deque<uint64_t> waiting;
  bool input_open = true;
  // In the order the jobs came: the last may still be sending its output (the running one); the
  // others have sent it whole and are exiting.
  std::deque<JobProcess> started;
  auto running = [&] {
    return !started.empty() && !started.back().Complete() && !started.back().ended;
  };
  while (input_open || !waiting.empty() || !started.empty()) {
    while (!running() && !waiting.empty()) {
      JobProcess p;
      p.job = waiting.front();
      waiting.pop_front();
      const Status status = p.process.Start(
          [&work, job = p.job] {
            UseJobHeap();
            const std::string out = work(static_cast<size_t>(job));
            const uint64_t size = out.size();
            return std::string(reinterpret_cast<const char*>(&size), 8) + out;
          },
          false);
      // "exit status 6": the job's process could not start.
      if (!status.ok() && !Answer(output, p.job, 6 << 8, "")) return;
      if (status.ok()) started.push_back(std::move(p));
    }
    std::vector<pollfd> fds;
    std::vector<JobProcess*> polled;
    if (input_open) fds.push_back({input, POLLIN, 0});
    for (JobProcess& p : started) {
      if (p.ended) continue;
      fds.push_back({p.process.fd(), POLLIN, 0});
      polled.push_back(&p);
    }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    size_t i = 0;
    if (input_open && (fds[i++].revents & (POLLIN | POLLHUP | POLLERR))) {
      uint64_t job = 0;
      if (ReadWhole(input, &job, sizeof(job))) {
        waiting.push_back(job);
      } else {
        input_open = false;
      }
    }
    for (JobProcess* p : polled) {
      if ((fds[i++].revents & (POLLIN | POLLHUP | POLLERR)) && !p->process.Read()) p->ended = true;
    }
    // The first jobs whose processes have exited are answered, in order.
    while (!started.empty() && started.front().ended) {
      JobProcess& p = started.front();
      const int32_t wait_status = p.process.Wait();
      if (!Answer(output, p.job, wait_status, p.Output())) return;
      started.pop_front();
    }
  }
}

}  // namespace

ProcessPool::ProcessPool(int32_t parallel, double timeout_s, Work work)
    : parallel_(std::max(1, parallel)), timeout_s_(timeout_s), work_(std::move(work)) {}

Status ProcessPool::Start(size_t job) {
  RETURN_IF_ERROR(Hand(job));
  ++busy_;
  return Status();
}

Status ProcessPool::Hand(size_t job) {
  auto least = std::min_element(
      workers_.begin(), workers_.end(),
      [](const Worker& a, const Worker& b) { return a.jobs.size() < b.jobs.size(); });
  if (least == workers_.end() ||
      (!least->jobs.empty() && static_cast<int32_t>(workers_.size()) < parallel_)) {
    if (workers_.empty() && !collapsed_) CollapseForForking();
    collapsed_ = true;
    Worker worker;
    const Work& work = work_;
    RETURN_IF_ERROR(worker.process.StartServing(
        [&work](int input, int output) { ServeJobs(work, input, output); }, /*own_group=*/true));
    workers_.push_back(std::move(worker));
    least = workers_.end() - 1;
  }
  const uint64_t number = job;
  if (!WriteAll(least->process.input_fd(),
                std::string_view(reinterpret_cast<const char*>(&number), sizeof(number)))) {
    return Status::Internal(std::string("a worker took no job: ") + std::strerror(errno));
  }
  least->jobs.push_back({job, Clock::now()});
  return Status();
}

void ProcessPool::TakeAnswers(Worker* worker, std::vector<Finished>* finished) {
  std::string& buffer = *worker->process.mutable_output();
  size_t used = 0;
  while (buffer.size() - used >= kAnswerHeader) {
    uint64_t job = 0;
    int32_t wait_status = 0;
    uint64_t size = 0;
    std::memcpy(&job, buffer.data() + used, 8);
    std::memcpy(&wait_status, buffer.data() + used + 8, 4);
    std::memcpy(&size, buffer.data() + used + 12, 8);
    if (buffer.size() - used - kAnswerHeader < size) break;
    const Clock::time_point now = Clock::now();
    auto held = std::find_if(worker->jobs.begin(), worker->jobs.end(),
                             [job](const Held& h) { return h.job == job; });
    Finished f;
    f.job = static_cast<size_t>(job);
    f.wait_status = wait_status;
    f.output = buffer.substr(used + kAnswerHeader, size);
    if (held != worker->jobs.end()) {
      f.wall_s = Seconds(now - held->since);
      // Past the timeout, though it ended before the pool looked: a timeout all the same.
      if (timeout_s_ > 0 && f.wall_s > timeout_s_) {
        f.timed_out = true;
        f.output.clear();
      }
      const bool first = held == worker->jobs.begin();
      worker->jobs.erase(held);
      if (first && !worker->jobs.empty()) {
        worker->jobs.front().since = std::max(worker->jobs.front().since, now);
      }
      --busy_;
    }
    finished->push_back(std::move(f));
    used += kAnswerHeader + size;
  }
  buffer.erase(0, used);
}

std::vector<ProcessPool::Finished> ProcessPool::Wait() {
  std::vector<pollfd> fds;
  int wait_ms = 200;
  for (const Worker& w : workers_) {
    fds.push_back({w.process.fd(), static_cast<short>(w.jobs.empty() ? 0 : POLLIN), 0});
    if (!w.jobs.empty() && timeout_s_ > 0) {
      const double left = timeout_s_ - Seconds(Clock::now() - w.jobs.front().since);
      wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
    }
  }
  ::poll(fds.data(), fds.size(), wait_ms);
  std::vector<Finished> finished;
  std::vector<size_t> orphans;  // the other jobs of a worker that was stopped or died
  for (size_t k = 0, i = 0; k < workers_.size(); ++i) {
    Worker& w = workers_[k];
    bool ended = false;
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      ended = !w.process.Read();
      TakeAnswers(&w, &finished);
    }
    Finished f;
    if (!w.jobs.empty()) f.job = w.jobs.front().job;
    if (!w.jobs.empty() && !ended && timeout_s_ > 0 &&
        Seconds(Clock::now() - w.jobs.front().since) > timeout_s_) {
      f.timed_out = true;
      f.wait_status = w.process.Kill();
    } else if (ended) {
      f.wait_status = w.process.Wait();  // the worker died: its running job with it
    } else {
      ++k;
      continue;
    }
    if (!w.jobs.empty()) {
      f.wall_s = Seconds(Clock::now() - w.jobs.front().since);
      finished.push_back(std::move(f));
      --busy_;
      for (size_t h = 1; h < w.jobs.size(); ++h) orphans.push_back(w.jobs[h].job);
    }
    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  for (size_t job : orphans) {
    const Status status = Hand(job);
    if (!status.ok()) {
      // No worker to take it: it ends as a job whose process could not start.
      Finished f;
      f.job = job;
      f.wait_status = 6 << 8;
      finished.push_back(std::move(f));
      --busy_;
    }
  }
  return finished;
}

}  // namespace ppsim
