// `ppsim serve`: the explorer, a local web app (Boost.Beast over Boost.Asio, one thread).
//
// Routes: GET / (the page), /explorer.js, /explorer.css, /api/fields, /api/health; POST
// /api/run, /api/timeline, /api/command (serve/api.h) and /api/upload?name=NAME. Nothing else
// is served: the page's files are compiled in, and no request names a path on disk.
//
// Each POST that simulates runs in a child process forked from the server (base/subprocess.h):
// SimGrid runs one engine per process, a crash or a runaway run takes down only its request, and
// the child starts warm (the presets and libraries the server loaded). At most `workers` run at a
// time (429 beyond); one running longer than `timeout_s` is killed (504). A request carrying the
// header X-Ppsim-Page: ID replaces the running request of the same page, which is killed and
// answered 409: the page asks again as a field changes, and only the last answer matters.
//
// Safety: bound to loopback unless `bind` says otherwise; headers over 8 KiB get 431, bodies
// over their limit 413 (read no further), a client that sends its request slower than
// `read_timeout_s` is dropped, at most `max_connections` at once (503 beyond). SIGINT and SIGTERM
// stop it gracefully: no new connection, running children killed and answered 503, the uploads
// removed, exit 0.
//
// Test hook (environment): PPSIM_SERVE_CRASH=1 makes every simulation's process die of SIGSEGV.
#ifndef PPSIM_SERVE_SERVER_H_
#define PPSIM_SERVE_SERVER_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "base/status.h"

namespace ppsim::serve {

struct ServeOptions {
  std::string bind = "127.0.0.1";
  int32_t port = 8080;  // 0: any free port (printed)
  int32_t workers = 2;  // simulations at a time
  double timeout_s = 60;
  double read_timeout_s = 10;
  int64_t max_body_bytes = 1 << 20;          // a run's fields
  int64_t max_upload_bytes = 64 << 20;       // a profile or job file
  int64_t max_uploads_bytes = int64_t{1} << 30;  // every upload together
  int64_t max_response_bytes = 256 << 20;    // what a child may answer
  int32_t max_connections = 128;
};

inline constexpr int64_t kMaxHeaderBytes = 8 << 10;

// Serves until SIGINT or SIGTERM. Prints "ppsim serve: http://ADDR:PORT/ (Ctrl-C stops)" to
// `log` once listening. InvalidInput naming --bind or --port when the address cannot be bound.
Status Serve(const ServeOptions& options, std::ostream& log);

}  // namespace ppsim::serve

#endif  // PPSIM_SERVE_SERVER_H_
