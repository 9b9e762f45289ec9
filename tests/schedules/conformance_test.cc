// PyTorch's own schedule orders (tests/data/torch/*.json, produced by
// torch.distributed.pipelining at pytorch/pytorch@cff2ecc8): every accepted configuration's
// per-rank compute actions must equal ours, and every configuration torch rejects must be
// rejected.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "schedules/registry.h"

namespace ppsim {
namespace {

bool IsComputeAction(const std::string& a) {
  if (!a.empty() && a[0] == '(') return true;
  size_t i = 0;
  while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) ++i;
  return i < a.size() && std::string("FIWB").find(a[i]) != std::string::npos && i + 1 < a.size() &&
         std::isdigit(static_cast<unsigned char>(a[i + 1]));
}

class TorchConformance : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchConformance, OrdersAndRejectionsMatchTorch) {
  const std::string path = std::string(PPSIM_SOURCE_DIR) + "/tests/data/torch/" + GetParam() +
                           ".json";
  std::string text;
  ASSERT_TRUE(ReadFile(path, &text).ok()) << "the conformance data is part of the repository";
  const nlohmann::json data = nlohmann::json::parse(text);
  const std::string name = data["schedule"].get<std::string>();
  ASSERT_EQ(name, GetParam());
  ASSERT_FALSE(data["configs"].empty());
  int checked = 0;
  for (const nlohmann::json& config : data["configs"]) {
    ScheduleParams params;
    params.num_ranks = config["pp"].get<int64_t>();
    params.num_microbatches = config["microbatches"].get<int64_t>();
    params.stages_per_rank = config["stages_per_rank"].get<int64_t>();
    const std::string where = name + " pp=" + std::to_string(params.num_ranks) +
                              " m=" + std::to_string(params.num_microbatches) +
                              " v=" + std::to_string(params.stages_per_rank);
    Schedule schedule;
    const Status status = GenerateSchedule(name, params, &schedule);
    if (!config["ok"].get<bool>()) {
      EXPECT_EQ(status.code(), StatusCode::kInvalidInput)
          << where << ": torch rejects it (" << config["error"].get<std::string>() << ")";
      ++checked;
      continue;
    }
    ASSERT_TRUE(status.ok()) << where << ": " << status.message();
    const auto& want_ranks = config["order"];
    ASSERT_EQ(schedule.orders.size(), want_ranks.size()) << where;
    for (size_t r = 0; r < want_ranks.size(); ++r) {
      std::vector<std::string> want;
      for (const nlohmann::json& a : want_ranks[r]) {
        if (!a.is_null() && IsComputeAction(a.get<std::string>())) want.push_back(a.get<std::string>());
      }
      std::vector<std::string> got;
      for (const Action& a : schedule.orders[r]) got.push_back(FormatAction(a));
      ASSERT_EQ(got, want) << where << " rank " << r;
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(data["configs"].size()));
}

INSTANTIATE_TEST_SUITE_P(Torch, TorchConformance,
                         ::testing::Values("GPipe", "Interleaved1F1B", "LoopedBFS",
                                           "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV"));

}  // namespace
}  // namespace ppsim
