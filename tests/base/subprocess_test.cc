// Child processes: output back through the pipe, crashes reported, and no child outlives its
// Subprocess or the process that started it.
#include "base/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

namespace ppsim {
namespace {

// True once `pid` is gone or a zombie: it no longer runs.
bool Ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

bool EndsWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Ended(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Ended(pid);
}

TEST(RunInChild, ReturnsWhatTheChildReturned) {
  std::string output;
  ASSERT_TRUE(RunInChild("test", [] { return std::string(100000, 'x') + "end"; }, &output).ok());
  EXPECT_EQ(output.size(), 100003u);
  EXPECT_EQ(output.substr(100000), "end");
}

TEST(RunInChild, ACrashIsAnInternalErrorNamingTheSignal) {
  std::string output;
  const Status status = RunInChild("simgrid", [] {
    std::signal(SIGSEGV, SIG_DFL);  // die of the signal, also under ASan (which handles SEGV)
    std::raise(SIGSEGV);
    return std::string();
  }, &output);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(), "simgrid: the process ended with signal 11 (Segmentation fault)");
}

TEST(Subprocess, DestroyingItKillsAndReapsTheChild) {
  pid_t pid = -1;
  {
    Subprocess child;
    ASSERT_TRUE(child.Start([] {
      ::pause();
      return std::string();
    }, /*own_group=*/true).ok());
    pid = child.pid();
    EXPECT_FALSE(Ended(pid));
  }
  // Reaped, not a zombie: the pid is gone.
  EXPECT_EQ(::kill(pid, 0), -1);
}

TEST(Subprocess, TheChildDiesWithItsParent) {
  // A middle process starts a child that would wait forever, reports its pid, then exits.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::close(fds[0]);
    Subprocess child;
    if (!child.Start([] {
          ::pause();
          return std::string();
        }, false).ok()) {
      ::_exit(1);
    }
    const pid_t pid = child.pid();
    (void)!::write(fds[1], &pid, sizeof(pid));
    ::_exit(0);  // no destructor runs: only PR_SET_PDEATHSIG can end the child
  }
  ::close(fds[1]);
  pid_t grandchild = -1;
  ASSERT_EQ(::read(fds[0], &grandchild, sizeof(grandchild)),
            static_cast<ssize_t>(sizeof(grandchild)));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(middle, &status, 0);
  EXPECT_TRUE(EndsWithin(grandchild, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace ppsim
