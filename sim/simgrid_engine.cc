// The SimGrid engine: the DAG runs as SimGrid activities created just in time.
//
// SimGrid 3.32 keeps activities created outside actors in a list it scans on removal, so wiring
// the whole DAG up front is quadratic. Instead each task keeps a count of unfinished
// predecessors and becomes an Exec or a Comm only when that count reaches zero, from inside the
// completion callback of its last predecessor. The network model is set so that an uncontended
// transfer takes exactly latency + bytes / bandwidth (see ../shared/notes/simgrid-3.32.md).
//
// The engine is a per-process singleton that cannot be reset, so the simulation runs in a forked
// child which sends the timeline back through a pipe.
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <xbt/log.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "sim/engine.h"
#include "sim/simgrid_platform.h"

namespace ppsim {
namespace {

namespace s4u = simgrid::s4u;

constexpr uint64_t kMagic = 0x7070'7369'6d54'4c31ULL;       // "ppsimTL1": a timeline follows
constexpr uint64_t kInputError = 0x7070'7369'6d45'5231ULL;  // "ppsimER1": a message follows

// The (source, destination) GPU pairs the graph's transfers use.
std::vector<std::pair<int32_t, int32_t>> UsedRoutes(const TaskGraph& graph,
                                                    const PlatformSpec& platform) {
  std::set<std::pair<int32_t, int32_t>> routes;
  for (size_t t = graph.num_compute_tasks(); t < graph.num_tasks(); ++t) {
    const TaskGpus gpus = GpusOf(graph.tasks[t], platform);
    routes.emplace(gpus.src, gpus.dst);
  }
  return {routes.begin(), routes.end()};
}

// Launches tasks as their predecessors finish and records when each ran.
class JustInTimeRunner {
 public:
  JustInTimeRunner(const TaskGraph& graph, const PlatformSpec& platform,
                   std::vector<s4u::Host*> gpus, Timeline* timeline)
      : graph_(graph),
        platform_(platform),
        gpus_(std::move(gpus)),
        timeline_(timeline),
        remaining_(graph.num_predecessors),
        running_(graph.num_tasks()) {
    timeline_->start_s.assign(graph.num_tasks(), 0.0);
    timeline_->end_s.assign(graph.num_tasks(), 0.0);
  }

  void Start() {
    s4u::Activity::on_completion_cb([this](s4u::Activity const& a) { OnCompletion(a); });
    for (TaskId t = 0; t < graph_.num_tasks(); ++t) {
      if (remaining_[t] == 0) Launch(t);
    }
  }

  size_t completed() const { return completed_; }

 private:
  void Launch(TaskId t) {
    const Task& task = graph_.tasks[t];
    void* data = reinterpret_cast<void*>(static_cast<uintptr_t>(t));
    const TaskGpus gpus = GpusOf(task, platform_);
    if (task.kind == TaskKind::kCompute) {
      s4u::Host* host = gpus_[gpus.src];
      s4u::ExecPtr exec = s4u::Exec::init();
      exec->set_flops_amount(task.duration_s * host->get_speed());
      exec->set_host(host);
      exec->set_data(data);
      running_[t] = exec;
      exec->start();
    } else {
      s4u::CommPtr comm = s4u::Comm::sendto_init(gpus_[gpus.src], gpus_[gpus.dst]);
      comm->set_payload_size(static_cast<uint64_t>(task.bytes));
      comm->set_data(data);
      running_[t] = comm;
      comm->start();
    }
  }

  void OnCompletion(s4u::Activity const& activity) {
    // An activity must not lose its last reference inside its own completion callback: release
    // the ones that finished before, once no callback is on the stack.
    if (depth_ == 0) {
      for (TaskId t : finished_) running_[t].reset();
      finished_.clear();
    }
    ++depth_;
    const TaskId t = static_cast<TaskId>(reinterpret_cast<uintptr_t>(activity.get_data<void>()));
    timeline_->start_s[t] = activity.get_start_time();
    timeline_->end_s[t] = activity.get_finish_time();
    ++completed_;
    finished_.push_back(t);
    for (TaskId next : boost::make_iterator_range(boost::adjacent_vertices(t, graph_.dag))) {
      if (--remaining_[next] == 0) Launch(next);
    }
    --depth_;
  }

