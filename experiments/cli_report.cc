// Placeholder: written by the html-report helper.
#include <string>
#include <vector>

#include "experiments/cli_flags.h"

namespace ppsim::cli {

int ReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return Usage(err, "ppsim report: not built yet");
}

}  // namespace ppsim::cli
