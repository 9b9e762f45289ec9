// The inputs the benchmarks share: a 1F1B schedule of p ranks and m microbatches with uniform
// 1 ms / 2 ms stages, on the ideal platform with 5 us links.
#ifndef PPSIM_TESTS_BENCH_BENCH_INPUTS_H_
#define PPSIM_TESTS_BENCH_BENCH_INPUTS_H_

#include <cstdio>
#include <cstdlib>

#include "models/stage_costs.h"
#include "platforms/platform.h"
#include "schedules/registry.h"
#include "tests/support/platforms.h"

namespace ppsim {

struct BenchInputs {
  Schedule schedule;
  StageCosts costs;
  PlatformSpec platform;
};

// Benchmarks stop at once on a status that is not ok: their inputs are fixed.
inline void Check(const Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "benchmark input: %s\n", status.message().c_str());
  std::abort();
}

inline BenchInputs MakeBenchInputs(int32_t p, int32_t m) {
  BenchInputs in;
  Check(GenerateSchedule("1F1B", ScheduleParams{p, 1, m}, &in.schedule));
  CostValues inputs;
  inputs.forward_s = {1e-3};
  inputs.backward_s = {2e-3};
  Check(OverrideStageCosts(inputs, nullptr, p, FieldNames(), &in.costs));
  in.platform = IdealPlatform(p, 5e-6);
  return in;
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_BENCH_BENCH_INPUTS_H_
