// The SimGrid engine against the critical-path oracle: with nothing contending (the ideal
// platform's dedicated fat-pipe links) every task must start and end at the same time in both,
// for random feasible schedules, random uneven costs, latencies, bandwidths and message sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/random_schedule.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

StageCosts RandomCosts(std::mt19937_64& rng, int32_t stages) {
  std::uniform_real_distribution<double> time(0.05, 2.0);
  std::uniform_int_distribution<int64_t> bytes(0, 2'000'000'000);
  StageCosts c;
  for (int32_t s = 0; s < stages; ++s) {
    c.forward_s.push_back(time(rng));
    c.backward_input_s.push_back(time(rng));
    c.backward_weight_s.push_back(time(rng));
    c.backward_s.push_back(rng() % 2 ? c.backward_input_s[s] + c.backward_weight_s[s] : time(rng));
    c.overlap_s.push_back(time(rng) + time(rng));
    const int64_t activation = bytes(rng);
    c.activation_bytes.push_back(activation);
    c.activation_w_bytes.push_back(activation / 3);
    c.message_bytes.push_back(bytes(rng));
  }
  return c;
}

TEST(EnginesAgree, OnRandomContentionFreeRuns) {
  std::mt19937_64 rng(20261121);
  int with_overlap = 0;
  for (int round = 0; round < 24; ++round) {
    const int32_t p = 1 + static_cast<int32_t>(rng() % 6);
    const int32_t s = p + static_cast<int32_t>(rng() % (p + 2));
    const int32_t m = 1 + static_cast<int32_t>(rng() % 8);
    const Schedule schedule = RandomSchedule(rng, p, s, m, 0.4);
    ASSERT_TRUE(CheckSchedule(schedule).ok()) << CheckSchedule(schedule).message();
    for (const auto& order : schedule.orders) {
      with_overlap += std::count_if(order.begin(), order.end(),
                                    [](const Action& a) { return a.is_overlap(); });
    }
    const StageCosts costs = RandomCosts(rng, s);
    const double latency_s = std::uniform_real_distribution<double>(0, 0.2)(rng);
    const double bandwidth =
        round % 4 == 0 ? INFINITY : std::uniform_real_distribution<double>(1e9, 1e11)(rng);
    const PlatformSpec platform = IdealPlatform(p, latency_s, bandwidth);

    TaskGraph graph;
    ASSERT_TRUE(CompileTaskGraph(schedule, costs, &graph).ok());
    Timeline oracle;
    Timeline simgrid;
    ASSERT_TRUE(RunCriticalPath(graph, platform, &oracle).ok());
    const Status status = RunSimGrid(graph, platform, &simgrid);
    ASSERT_TRUE(status.ok()) << status.message();

    const RunMetrics expected = ComputeMetrics(schedule, costs, graph, oracle);
    const RunMetrics got = ComputeMetrics(schedule, costs, graph, simgrid);
    const double tolerance = 1e-9 * expected.makespan_s;
    EXPECT_NEAR(got.makespan_s, expected.makespan_s, tolerance) << "round " << round;
    for (size_t t = 0; t < graph.num_tasks(); ++t) {
      ASSERT_NEAR(simgrid.start_s[t], oracle.start_s[t], tolerance) << "round " << round << " task " << t;
      ASSERT_NEAR(simgrid.end_s[t], oracle.end_s[t], tolerance) << "round " << round << " task " << t;
    }
  }
  EXPECT_GT(with_overlap, 0) << "the random schedules should exercise OVERLAP_F_B";
}

}  // namespace
}  // namespace ppsim
