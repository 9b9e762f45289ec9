// Cluster scale: properties a user relies on when growing data parallelism on a cluster, on whole
// runs (replica 0 standing for every replica, NCCL's choice of collectives).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/llama405b.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

// llama3-8b, 1F1B, pp 4, tp 8 (a node per rank), 8 microbatches, `dp` replicas on DGX H100.
proto::RunConfig Llama8b(int32_t dp, const std::string& bucket = "") {
  proto::RunConfig config;
  config.set_model("llama3-8b");
  config.set_schedule("1F1B");
  config.set_pp(4);
  config.set_tp(8);
  config.set_microbatches(8);
  config.set_platform("dgx-h100");
  config.set_nodes(4 * dp);
  config.set_dp(dp);
  if (!bucket.empty() && dp > 1) config.set_grad_bucket(bucket);
  return config;
}

TEST(Scale, MoreReplicasNeverMakeAnIterationFaster) {
  // Each replica runs the same microbatches; more replicas only lengthen the gradients' rings
  // (2(n - 1) steps of S/n) or trees. With 16 MB buckets NCCL's choice moves from ring to tree.
  for (const std::string bucket : {"", "16MB"}) {
    SCOPED_TRACE("bucket " + bucket);
    double previous = 0;
    for (int32_t dp : {1, 2, 4, 8, 16, 32, 64, 128}) {
      const double makespan = RunOk(Llama8b(dp, bucket)).metrics.makespan_s;
      EXPECT_GE(makespan, previous) << "dp " << dp;
      previous = makespan;
    }
  }
}

TEST(Scale, ASlowerNicSlowsThe16kGpuRun) {
  // The README's benchmark run: llama3-405b, Interleaved1F1B, pp 16, V 2, tp 8 with sequence
  // parallelism, full recomputation, dp 128 on 2048 DGX H100 nodes (16,384 GPUs).
  proto::RunConfig config = Llama405bRun(128);
  const RunResult fast = RunOk(config);
  EXPECT_EQ(fast.gpus, 16384);
  EXPECT_EQ(fast.replicas_simulated, 1);
  config.add_set("nic.bandwidth=200Gbps");
  const RunResult slow = RunOk(config);
  // Half the NIC bandwidth: every pipeline transfer and gradient ring step across nodes is slower.
  EXPECT_GT(slow.metrics.makespan_s, fast.metrics.makespan_s);
  EXPECT_GT(slow.metrics.allreduce_tail_s, 1.5 * fast.metrics.allreduce_tail_s);
}

}  // namespace
}  // namespace ppsim
