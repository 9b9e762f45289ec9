// Running the command line in tests, and the files it reads and writes.
#ifndef PPSIM_TESTS_SUPPORT_CLI_H_
#define PPSIM_TESTS_SUPPORT_CLI_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace ppsim {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

// `ppsim ARGS...` in this process.
inline CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

// Writes `text` to `name` in the test's temporary directory; returns the path.
inline std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Runs the named schedule (`choice`: --schedule NAME and its sizes) and the order in `path` with
// the same `costs` (ending in --format csv) and expects the same CSV row after the label.
inline void ExpectFileRunsAsNamed(const std::vector<std::string>& choice, const std::string& path,
                                  const std::vector<std::string>& costs) {
  std::vector<std::string> named = {"run"};
  named.insert(named.end(), choice.begin(), choice.end());
  named.insert(named.end(), costs.begin(), costs.end());
  std::vector<std::string> from_file = {"run", "--schedule-file", path};
  from_file.insert(from_file.end(), costs.begin(), costs.end());
  const CliResult a = Cli(named);
  const CliResult b = Cli(from_file);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  // Everything after the schedule's name (its label) is the same.
  const std::string row_a = a.out.substr(a.out.find('\n') + 1);
  const std::string row_b = b.out.substr(b.out.find('\n') + 1);
  EXPECT_EQ(row_a.substr(row_a.find(',')), row_b.substr(row_b.find(','))) << choice[1];
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_CLI_H_
