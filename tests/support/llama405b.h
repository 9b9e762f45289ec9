// The cluster-scale benchmark run (README, Performance): Llama 3 405B as Llama 3 trained it,
// Interleaved1F1B, pp 16, V 2, tp 8 with sequence parallelism, full recomputation, sequence 8192,
// 16 microbatches, dp replicas on 16 x dp DGX H100 nodes (dp 128: 16,384 GPUs). Shared by the
// scale tests and tests/bench/scale_bench.cc.
#ifndef PPSIM_TESTS_SUPPORT_LLAMA405B_H_
#define PPSIM_TESTS_SUPPORT_LLAMA405B_H_

#include <cstdint>

#include "experiments/run_config.pb.h"

namespace ppsim {

inline proto::RunConfig Llama405bRun(int32_t dp) {
  proto::RunConfig config;
  config.set_model("llama3-405b");
  config.set_schedule("Interleaved1F1B");
  config.set_pp(16);
  config.set_stages_per_rank(2);
  config.set_tp(8);
  config.set_sequence_parallel(true);
  config.set_recompute("full");
  config.set_seq_len(8192);
  config.set_microbatches(16);
  config.set_platform("dgx-h100");
  config.set_nodes(16 * dp);
  config.set_dp(dp);
  return config;
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_LLAMA405B_H_
