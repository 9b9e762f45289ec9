// Status: the result of an operation a user's input can make fail.
//
// Library code never exits or aborts on user input; it returns a Status and the caller (the CLI's
// main) chooses the exit code. Messages follow "where: what is wrong; what is valid". A Status
// must be looked at: dropping one is a compile-time warning.
#ifndef PPSIM_BASE_STATUS_H_
#define PPSIM_BASE_STATUS_H_

#include <string>
#include <utility>
#include <vector>

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

// Every problem of one input, in the order found, so that a user fixes them in one pass: one
// InvalidInput with a line per problem.
class ErrorList {
 public:
  void Add(std::string message) { messages_.push_back(std::move(message)); }
  // Adds a failed status's message; an OK status adds nothing.
  void Check(const Status& status) {
    if (!status.ok()) messages_.push_back(status.message());
  }
  bool empty() const { return messages_.empty(); }
  // OK without problems.
  Status ToStatus() const {
    std::string message;
    for (const std::string& m : messages_) message += (message.empty() ? "" : "\n") + m;
    return messages_.empty() ? Status() : Status::InvalidInput(std::move(message));
  }

 private:
  std::vector<std::string> messages_;
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
