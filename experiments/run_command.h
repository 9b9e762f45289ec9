// A run request as the `ppsim run` command that makes it: for output (a search's candidates), never
// to be parsed back inside ppsim.
#ifndef PPSIM_EXPERIMENTS_RUN_COMMAND_H_
#define PPSIM_EXPERIMENTS_RUN_COMMAND_H_

#include <string>
#include <vector>

#include "experiments/run_config.pb.h"

namespace ppsim {

// The flags of every field `config` sets, in the order run_config.proto declares them: "--flag
// value" (the field's name with dashes, as experiments/locators.h FlagLocator names it), a switch
// alone for a true bool, one "--set PATH=VALUE" per entry of `set`. Numbers in their shortest
// exact form.
std::vector<std::string> RunFlags(const proto::RunConfig& config);

// "ppsim run" and RunFlags, each word quoted for a POSIX shell when it needs to be ('a b').
std::string RunCommandLine(const proto::RunConfig& config);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_COMMAND_H_
