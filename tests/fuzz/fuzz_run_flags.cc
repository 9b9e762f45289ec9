// `ppsim run` flags, resolved: the input is the flags, one per line, read by the command line's
// own parser (options.h) into a run request, resolved, and its runs prepared (not simulated).
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/flag_locator.h"
#include "cli/options.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args;
  std::istringstream lines{std::string(ppsim::fuzz::Text(data, size))};
  for (std::string line; std::getline(lines, line) && args.size() < 64;) args.push_back(line);
  static const boost::program_options::options_description options = ppsim::cli::RunConfigOptions(
      {ppsim::proto::Flag::SCHEDULE, ppsim::proto::Flag::COSTS, ppsim::proto::Flag::MODEL,
       ppsim::proto::Flag::CLUSTER, ppsim::proto::Flag::PARALLELISM, ppsim::proto::Flag::LIMITS});
  ppsim::cli::ParsedArgs parsed;
  ppsim::Status status = ppsim::cli::ParseArgs("run", args, options, 0, &parsed);
  ppsim::fuzz::ExpectReadable(status, "");
  if (!status.ok() || parsed.help) return 0;
  ppsim::proto::RunConfig config;
  status = ppsim::cli::FillRunConfig(parsed.values, &config);
  ppsim::fuzz::ExpectReadable(status, "");
  if (!status.ok()) return 0;
  ppsim::RunRequest request;
  status = ppsim::ResolveRun(config, std::make_shared<ppsim::FlagLocator>(), {}, &request);
  ppsim::fuzz::ExpectReadable(status, "");
  if (!status.ok()) return 0;
  for (ppsim::RunSpec spec : request.runs) {
    spec.max_tasks = 100'000;  // a fuzzer's memory, not a user's
    ppsim::PreparedRun prepared;
    ppsim::fuzz::ExpectReadable(ppsim::PrepareRun(spec, &prepared, /*compile=*/true), "");
  }
  return 0;
}
