// `--megatron ARGS|@FILE` (a RunConfig field): Megatron-LM training arguments
// (interop/megatron_args.h) turned into the request's own fields before it is resolved.
//
// The arguments' values come first; every field the request gives itself overrides them (flags
// beside --megatron win); its tp, pp, cp and ep are read as the arguments' own degrees, so that
// what Megatron derives from them (the padded vocabulary, the layer split) follows. Without
// --model the arguments' model is the run's. Without --dp the
// data-parallel size is Megatron's: the platform's GPUs (--platform, --nodes) / (tp x pp x cp),
// which must divide. With --overlap-grad-reduce (and no --grad-bucket) the gradients go in
// Megatron's buckets: --ddp-bucket-size, else max(40M, 1M x dp x cp) parameters, of 4 bytes each
// (2 with --grad-reduce-in-bf16). Messages about a field the arguments set name the argument
// ("--megatron: --tensor-model-parallel-size: ...", or its file's "FILE:LINE:COL").
#ifndef PPSIM_EXPERIMENTS_MEGATRON_REQUEST_H_
#define PPSIM_EXPERIMENTS_MEGATRON_REQUEST_H_

#include <memory>
#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/run_config.pb.h"
#include "models/transformer.h"

namespace ppsim {

struct MegatronRequest {
  proto::RunConfig config;                       // the arguments' fields, then the request's own
  std::shared_ptr<const Locator> where;          // names the arguments where they set a field
  std::shared_ptr<const TransformerSpec> model;  // the arguments' model; null when --model wins
  std::vector<std::string> notes;                // what was assumed and ignored, for the output
  std::string file;                              // the @FILE read, if any ("" for inline arguments)
};

// REQUIRES: config.megatron() is not empty. `directory`: where relative paths are taken from
// ("" or ending in '/'). InvalidInput for bad arguments or a world size that tp x pp x cp does
// not divide.
Status ApplyMegatron(const proto::RunConfig& config, std::shared_ptr<const Locator> where,
                     const std::string& directory, MegatronRequest* out);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_MEGATRON_REQUEST_H_
