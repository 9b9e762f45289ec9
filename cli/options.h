// Reading a command's arguments, the same way for every command: Boost.Program_options with long
// options ("--name value", "--name=value"), the short options a command declares (-o, -j),
// positional words, and -h/--help anywhere. The RunConfig's fields are options by reflection:
// each field is the flag of the same name (dashes for underscores), its help and group taken from
// the field's (ppsim.proto.flag) option in experiments/run_config.proto.
#ifndef PPSIM_CLI_OPTIONS_H_
#define PPSIM_CLI_OPTIONS_H_

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "experiments/run_config.pb.h"

namespace ppsim::cli {

// Exit codes: 0 success; 1 the simulation found a problem (a deadlock, --fail-on-oom, a failed
// sweep point) or failed; 2 invalid input or usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitSimulationProblem = 1;
inline constexpr int kExitInvalidInput = 2;

// Prints the status's message as one line (several for a file's errors); returns 2 for invalid
// input, else 1.
int Fail(std::ostream& err, const Status& status);

struct ParsedArgs {
  boost::program_options::variables_map values;
  std::vector<std::string> positional;
  bool help = false;  // -h or --help was given; nothing else was checked
};

// Parses `args` of `ppsim COMMAND` against `options`. At most `max_positional` positional words
// (-1: any number). Unknown options get "did you mean"; stray words, repeated options and missing
// values are InvalidInput naming them. A valued long option takes the next word as its value even
// when it starts with '-' ("--f -1ms" reaches the duration parser, which says what is wrong).
Status ParseArgs(std::string_view command, const std::vector<std::string>& args,
                 const boost::program_options::options_description& options, int max_positional,
                 ParsedArgs* parsed);

// The text of a valued option, or "" when it was not given.
std::string OptionText(const ParsedArgs& parsed, const char* name);

// The options of the RunConfig fields whose group is in `groups`, one options_description per
// group in group order, captioned as `ppsim run --help` shows them; `only` (when not empty)
// restricts them to those fields.
boost::program_options::options_description RunConfigOptions(
    const std::vector<proto::Flag::Group>& groups, const std::vector<std::string>& only = {});

// Sets every RunConfig field given in `values` on `config` (by reflection, with the one scalar
// setter of config/config_file.h); messages start with the flag ("--pp: expected an integer, got
// 'four'"). With `fields`, the names of the fields set ("set.PATH" for each --set PATH=...).
Status FillRunConfig(const boost::program_options::variables_map& values,
                     proto::RunConfig* config, std::vector<std::string>* fields = nullptr);

// A whole number >= `minimum` given to `flag` (-j, --top): InvalidInput "-j: must be at least 1;
// got 0" or "-j: invalid value 'x'; expected a whole number >= 1".
Status ParseCount(const std::string& flag, const std::string& text, int32_t minimum,
                  int32_t* value);

// --shard I/N: 0 <= I < N.
Status ParseShard(const std::string& text, int32_t* index, int32_t* count);

// "--layers-per-stage" for the field layers_per_stage.
std::string FlagOf(std::string_view field);

}  // namespace ppsim::cli

#endif  // PPSIM_CLI_OPTIONS_H_
