// The ppsim command line: `ppsim COMMAND [options]`. main() only calls RunCli().
#ifndef PPSIM_CLI_CLI_H_
#define PPSIM_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace ppsim {

// Runs the command `args` names (args[0]; no program name). Exit codes: 0 success; 1 the
// simulation found a problem (deadlock) or failed; 2 invalid input or usage. Results go to
// `out`; an error is one line on `err`.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ppsim

#endif  // PPSIM_CLI_CLI_H_
