// What the explorer's server answers, apart from the network: each request is a function of its
// body that returns a response. The simulating ones (run, timeline, command) are meant to run in a
// child process of the server (serve/server.h forks one per request); nothing here forks.
//
// A request body is a JSON object of run fields named as experiment files name them ("pp",
// "microbatches", "set": ["nic.bandwidth=100Gbps"]), read by the one configuration reader
// (config/config_file.h) into the one run request (experiments/request.h). So a body answers
// what `ppsim run --format json` prints for the same fields, and a bad one gets the message an
// experiment file with those fields would get, located in the body ("request:1:8: pp: must be at
// least 1; got 0").
//
// Files: the server reads no path a request names. A field that takes a file (profile, model,
// platform, torchtitan, ...) takes a preset name where it has presets, or "upload:NAME" for a
// file posted to /api/upload; `megatron` takes arguments, or "@upload:NAME". Output files (trace,
// timeline, emit_file, ...) are refused: /api/timeline draws the timeline instead.
#ifndef PPSIM_SERVE_API_H_
#define PPSIM_SERVE_API_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/embedded.h"

namespace ppsim {

// The explorer page's files (serve/page): index.html, explorer.js, explorer.css.
EmbeddedFiles ExplorerPageFiles();

}  // namespace ppsim

namespace ppsim::serve {

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// Where uploads live and where a request may write its scratch files: folders the server owns.
struct ApiFolders {
  std::string uploads;  // "upload:NAME" is uploads + "/" + NAME
  std::string scratch;  // a request's timeline is drawn here, read back and removed
  int64_t max_uploads_bytes = int64_t{1} << 30;  // the uploads together
};

// {"error": message} with `status`.
ApiResponse ErrorResponse(int status, std::string_view message);

// POST /api/run: the runs' JSON exactly as `ppsim run --format json` prints it (an object for one
// schedule, an array for a comma list), or 400 with the message.
ApiResponse RunApi(std::string_view body, const ApiFolders& folders);

// POST /api/timeline: the first run's timeline picture (HTML, hover and zoom), or 400.
ApiResponse TimelineApi(std::string_view body, const ApiFolders& folders);

// POST /api/command: {"ppsim": "ppsim run ...", "megatron": ..., "torchtitan": ...}: the body as
// a `ppsim run` command line, and each framework's launch (--emit) of its first run, or that
// framework's message when the run cannot be launched there.
ApiResponse CommandApi(std::string_view body, const ApiFolders& folders);

// GET /api/fields: every run field the form shows, from the run request's description
// (run_config.proto's flag options: group, value name, help), with the presets (models, platforms,
// schedules) and the field's flag.
std::string FieldsJson();

// POST /api/upload?name=NAME: keeps `bytes` as uploads/NAME after checking the name (letters,
// digits, '.', '-', '_'; not starting with '.'; at most 100 characters) and answers
// {"field_value": "upload:NAME"}. 400 for a bad name; 413 when the uploads together would pass
// folders.max_uploads_bytes (a file replaced counts once).
ApiResponse UploadApi(std::string_view name, std::string_view bytes, const ApiFolders& folders);

// A response as the child sends it through its pipe, and back.
std::string SerializeResponse(const ApiResponse& response);
ApiResponse ParseResponse(std::string_view text);

}  // namespace ppsim::serve

#endif  // PPSIM_SERVE_API_H_
