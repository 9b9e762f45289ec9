// `ppsim serve`: the explorer (serve/server.h) on a local port.
#include <unistd.h>

#include <ostream>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "cli/options.h"
#include "config/units.h"
#include "serve/server.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kServeUsage =
    "usage: ppsim serve [--port N] [--bind ADDR] [--workers N] [--timeout TIME] "
    "[--read-timeout TIME] [--max-connections N] [--max-uploads BYTES]\n"
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
      "stop a simulation that runs longer (default 60s)")(
      "read-timeout", po::value<std::string>()->value_name("TIME"),
      "drop a client that takes longer to send its request (default 10s)")(
      "max-connections", po::value<std::string>()->value_name("N"),
      "connections at once; more are answered 503 (default 128)")(
      "max-uploads", po::value<std::string>()->value_name("BYTES"),
      "the uploads kept together (default 1GiB; each at most 64 MiB)");
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
  for (auto [flag, seconds] : {std::pair{"timeout", &options->timeout_s},
                                {"read-timeout", &options->read_timeout_s}}) {
    if (!parsed.values.count(flag)) continue;
    const std::string text = OptionText(parsed, flag);
    RETURN_IF_ERROR(ParseDuration("--" + std::string(flag), text, seconds));
    if (!(*seconds > 0) || *seconds > 86400) {
      return Status::InvalidInput("--" + std::string(flag) +
                                  ": must be more than 0 s and at most 1 day; got " + text);
    }
  }
  if (parsed.values.count("max-uploads")) {
    RETURN_IF_ERROR(
        ParseSize("--max-uploads", OptionText(parsed, "max-uploads"), &options->max_uploads_bytes));
  }
  if (parsed.values.count("max-connections")) {
    RETURN_IF_ERROR(ParseCount("--max-connections", OptionText(parsed, "max-connections"), 1,
                               &options->max_connections));
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
