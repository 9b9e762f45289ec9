// Stage costs for tests, from request fields written as flags take them ({"f", "1ms"}), resolved
// and built the way a run builds them.
#ifndef PPSIM_TESTS_SUPPORT_COSTS_H_
#define PPSIM_TESTS_SUPPORT_COSTS_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/flag_locator.h"
#include "config/config_file.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "models/stage_costs.h"

namespace ppsim {

using CostFields = std::vector<std::pair<std::string, std::string>>;

// The costs the fields give ({"f", "1"}, {"activation", "10,20"}); empty when they do not parse.
inline CostValues CostValuesOf(const CostFields& fields) {
  proto::RunConfig config;
  for (const auto& [field, value] : fields) {
    const Status set = SetFieldFromText(field, value, field, &config);
    EXPECT_TRUE(set.ok()) << set.message();
  }
  RunSpec spec;
  const Status status = ResolveCosts(config, FlagLocator(), {}, &spec);
  EXPECT_TRUE(status.ok()) << status.message();
  return spec.costs;
}

// OverrideStageCosts of the fields for `num_stages` stages, messages as `ppsim run` flags name
// them.
inline Status BuildCosts(const CostFields& fields, int32_t num_stages, StageCosts* costs) {
  *costs = StageCosts();  // no model's costs to override
  return OverrideStageCosts(CostValuesOf(fields), nullptr, num_stages, FlagLocator(), costs);
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_COSTS_H_
