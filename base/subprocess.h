// A function run in a child process, its result sent back through a pipe: SimGrid allows one
// engine per process, and a sweep runs its points side by side. The one place ppsim forks.
//
// The child dies with its parent (PR_SET_PDEATHSIG), so no simulation outlives the ppsim that
// started it. Destroying a Subprocess whose child still runs kills and reaps the child: nothing
// returns while its children are alive.
#ifndef PPSIM_BASE_SUBPROCESS_H_
#define PPSIM_BASE_SUBPROCESS_H_

#include <sys/types.h>

#include <functional>
#include <string>

#include "base/status.h"

namespace ppsim {

class Subprocess {
 public:
  Subprocess() = default;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  // Kills (SIGKILL) and reaps a child that still runs.
  ~Subprocess();

  // Forks a child that runs `work` and writes what it returns to the pipe, then exits 0 (4 when
  // the pipe breaks). With `own_group` the child leads its own process group, so that Kill()
  // also stops what it starts. Internal when pipe() or fork() fails.
  // With `stderr_fd` >= 0, the child's standard error goes to that file descriptor.
  Status Start(const std::function<std::string()>& work, bool own_group, int stderr_fd = -1);
  // Forks a child that serves requests: it runs `serve(input, output)`, reading from `input` what
  // the parent writes to input_fd() and writing to `output` what the parent reads from fd()
  // (Read), then exits 0. A worker that takes many jobs (batch/process_pool.h).
  Status StartServing(const std::function<void(int input, int output)>& serve, bool own_group);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // The read end of the pipe (for poll), or -1 once the child's output has ended.
  int fd() const { return fd_; }
  // With StartServing, the write end of the child's input; -1 otherwise.
  int input_fd() const { return input_fd_; }

  // Reads what the pipe holds now (blocks until something arrives or the pipe closes). Returns
  // false once the child closed its end: its whole output is in output().
  bool Read();
  const std::string& output() const { return output_; }
  // What Read appended and the caller has not consumed: a server's replies are taken from it.
  std::string* mutable_output() { return &output_; }

  // Waits for the child to exit and reaps it; returns the wait status (<sys/wait.h> macros).
  // REQUIRES: running().
  int Wait();
  // SIGKILL to the child (its group with own_group), then Wait().
  int Kill();

 private:
  void Close();
  // Forks; the child runs `body(input, output)` and exits with its status.
  Status Fork(bool own_group, int stderr_fd, bool with_input,
              const std::function<int(int input, int output)>& body);

  pid_t pid_ = -1;
  int fd_ = -1;
  int input_fd_ = -1;
  bool own_group_ = false;
  std::string output_;
};

// Runs `work` in a child and waits for it; *output gets what it returned. Internal, naming
// `what`, when the child could not start, died of a signal or exited with a failure; the message
// then ends with the last line the child wrote to standard error, if any (which otherwise goes
// nowhere: a library's backtrace never reaches the user).
Status RunInChild(const std::string& what, const std::function<std::string()>& work,
                  std::string* output);

// "signal 9 (Killed)", "exit status 3": what a wait status says.
std::string DescribeWaitStatus(int wait_status);

}  // namespace ppsim

#endif  // PPSIM_BASE_SUBPROCESS_H_