  const TaskGraph& graph_;
  const PlatformSpec& platform_;
  std::vector<s4u::Host*> gpus_;
  Timeline* timeline_;
  std::vector<TaskId> remaining_;
  std::vector<s4u::ActivityPtr> running_;
  std::vector<TaskId> finished_;
  int depth_ = 0;
  size_t completed_ = 0;
};

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Runs in the child: simulates and writes magic, task count, starts, ends; or, when the input is
// wrong (an XML host that does not exist), kInputError, the message length and the message.
// Returns the exit code.
int SimulateAndSend(const TaskGraph& graph, const PlatformSpec& platform, int fd) {
  int argc = 1;
  char name[] = "ppsim";
  char* argv[] = {name, nullptr};
  xbt_log_control_set("root.thres:critical");
  // Never destroyed: the child exits right after sending.
  auto* engine = new s4u::Engine(&argc, argv);
  engine->set_config("network/model:CM02");
  engine->set_config("network/crosstraffic:0");
  engine->set_config("network/TCP-gamma:0");
  std::vector<s4u::Host*> gpus;
  const Status status = BuildSimGridPlatform(platform, UsedRoutes(graph, platform), &gpus);
  if (!status.ok()) {
    const std::string& message = status.message();
    const uint64_t header[2] = {kInputError, message.size()};
    return WriteAll(fd, header, sizeof(header)) && WriteAll(fd, message.data(), message.size())
               ? 0
               : 4;
  }

  Timeline timeline;
  JustInTimeRunner runner(graph, platform, std::move(gpus), &timeline);
  runner.Start();
  engine->run();
  if (runner.completed() != graph.num_tasks()) return 3;

  const uint64_t header[2] = {kMagic, graph.num_tasks()};
  const size_t bytes = graph.num_tasks() * sizeof(double);
  if (!WriteAll(fd, header, sizeof(header)) || !WriteAll(fd, timeline.start_s.data(), bytes) ||
      !WriteAll(fd, timeline.end_s.data(), bytes)) {
    return 4;
  }
  return 0;
}

}  // namespace

Status RunSimGrid(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline) {
  int fds[2];
  if (pipe(fds) != 0) return Status::Internal(std::string("simgrid: pipe: ") + strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::Internal(std::string("simgrid: fork: ") + strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    const int code = SimulateAndSend(graph, platform, fds[1]);
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  uint64_t header[2] = {0, 0};
  const size_t n = graph.num_tasks();
  timeline->start_s.assign(n, 0.0);
  timeline->end_s.assign(n, 0.0);
  bool received = ReadAll(fds[0], header, sizeof(header));
  std::string input_error;
  if (received && header[0] == kInputError && header[1] < (1u << 20)) {
    input_error.resize(header[1]);
    received = ReadAll(fds[0], input_error.data(), input_error.size());
  } else {
    received = received && header[0] == kMagic && header[1] == n &&
               ReadAll(fds[0], timeline->start_s.data(), n * sizeof(double)) &&
               ReadAll(fds[0], timeline->end_s.data(), n * sizeof(double));
  }
  close(fds[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wait_status)) {
    return Status::Internal("simgrid: the simulation process died of signal " +
                            std::to_string(WTERMSIG(wait_status)) + " (" +
                            strsignal(WTERMSIG(wait_status)) + ")");
  }
  if (received && !input_error.empty()) return Status::InvalidInput(input_error);
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0 || !received) {
    const int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    return Status::Internal("simgrid: the simulation process failed (exit " +
                            std::to_string(code) +
                            (code == 3 ? ": not every task completed" : "") + ")");
  }
  return Status();
}

}  // namespace ppsim
