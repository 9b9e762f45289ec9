#include "schedules/schedule_text.h"

#include <gtest/gtest.h>

namespace ppsim {
namespace {

TEST(ScheduleText, RoundTrips) {
  const std::string text =
      "rank 0: 0F0 0F1 (0F2;0B0)OVERLAP_F_B 0B1 0B2\n"
      "rank 1: 1F0 1F1 1I0 1W0 1F2 1I1 1W1 1I2 1W2\n"
      "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2\n"
      "rank 3: 3F0 3F1 3B1 3F2 3B2\n";
  Schedule s;
  ASSERT_TRUE(ParseScheduleText(text, "t", &s).ok());
  EXPECT_EQ(FormatScheduleText(s), text);
}

TEST(ScheduleText, IgnoresBlankLinesAndComments) {
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("# two ranks\n\nrank 0:  0F0\t0B0 \n\nrank 1: 1F0 1B0", "t", &s)
                  .ok());
  EXPECT_EQ(FormatScheduleText(s), "rank 0: 0F0 0B0\nrank 1: 1F0 1B0\n");
}

TEST(ScheduleText, ReportsFileLineAndColumnOfABadAction) {
  Schedule s;
  EXPECT_EQ(ParseScheduleText("rank 0: 0F0 0B0\nrank 1: 1F0 2X5 1B0\n", "my.txt", &s).message(),
            "my.txt:2:13: invalid action '2X5'; expected <stage><F|I|B|W>[<microbatch>] or "
            "(<a>;<b>)OVERLAP_F_B");
}

TEST(ScheduleText, RequiresRanksInOrder) {
  Schedule s;
  EXPECT_EQ(ParseScheduleText("rank 0: 0F0 0B0\nrank 2: 1F0 1B0\n", "my.txt", &s).message(),
            "my.txt:2:1: expected 'rank 1:'; each line is 'rank <r>: <actions>' with ranks in "
            "order from 0");
}

}  // namespace
}  // namespace ppsim
