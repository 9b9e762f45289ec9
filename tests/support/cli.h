// Running the command line in tests, and the files it reads and writes.
#ifndef PPSIM_TESTS_SUPPORT_CLI_H_
#define PPSIM_TESTS_SUPPORT_CLI_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/cli.h"

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

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_CLI_H_
