#include "base/subprocess.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "base/files.h"

namespace ppsim {

Subprocess::Subprocess(Subprocess&& other) noexcept { *this = std::move(other); }

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (running()) Kill();
    Close();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    own_group_ = other.own_group_;
    output_ = std::move(other.output_);
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (running()) Kill();
  Close();
}

void Subprocess::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status Subprocess::Start(const std::function<std::string()>& work, bool own_group) {
  int fds[2];
  if (::pipe(fds) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  // Buffered output would be written twice, once by each process.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::Internal(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (own_group) ::setpgid(0, 0);
    // Die with the parent; if it died before prctl took effect, stop now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(5);
    const bool sent = WriteAll(fds[1], work());
    ::_exit(sent ? 0 : 4);
  }
  if (own_group) ::setpgid(pid, pid);
  ::close(fds[1]);
  pid_ = pid;
  fd_ = fds[0];
  own_group_ = own_group;
  output_.clear();
  return Status();
}

bool Subprocess::Read() {
  if (fd_ < 0) return false;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      output_.append(buffer, static_cast<size_t>(n));
      return true;
    }
    Close();
    return false;
  }
}

int Subprocess::Wait() {
  int wait_status = 0;
  while (::waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return wait_status;
}

int Subprocess::Kill() {
  if (own_group_) ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  Close();
  return Wait();
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  return "exit status " + std::to_string(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
}

Status RunInChild(const std::string& what, const std::function<std::string()>& work,
                  std::string* output) {
  Subprocess child;
  Status status = child.Start(work, /*own_group=*/false);
  if (!status.ok()) return Status::Internal(what + ": " + status.message());
  while (child.Read()) {
  }
  const int wait_status = child.Wait();
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    return Status::Internal(what + ": the process ended with " + DescribeWaitStatus(wait_status));
  }
  *output = child.output();
  return Status();
}

}  // namespace ppsim
