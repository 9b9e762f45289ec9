// The ppsim command line. main() only calls RunCli().
#ifndef PPSIM_EXPERIMENTS_CLI_H_
#define PPSIM_EXPERIMENTS_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace ppsim {

// Exit codes: 0 success; 1 the simulation found a problem (deadlock) or failed; 2 invalid input
// or usage. Results go to `out`; an error is one line on `err`.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_CLI_H_
