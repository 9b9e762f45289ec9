#include "interop/torch_schedule_csv.h"

#include <gtest/gtest.h>

namespace ppsim {
namespace {

TEST(ScheduleTorchCsv, ReadsTorchsComputeOnlyCsvWithBubbles) {
  // Two ranks of torch's Interleaved1F1B-style CSV: empty cells are bubble slots.
  Schedule s;
  ASSERT_TRUE(ParseScheduleTorchCsv("0F0,0F1,,0B0,0B1\n,1F0,1B0,1F1,1B1\n", "t.csv", &s).ok());
  EXPECT_EQ(FormatScheduleTorchCsv(s), "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n");
  EXPECT_EQ(s.num_stages, 2);
  EXPECT_EQ(s.num_microbatches, 2);
}

TEST(ScheduleTorchCsv, ReportsFileRowAndColumn) {
  Schedule s;
  EXPECT_EQ(ParseScheduleTorchCsv("0F0,0B0\n1F0,1B0,1F1,2X5\n", "my.csv", &s).message(),
            "my.csv:2:13: invalid action '2X5'; expected <stage><F|I|B|W>[<microbatch>] or "
            "(<a>;<b>)OVERLAP_F_B");
}

}  // namespace
}  // namespace ppsim
