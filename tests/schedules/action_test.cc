#include "schedules/action.h"

#include <gtest/gtest.h>

namespace ppsim {
namespace {

Action Parse(const std::string& text) {
  Action action;
  Status status = ParseAction(text, &action);
  EXPECT_TRUE(status.ok()) << status.message();
  return action;
}

std::string ParseError(const std::string& text) {
  Action action;
  Status status = ParseAction(text, &action);
  EXPECT_FALSE(status.ok()) << text;
  return status.message();
}

TEST(Action, ParsesTorchComputeActions) {
  const Action f = Parse("0F0");
  EXPECT_FALSE(f.is_overlap());
  EXPECT_EQ(f.op(0), (Op{OpKind::kForward, StageIndex(0), MicrobatchIndex(0)}));
  EXPECT_EQ(Parse("1I2").op(0), (Op{OpKind::kBackwardInput, StageIndex(1), MicrobatchIndex(2)}));
  EXPECT_EQ(Parse("2W3").op(0), (Op{OpKind::kBackwardWeight, StageIndex(2), MicrobatchIndex(3)}));
  EXPECT_EQ(Parse("13B107").op(0), (Op{OpKind::kBackward, StageIndex(13), MicrobatchIndex(107)}));
}

TEST(Action, ParsesOverlapOfForwardAndBackward) {
  const Action a = Parse("(0F7;7B3)OVERLAP_F_B");
  ASSERT_TRUE(a.is_overlap());
  EXPECT_EQ(a.op(0), (Op{OpKind::kForward, StageIndex(0), MicrobatchIndex(7)}));
  EXPECT_EQ(a.op(1), (Op{OpKind::kBackward, StageIndex(7), MicrobatchIndex(3)}));
}

TEST(Action, RoundTrips) {
  for (const char* text : {"0F0", "1I2", "2W3", "3B1", "63F4095", "(0F7;7B3)OVERLAP_F_B",
                           "(7F4;0B0)OVERLAP_F_B"}) {
    EXPECT_EQ(FormatAction(Parse(text)), text);
  }
}

TEST(Action, RejectsMalformedTextWithTheValidForms) {
  EXPECT_EQ(ParseError("2X5"),
            "invalid action '2X5'; expected <stage><F|I|B|W>[<microbatch>] or "
            "(<a>;<b>)OVERLAP_F_B");
  for (const char* text : {"", "F0", "0F", "0F0x", " 0F0", "0f0", "-1F0", "0F-1", "0SEND_F1",
                           "(0F7;7B3)", "(0F7,7B3)OVERLAP_F_B", "(0F7;7B3)OVERLAP_F_Bx",
                           "99999999999F0", "0F99999999999"}) {
    ParseError(text);
  }
}

TEST(Action, OverlapMustPairForwardWithFullBackward) {
  EXPECT_EQ(ParseError("(0I7;7B3)OVERLAP_F_B"),
            "invalid action '(0I7;7B3)OVERLAP_F_B'; an OVERLAP_F_B pairs a forward with a full "
            "backward, (<stage>F<microbatch>;<stage>B<microbatch>)OVERLAP_F_B");
}

}  // namespace
}  // namespace ppsim
