// The commands of the ppsim command line, one file each (run.cc, sweep.cc, ...). Each takes the
// arguments after its name, prints results to `out` and errors to `err`, prints its options for
// -h/--help anywhere, and returns the exit code (options.h).
#ifndef PPSIM_CLI_COMMANDS_H_
#define PPSIM_CLI_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace ppsim::cli {

using CommandArgs = std::vector<std::string>;

int RunCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int SweepCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int MergeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int SearchCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ReportCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ScheduleCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int SchedulesCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ModelCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ProfileCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int PlatformsCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace ppsim::cli

#endif  // PPSIM_CLI_COMMANDS_H_
