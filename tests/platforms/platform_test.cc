#include "platforms/platform.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsim {
namespace {

TEST(MakePlatform, IdealHasOneGpuPerRankAndTheGivenLinks) {
  PlatformOptions options;
  PlatformSpec spec;
  ASSERT_TRUE(MakePlatform("ideal", options, 64, &spec).ok());
  EXPECT_EQ(spec.num_gpus, 64);
  EXPECT_EQ(spec.UncontendedTransferTime(RankIndex(0), RankIndex(1), 1'000'000'000), 0.0);
  options.has_p2p_latency = true;
  options.p2p_latency_s = 5e-6;
  options.has_p2p_bandwidth = true;
  options.p2p_bandwidth_bytes_per_s = 50e9;
  ASSERT_TRUE(MakePlatform("ideal", options, 4, &spec).ok());
  EXPECT_DOUBLE_EQ(spec.UncontendedTransferTime(RankIndex(3), RankIndex(2), 1'000'000'000),
                   5e-6 + 0.02);
}

TEST(MakePlatform, H100NodeHasEightGpusBehindNvlinkPorts) {
  PlatformSpec spec;
  ASSERT_TRUE(MakePlatform("h100-node", PlatformOptions(), 8, &spec).ok());
  EXPECT_EQ(spec.num_gpus, 8);
  EXPECT_EQ(spec.link_bandwidth_bytes_per_s, 450e9);
  EXPECT_DOUBLE_EQ(spec.RouteLatency(RankIndex(0), RankIndex(7)), 3e-6);
  EXPECT_EQ(spec.gpu_flops_per_s, 989e12);
}

TEST(MakePlatform, ReportsWhatDoesNotFit) {
  PlatformSpec spec;
  EXPECT_EQ(MakePlatform("h100-node", PlatformOptions(), 9, &spec).message(),
            "--pp: 9 ranks need 9 GPUs; platform h100-node has 8");
  EXPECT_EQ(MakePlatform("dgx-z", PlatformOptions(), 2, &spec).message(),
            "--platform: unknown platform 'dgx-z'; valid: ideal, h100-node");
  PlatformOptions options;
  options.has_p2p_latency = true;
  EXPECT_EQ(MakePlatform("h100-node", options, 2, &spec).message(),
            "--p2p-latency: applies to --platform ideal only; h100-node has its own NVLink ports");
}

}  // namespace
}  // namespace ppsim
