// Small helpers to describe and run simulations in tests.
#ifndef PPSIM_TESTS_SUPPORT_RUNS_H_
#define PPSIM_TESTS_SUPPORT_RUNS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/run.h"
#include "tests/support/platforms.h"

namespace ppsim {

// A run of a named schedule on the ideal platform with the given cost flags.
inline RunSpec IdealSpec(const std::string& schedule, int32_t p, int32_t m, const std::string& f,
                         const std::string& b, EngineKind engine) {
  RunSpec spec;
  spec.schedule_name = schedule;
  spec.params = ScheduleParams{p, 1, m};
  spec.costs.forward = f;
  spec.costs.backward = b;
  spec.platform.platform = "ideal";
  spec.engine = engine;
  return spec;
}

inline RunSpec WithLatency(RunSpec spec, double latency_s) {
  spec.platform.p2p_latency = ExactText(latency_s);
  return spec;
}

inline RunResult RunOk(const RunSpec& spec) {
  PreparedRun prepared;
  Status status = PrepareRun(spec, &prepared);
  EXPECT_TRUE(status.ok()) << status.message();
  RunResult result;
  if (!status.ok()) return result;
  status = ExecuteRun(prepared, &result);
  EXPECT_TRUE(status.ok()) << status.message();
  return result;
}

inline std::vector<double> Spans(const RunResult& r) {
  std::vector<double> spans;
  for (const RankMetrics& k : r.metrics.ranks) spans.push_back(k.span_s);
  return spans;
}

inline std::vector<int64_t> Peaks(const RunResult& r) {
  std::vector<int64_t> peaks;
  for (const RankMetrics& k : r.metrics.ranks) peaks.push_back(k.peak_activation_bytes);
  return peaks;
}

constexpr EngineKind kBothEngines[] = {EngineKind::kSimGrid, EngineKind::kCriticalPath};

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_RUNS_H_
