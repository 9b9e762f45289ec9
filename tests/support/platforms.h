// Platforms for tests and benchmarks, built the way runs build them.
#ifndef PPSIM_TESTS_SUPPORT_PLATFORMS_H_
#define PPSIM_TESTS_SUPPORT_PLATFORMS_H_

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/numbers.h"
#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"

namespace ppsim {

// The shortest text that parses back to exactly `value` ("inf" for infinity).
inline std::string ExactText(double value) { return FormatNumber(value); }

// `choice` placed for `num_ranks` x dp x tp; aborts with the message if it is rejected.
inline PlatformSpec PlatformOrDie(const PlatformChoice& choice, int32_t num_ranks, int32_t dp = 1,
                                  int32_t tp = 1) {
  PlatformSpec platform;
  const Status status =
      BuildPlatform(choice, {.pp = num_ranks, .dp = dp, .tp = tp}, FlagLocator(), &platform);
  if (!status.ok()) {
    std::fprintf(stderr, "platform: %s\n", status.message().c_str());
    std::abort();
  }
  return platform;
}

// `ideal` with the given latency and bandwidth of every transfer.
inline PlatformChoice IdealChoice(double latency_s = 0, double bandwidth_bytes_per_s = INFINITY) {
  PlatformChoice choice;
  choice.platform = "ideal";
  choice.p2p_latency = ExactText(latency_s);
  choice.p2p_bandwidth = ExactText(bandwidth_bytes_per_s);
  return choice;
}

inline PlatformSpec IdealPlatform(int32_t num_ranks, double latency_s = 0,
                                  double bandwidth_bytes_per_s = INFINITY) {
  return PlatformOrDie(IdealChoice(latency_s, bandwidth_bytes_per_s), num_ranks);
}

// A preset (or file) with --set overrides and --nodes.
inline PlatformChoice PresetChoice(const std::string& name, std::vector<std::string> sets = {},
                                   int32_t nodes = 0) {
  PlatformChoice choice;
  choice.platform = name;
  choice.sets = std::move(sets);
  choice.nodes = nodes;
  return choice;
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_PLATFORMS_H_
