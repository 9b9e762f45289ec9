// Transfers through SimGrid: an uncontended transfer takes latency + bytes / bandwidth; two
// transfers leaving one GPU through its NVSwitch port share the port's bandwidth.
#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/metrics.h"
#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

struct Result {
  double simgrid_s;
  double critical_path_s;
};

// Runs `text` with zero compute time and `message` bytes on every boundary.
Result Makespans(const std::string& text, const std::string& platform_name,
                 const PlatformOptions& options, const std::string& message) {
  Schedule s;
  EXPECT_TRUE(ParseScheduleText(text, "t", &s).ok());
  CostText cost_text;
  cost_text.forward = "0";
  cost_text.backward = "0";
  cost_text.message = message;
  StageCosts costs;
  EXPECT_TRUE(BuildStageCosts(cost_text, s.num_stages, &costs).ok());
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, &graph).ok());
  PlatformSpec platform;
  EXPECT_TRUE(MakePlatform(platform_name, options, s.num_ranks, &platform).ok());
  Timeline simgrid;
  Timeline oracle;
  EXPECT_TRUE(RunSimGrid(graph, platform, &simgrid).ok());
  EXPECT_TRUE(RunCriticalPath(graph, platform, &oracle).ok());
  return {ComputeMetrics(s, costs, graph, simgrid).makespan_s,
          ComputeMetrics(s, costs, graph, oracle).makespan_s};
}

constexpr const char* kOneMicrobatch = "rank 0: 0F0 0B0\nrank 1: 1F0 1B0\n";
constexpr const char* kTwoMicrobatchesAtOnce = "rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1F1 1B0 1B1\n";

TEST(Network, IdealTransferTakesLatencyPlusBytesOverBandwidth) {
  PlatformOptions options;
  options.p2p_latency_s = 5e-6;
  options.p2p_bandwidth_bytes_per_s = 100e9;
  // An activation there and a gradient back: 2 x (5 us + 1 GB / 100 GB/s).
  const Result r = Makespans(kOneMicrobatch, "ideal", options, "1GB");
  EXPECT_NEAR(r.simgrid_s, 2 * (5e-6 + 0.01), 1e-15);
  EXPECT_NEAR(r.critical_path_s, 2 * (5e-6 + 0.01), 1e-15);
}

TEST(Network, IdealLinksNeverContend) {
  PlatformOptions options;
  options.p2p_bandwidth_bytes_per_s = 100e9;
  // Both activations leave at time 0 and travel at full bandwidth each.
  const Result r = Makespans(kTwoMicrobatchesAtOnce, "ideal", options, "1GB");
  EXPECT_NEAR(r.simgrid_s, 2 * 0.01, 1e-15);
}

TEST(Network, H100NodeTransferCrossesTwoPorts) {
  // 3 us GPU to GPU, 450 GB/s per direction: 450 MB takes 1 ms.
  const Result r = Makespans(kOneMicrobatch, "h100-node", PlatformOptions(), "450MB");
  EXPECT_NEAR(r.simgrid_s, 2 * (3e-6 + 1e-3), 1e-12);
  EXPECT_NEAR(r.critical_path_s, 2 * (3e-6 + 1e-3), 1e-12);
}

TEST(Network, TwoTransfersLeavingOneGpuShareItsNvlinkPort) {
  // Both activations leave GPU 0 at once (zero-time forwards) and share port 0 upward, so each
  // takes 2 ms; then both gradients share port 1 upward. The critical path ignores contention.
  const Result r = Makespans(kTwoMicrobatchesAtOnce, "h100-node", PlatformOptions(), "450MB");
  EXPECT_NEAR(r.simgrid_s, 2 * (3e-6 + 2e-3), 1e-12);
  EXPECT_NEAR(r.critical_path_s, 2 * (3e-6 + 1e-3), 1e-12);
}

}  // namespace
}  // namespace ppsim
