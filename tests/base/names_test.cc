#include "base/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsim {
namespace {

const std::vector<std::string> kSchedules = {
    "GPipe", "1F1B",  "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble",
    "DualPipeV", "Megatron-Interleaved", "ZB-H1", "ZB-H2", "ZB-1p", "ZB-2p", "ZB-auto", "ZB-V",
    "V-Half", "V-Min", "DualPipe"};

TEST(ClosestName, SpellingPunctuationAndWordOrder) {
  EXPECT_EQ(ClosestName("1F1F", kSchedules), "1F1B");                       // one edit
  EXPECT_EQ(ClosestName("ZBV", kSchedules), "ZB-V");                         // punctuation
  EXPECT_EQ(ClosestName("zb_h1", kSchedules), "ZB-H1");
  EXPECT_EQ(ClosestName("dual-pipe", kSchedules), "DualPipe");
  EXPECT_EQ(ClosestName("1f1b-interleaved", kSchedules), "Interleaved1F1B");  // word order
  EXPECT_EQ(ClosestName("interleaved-megatron", kSchedules), "Megatron-Interleaved");
  EXPECT_EQ(ClosestName("PipeDream", kSchedules), "");                       // nothing close
}

TEST(UnknownName, ListsTheValidNamesAndSuggestsOne) {
  EXPECT_EQ(UnknownName("schedule", "1f1b-interleaved", {"1F1B", "Interleaved1F1B"}),
            "unknown schedule '1f1b-interleaved'; valid: 1F1B, Interleaved1F1B (did you mean "
            "Interleaved1F1B?)");
}

}  // namespace
}  // namespace ppsim
