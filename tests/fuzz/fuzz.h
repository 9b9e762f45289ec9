// What every harness shares: the input as text, and a check that a reader's failure is a located,
// readable InvalidInput (anything else — a crash, a leak, undefined behaviour, an exception — is
// found by the sanitizers and libFuzzer themselves).
#ifndef PPSIM_TESTS_FUZZ_FUZZ_H_
#define PPSIM_TESTS_FUZZ_FUZZ_H_

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ppsim::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// A status a reader returned: OK, or InvalidInput whose every line starts with `source` and
// stays short. Aborts (a finding) otherwise.
inline void ExpectReadable(const Status& status, std::string_view source) {
  if (status.ok()) return;
  const std::string& message = status.message();
  if (status.code() == StatusCode::kDeadlock) return;  // an order that cannot run: a valid answer
  bool bad = status.code() != StatusCode::kInvalidInput;
  size_t start = 0;
  while (!bad && start < message.size()) {
    const size_t end = std::min(message.find('\n', start), message.size());
    const std::string_view line = std::string_view(message).substr(start, end - start);
    bad = (!source.empty() && line.substr(0, source.size()) != source) || line.size() > 4000;
    start = end + 1;
  }
  if (bad) {
    std::fprintf(stderr, "unreadable or unlocated message:\n%s\n", message.c_str());
    std::abort();
  }
}

}  // namespace ppsim::fuzz

#endif  // PPSIM_TESTS_FUZZ_FUZZ_H_
