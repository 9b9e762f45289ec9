// Status: the result of an operation a user's input can make fail.
//
// Library code never exits or aborts on user input; it returns a Status and the caller (the CLI's
// main) chooses the exit code. Messages follow "where: what is wrong; what is valid". A Status
// must be looked at: dropping one is a compile-time warning.
#ifndef PPSIM_BASE_STATUS_H_
#define PPSIM_BASE_STATUS_H_

#include <string>
#include <utility>

namespace ppsim {

enum class StatusCode {
  kOk,
  kInvalidInput,  // The user's input is malformed or inconsistent (CLI exit 2).
  kDeadlock,      // The schedule's order cannot execute (CLI exit 1).
  kInternal,      // Something outside the user's control failed (CLI exit 1).
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.

  static Status InvalidInput(std::string message) {
    return Status(StatusCode::kInvalidInput, std::move(message));
  }
  static Status Deadlock(std::string message) {
    return Status(StatusCode::kDeadlock, std::move(message));
  }
  static Status Internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The same code with another message.
  Status WithMessage(std::string message) const { return Status(code_, std::move(message)); }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace ppsim

// Evaluates `expr`, a Status, and returns it from the enclosing function (or lambda) unless it is
// OK: the one line of error plumbing.
#define RETURN_IF_ERROR(expr)                              \
  do {                                                     \
    if (::ppsim::Status status_ = (expr); !status_.ok()) { \
      return status_;                                      \
    }                                                      \
  } while (false)

#endif  // PPSIM_BASE_STATUS_H_
