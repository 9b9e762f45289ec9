// Small helpers to describe and run simulations in tests: runs are requests (proto::RunConfig,
// values as flags take them), resolved the way `ppsim run` resolves its flags.
#ifndef PPSIM_TESTS_SUPPORT_RUNS_H_
#define PPSIM_TESTS_SUPPORT_RUNS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "tests/support/platforms.h"

namespace ppsim {

// A run of a named schedule on the ideal platform with the given forward and backward times.
inline proto::RunConfig IdealRun(const std::string& schedule, int32_t p, int32_t m,
                                 const std::string& f, const std::string& b, EngineKind engine) {
  proto::RunConfig config;
  config.set_schedule(schedule);
  config.set_pp(p);
  config.set_microbatches(m);
  config.set_f(f);
  if (!b.empty()) config.set_b(b);
  config.set_platform("ideal");
  config.set_engine(std::string(EngineName(engine)));
  return config;
}

inline proto::RunConfig WithLatency(proto::RunConfig config, double latency_s) {
  config.set_p2p_latency(ExactText(latency_s));
  return config;
}

inline void SetEngine(proto::RunConfig* config, EngineKind engine) {
  config->set_engine(std::string(EngineName(engine)));
}

// The request's one run, resolved as `ppsim run` flags are.
inline RunSpec SpecOf(const proto::RunConfig& config) {
  RunRequest request;
  const Status status = ResolveRun(config, std::make_shared<FlagLocator>(), {}, &request);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(request.runs.size(), 1u);
  return request.runs.empty() ? RunSpec() : request.runs[0];
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

inline RunResult RunOk(const proto::RunConfig& config) { return RunOk(SpecOf(config)); }

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
