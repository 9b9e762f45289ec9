// A run request as the `ppsim run` command that makes it: for output (a search's candidates), never
// to be parsed back inside ppsim. The flags are named by a Locator (the CLI's, cli/flag_locator.h).
#ifndef PPSIM_EXPERIMENTS_RUN_COMMAND_H_
#define PPSIM_EXPERIMENTS_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "base/locator.h"
#include "experiments/run_config.pb.h"

namespace ppsim {

// The flags of every field `config` sets, in the order run_config.proto declares them: "FLAG
// value" (FLAG as `flags` names the field: "--pp"), a switch alone for a true bool, one
// "FLAG PATH=VALUE" per entry of `set` (FLAG as `flags` names "set"). Numbers in their shortest
// exact form.
std::vector<std::string> RunFlags(const proto::RunConfig& config, const Locator& flags);

// "ppsim run" and RunFlags, each word quoted for a POSIX shell when it needs to be ('a b').
std::string RunCommandLine(const proto::RunConfig& config, const Locator& flags);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_COMMAND_H_
