// `--torchtitan FILE.toml` (run_config.proto's torchtitan): a torchtitan job file read by
// interop/torchtitan_toml.h into the request's fields, under the flags the request gives itself.
#ifndef PPSIM_EXPERIMENTS_TORCHTITAN_RUN_H_
#define PPSIM_EXPERIMENTS_TORCHTITAN_RUN_H_

#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/request.h"
#include "experiments/run_config.pb.h"

namespace ppsim {

// *merged = `config` when it names no job file. Otherwise the job file's settings (each located
// "FILE: section.key" in messages), then every field `config` sets (flags beside --torchtitan
// override; a schedule or schedule file given replaces the file's schedule, microbatches or a
// global batch its microbatches, and a model, pp or stages per rank its layer split). The world
// size the file's degrees must multiply to is the GPUs of the request's platform (--platform,
// --nodes, --set), loaded here. Appends the file's notes ("torchtitan: ignored ...") to *notes
// and its path to *sources (no output may overwrite it).
Status ApplyTorchtitan(const proto::RunConfig& config, const Locator& where,
                       const ResolveOptions& options, proto::RunConfig* merged,
                       std::vector<std::string>* notes, std::vector<std::string>* sources);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_TORCHTITAN_RUN_H_
