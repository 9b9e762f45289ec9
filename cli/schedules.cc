// `ppsim schedules`: the schedules, one line each.
#include <boost/program_options/options_description.hpp>
#include <string>

#include "cli/commands.h"
#include "base/flag_locator.h"
#include "cli/options.h"
#include "schedules/registry.h"

namespace ppsim::cli {

namespace po = boost::program_options;

int SchedulesCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  ParsedArgs parsed;
  Status status = ParseArgs("schedules", args, po::options_description(), 0, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << "usage: ppsim schedules\n\nLists the schedules, one line each.\n";
    return kExitOk;
  }
  for (const ScheduleInfo& info : AllSchedules()) {
    out << info.name << std::string(info.name.size() < 10 ? 10 - info.name.size() : 1, ' ')
        << NameFields(info.summary, FlagLocator()) << "\n";
  }
  return kExitOk;
}

}  // namespace ppsim::cli
