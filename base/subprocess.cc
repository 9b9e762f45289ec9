#include "base/subprocess.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "base/escape.h"
#include "base/files.h"

namespace ppsim {

Subprocess::Subprocess(Subprocess&& other) noexcept { *this = std::move(other); }

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (running()) Kill();
    Close();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    input_fd_ = std::exchange(other.input_fd_, -1);
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
  if (input_fd_ >= 0) ::close(input_fd_);
  input_fd_ = -1;
}

Status Subprocess::Start(const std::function<std::string()>& work, bool own_group,
                         int stderr_fd) {
  return Fork(own_group, stderr_fd, /*with_input=*/false,
              [&work](int, int output) { return WriteAll(output, work()) ? 0 : 4; });
}

Status Subprocess::StartServing(const std::function<void(int input, int output)>& serve,
                                bool own_group) {
  return Fork(own_group, -1, /*with_input=*/true, [&serve](int input, int output) {
    serve(input, output);
    return 0;
  });
}

Status Subprocess::Fork(bool own_group, int stderr_fd, bool with_input,
                        const std::function<int(int input, int output)>& body) {
  int fds[2];
  int input[2] = {-1, -1};
  if (::pipe(fds) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  if (with_input && ::pipe(input) != 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::Internal(std::string("pipe: ") + std::strerror(error));
  }
  // Buffered output would be written twice, once by each process.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {fds[0], fds[1], input[0], input[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return Status::Internal(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (input[1] >= 0) ::close(input[1]);
    if (own_group) ::setpgid(0, 0);
    if (stderr_fd >= 0) ::dup2(stderr_fd, STDERR_FILENO);
    // Die with the parent; if it died before prctl took effect, stop now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(5);
    ::_exit(body(input[0], fds[1]));
  }
  if (own_group) ::setpgid(pid, pid);
  ::close(fds[1]);
  if (input[0] >= 0) ::close(input[0]);
  pid_ = pid;
  fd_ = fds[0];
  input_fd_ = input[1];
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
  // The child's standard error, kept in memory for the message.
  const int errors = ::memfd_create("ppsim-child-stderr", MFD_CLOEXEC);
  Subprocess child;
  Status status = child.Start(work, /*own_group=*/false, errors);
  if (!status.ok()) {
    if (errors >= 0) ::close(errors);
    return Status::Internal(what + ": " + status.message());
  }
  while (child.Read()) {
  }
  const int wait_status = child.Wait();
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    std::string last_line;
    if (errors >= 0) {
      char buffer[4096];
      const off_t size = ::lseek(errors, 0, SEEK_END);
      const off_t from = size > static_cast<off_t>(sizeof(buffer)) ? size - sizeof(buffer) : 0;
      const ssize_t n = ::pread(errors, buffer, sizeof(buffer), from);
      std::string tail(buffer, n > 0 ? static_cast<size_t>(n) : 0);
      while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
      last_line = tail.substr(tail.rfind('\n') == std::string::npos ? 0 : tail.rfind('\n') + 1);
      // A logging library's prefix ("[0.000000] file.cpp:529: [root/CRITICAL] ") says nothing.
      const size_t tag = last_line.find("] ", last_line.find("/CRITICAL"));
      if (last_line.find("/CRITICAL") != std::string::npos && tag != std::string::npos) {
        last_line = last_line.substr(tag + 2);
      }
      ::close(errors);
    }
    return Status::Internal(what + ": the process ended with " + DescribeWaitStatus(wait_status) +
                            (last_line.empty() ? "" : ": " + Printable(last_line)));
  }
  if (errors >= 0) ::close(errors);
  *output = child.output();
  return Status();
}

}  // namespace ppsim
