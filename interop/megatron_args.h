// Megatron-LM training arguments (pretrain_gpt.py's command line, as NVIDIA/Megatron-LM's
// megatron/training/arguments.py reads it at commit d98e8a64) read into ppsim's terms, for
// `ppsim run --megatron ARGS|@FILE`.
//
// The arguments are split as a shell splits them (base/shell_words.h: quotes, line continuations,
// comments); `@FILE` reads them from a file. Each is looked up in ONE table (MegatronArguments),
// whose row says how many values it takes (a switch, one value, or a list up to the next --flag;
// `--flag=value` works too, as argparse takes it) and what ppsim does with it:
//   applied   it sets a ppsim request field (the model's shape, the batch, the parallel degrees,
//             the layer placement, recomputation, overlaps, precision, MoE, MLA);
//   ignored   it does not change one iteration's time or memory (data, tokenizer files, logging,
//             checkpointing, learning rate and optimizer hyper-parameters, initialisation,
//             dropout, evaluation): listed in one note;
//   assumed   it changes little and is not modelled: a note says what is assumed;
//   refused   it changes performance and ppsim does not model it: an error naming it (and the
//             issue that adds it, when one does).
// An argument not in the table is an error naming it: nothing is dropped silently. As argparse
// does, a flag given twice takes its last value.
//
// What Megatron derives is derived the same way: ffn_hidden_size 4h (SwiGLU: int(8h/3 / 64) x 64),
// kv_channels h/a, --group-query-attention's groups (default 1), the vocabulary padded to a
// multiple of --make-vocab-size-divisible-by (default 128) x TP (ceil), sequence parallelism off at
// TP 1, --recompute-activations as selective, the global batch mbs x dp when not given (one
// microbatch), the schedule (1F1B, or Megatron-Interleaved with virtual stages) with Megatron's
// p2p calls.
#ifndef PPSIM_INTEROP_MEGATRON_ARGS_H_
#define PPSIM_INTEROP_MEGATRON_ARGS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "models/transformer.h"

namespace ppsim {

enum class MegatronArity { kSwitch, kValue, kList };
enum class MegatronUse { kApplied, kIgnored, kAssumed, kRefused };

// One row of the table. `ppsim`: for applied rows, the ppsim flag or model field it sets ("--tp",
// "model: layers"); `why`: for refused rows, why (and which issue adds it), for assumed rows, the
// assumption, for ignored rows, what kind of argument it is.
struct MegatronArgument {
  std::string_view flag;  // "--num-layers"
  MegatronArity arity;
  MegatronUse use;
  std::string_view ppsim;
  std::string_view why;
};

// The table, in groups (the model, batch, parallelism, ..., what is ignored).
std::span<const MegatronArgument> MegatronArguments();
// The row of `flag` ("--tensor-model-parallel-size"), or null.
const MegatronArgument* FindMegatronArgument(std::string_view flag);

// A ppsim request field set from the arguments: its name in experiments/run_config.proto
// ("tp"), its value as a flag's text ("8"), and the Megatron argument it came from.
struct MegatronSetting {
  std::string field;
  std::string value;
  std::string flag;
};

// What the arguments ask for, neutral of the request type.
struct MegatronRun {
  TransformerSpec model;  // named "megatron" (or "megatron @FILE"); its notes are below
  std::vector<MegatronSetting> settings;
  // What was assumed, one sentence each, then one sentence listing what was ignored.
  std::vector<std::string> notes;
  // The GPUs of one pipeline (tp x pp x cp) as the arguments give them (a request's own --tp,
  // --pp or --cp may override them; experiments/megatron_request.h derives dp from the result).
  int64_t gpus_per_pipeline = 1;
  // --overlap-grad-reduce: the gradients are reduced in buckets of bucket_params parameters (0:
  // Megatron's default, max(40M, 1M x dp)) of grad_bytes_per_param bytes each.
  bool overlap_grad_reduce = false;
  int64_t bucket_params = 0;
  int32_t grad_bytes_per_param = 4;
};

// Reads `text`: the arguments, or "@FILE" (read with base/files.h ReadFile, at most 1 MiB).
// Messages start with `where` ("--megatron"), or with "FILE:LINE:COL" for a file's argument:
// "--megatron: --hidden-sise: unknown Megatron-LM argument; did you mean --hidden-size? ...",
// "args.txt:3:5: --num-layers: expected a whole number, got 'x'", "--megatron: --num-layers:
// missing; ...", "--megatron: --tensor-model-parallel-size: 8 does not divide the 12 attention
// heads". InvalidInput for every problem; on error *run is unspecified.
//
// `degrees`: the request's own parallel degrees beside the arguments (0: not given), which
// override the arguments' before anything is derived from them, so that what depends on them
// (the vocabulary's padding to a multiple of TP, the expert tensor-parallel default, the layer
// split over PP, sequence parallelism at TP 1) is derived as Megatron would with them.
struct MegatronDegrees {
  int64_t tp = 0, pp = 0, cp = 0, ep = 0;
};
Status ReadMegatronArgs(std::string_view text, const std::string& where, MegatronRun* run,
                        const MegatronDegrees& degrees = {});

// The hint for a Megatron flag given to ppsim itself ("--tensor-model-parallel-size"): "ppsim's
// flag is --tp; or pass Megatron-LM arguments whole with --megatron '...'"; "" when `flag` is no
// Megatron argument.
std::string MegatronFlagHint(std::string_view flag);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_MEGATRON_ARGS_H_
