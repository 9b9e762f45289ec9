#include "batch/process_pool.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/files.h"

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

// A worker's life: job numbers in, each run in a process of its own, answers out; ends when the
// pool closes its input (or a write fails).
void ServeJobs(const ProcessPool::Work& work, int input, int output) {
  uint64_t job = 0;
  while (ReadWhole(input, &job, sizeof(job))) {
    Subprocess process;
    int32_t wait_status = 0;
    const Status started =
        process.Start([&work, job] { return work(static_cast<size_t>(job)); }, false);
    if (started.ok()) {
      while (process.Read()) {
      }
      wait_status = process.Wait();
    } else {
      wait_status = 6 << 8;  // "exit status 6": the job's process could not start
    }
    const std::string& out = process.output();
    const uint64_t size = out.size();
    std::string answer(kAnswerHeader, '\0');
    std::memcpy(answer.data(), &job, 8);
    std::memcpy(answer.data() + 8, &wait_status, 4);
    std::memcpy(answer.data() + 12, &size, 8);
    answer += out;
    if (!WriteAll(output, answer)) return;
  }
}

}  // namespace

ProcessPool::ProcessPool(int32_t parallel, double timeout_s, Work work)
    : parallel_(std::max(1, parallel)), timeout_s_(timeout_s), work_(std::move(work)) {}

Status ProcessPool::Start(size_t job) {
  auto idle = std::find_if(workers_.begin(), workers_.end(),
                           [](const Worker& w) { return !w.busy && w.process.running(); });
  if (idle == workers_.end()) {
    Worker worker;
    const Work& work = work_;
    RETURN_IF_ERROR(worker.process.StartServing(
        [&work](int input, int output) { ServeJobs(work, input, output); }, /*own_group=*/true));
    workers_.push_back(std::move(worker));
    idle = workers_.end() - 1;
  }
  const uint64_t number = job;
  if (!WriteAll(idle->process.input_fd(),
                std::string_view(reinterpret_cast<const char*>(&number), sizeof(number)))) {
    return Status::Internal(std::string("a worker took no job: ") + std::strerror(errno));
  }
  idle->busy = true;
  idle->job = job;
  idle->start = Clock::now();
  ++busy_;
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
    Finished f;
    f.job = static_cast<size_t>(job);
    f.wait_status = wait_status;
    f.output = buffer.substr(used + kAnswerHeader, size);
    f.wall_s = Seconds(Clock::now() - worker->start);
    finished->push_back(std::move(f));
    used += kAnswerHeader + size;
    worker->busy = false;
    --busy_;
  }
  buffer.erase(0, used);
}

std::vector<ProcessPool::Finished> ProcessPool::Wait() {
  std::vector<pollfd> fds;
  int wait_ms = 200;
  for (const Worker& w : workers_) {
    fds.push_back({w.process.fd(), static_cast<short>(w.busy ? POLLIN : 0), 0});
    if (w.busy && timeout_s_ > 0) {
      const double left = timeout_s_ - Seconds(Clock::now() - w.start);
      wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
    }
  }
  ::poll(fds.data(), fds.size(), wait_ms);
  std::vector<Finished> finished;
  for (size_t k = 0, i = 0; k < workers_.size(); ++i) {
    Worker& w = workers_[k];
    bool ended = false;
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      ended = !w.process.Read();
      TakeAnswers(&w, &finished);
    }
    Finished f;
    f.job = w.job;
    if (w.busy && !ended && timeout_s_ > 0 && Seconds(Clock::now() - w.start) > timeout_s_) {
      f.timed_out = true;
      f.wait_status = w.process.Kill();
    } else if (ended) {
      f.wait_status = w.process.Wait();  // the worker died: its job with it
    } else {
      ++k;
      continue;
    }
    if (w.busy) {
      f.wall_s = Seconds(Clock::now() - w.start);
      finished.push_back(std::move(f));
      --busy_;
    }
    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return finished;
}

}  // namespace ppsim
