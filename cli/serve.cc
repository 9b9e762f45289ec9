// `ppsim serve`: the explorer (serve/server.h) on a local port.
#include <unistd.h>

#include <ostream>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "config/units.h"
#include "serve/server.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kServeUsage =
    "usage: ppsim serve [--port N] [--bind ADDR] [--workers N] [--timeout TIME]\n"
    "  then open the address it prints; Ctrl-C (SIGINT) or SIGTERM stops it\n";

po::options_description ServeOptionsDescription() {
  po::options_description d("ppsim serve options", 100);
  d.add_options()("port", po::value<std::string>()->value_name("N"),
                  "the TCP port (default 8080; 0: any free port, printed)")(
      "bind", po::value<std::string>()->value_name("ADDR"),
      "the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to "
      "the network)")("workers", po::value<std::string>()->value_name("N"),
                      "simulations at a time, each in its own process (default: the cores)")(
      "timeout", po::value<std::string>()->value_name("TIME"),
      "stop a simulation that runs longer (default 60s)");
  return d;
}

Status ReadServeOptions(const ParsedArgs& parsed, serve::ServeOptions* options) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  options->workers = cores > 0 ? static_cast<int32_t>(cores) : 1;
  if (parsed.values.count("port")) {
    RETURN_IF_ERROR(ParseCount("--port", OptionText(parsed, "port"), 0, &options->port));
    if (options->port > 65535) {
      return Status::InvalidInput("--port: must be at most 65535; got " +
                                  std::to_string(options->port));
    }
  }
  if (parsed.values.count("bind")) options->bind = OptionText(parsed, "bind");
  if (parsed.values.count("workers")) {
    RETURN_IF_ERROR(ParseCount("--workers", OptionText(parsed, "workers"), 1, &options->workers));
  }
  if (parsed.values.count("timeout")) {
    RETURN_IF_ERROR(ParseDuration("--timeout", OptionText(parsed, "timeout"), &options->timeout_s));
    if (!(options->timeout_s > 0) || options->timeout_s > 86400) {
      return Status::InvalidInput("--timeout: must be more than 0 s and at most 1 day; got " +
                                  OptionText(parsed, "timeout"));
    }
  }
  return Status();
}

}  // namespace

int ServeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = ServeOptionsDescription();
  ParsedArgs parsed;
  Status status = ParseArgs("serve", args, options, 0, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kServeUsage << options;
    return kExitOk;
  }
  serve::ServeOptions serve_options;
  status = ReadServeOptions(parsed, &serve_options);
  if (status.ok()) status = serve::Serve(serve_options, out);
  return status.ok() ? kExitOk : Fail(err, status);
}

}  // namespace ppsim::cli
