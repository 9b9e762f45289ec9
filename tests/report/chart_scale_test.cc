// The report's chart scales: ticks and positions from their closed forms.
#include "report/chart_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ppsim {
namespace {

TEST(ChartScale, MicrobatchesSixteenToOneTwentyEightAreBaseTwoLog) {
  const std::vector<double> xs = {16, 32, 64, 128};
  EXPECT_EQ(ChooseScaleKind(xs, true), ScaleKind::kLog2);
  const ChartScale scale = Log2Scale(16, 128);
  EXPECT_EQ(scale.ticks, (std::vector<double>{16, 32, 64, 128}));
  EXPECT_EQ(scale.labels, (std::vector<std::string>{"16", "32", "64", "128"}));
  // log2(x / 16) / log2(128 / 16): each doubling is a third of the axis.
  EXPECT_DOUBLE_EQ(scale.Fraction(16), 0);
  EXPECT_NEAR(scale.Fraction(32), 1.0 / 3, 1e-12);
  EXPECT_NEAR(scale.Fraction(64), 2.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(scale.Fraction(128), 1);
  // 48 sits at log2(48 / 16) / log2(128 / 16) = log2(3) / 3 of the way.
  EXPECT_NEAR(scale.Fraction(48), std::log2(3.0) / 3, 1e-12);
}

TEST(ChartScale, BaseTwoTicksReachThePowersAroundTheValues) {
  const ChartScale scale = Log2Scale(3, 40);
  EXPECT_EQ(scale.ticks, (std::vector<double>{2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(Log2Scale(0.25, 1).labels, (std::vector<std::string>{"0.25", "0.5", "1"}));
}

TEST(ChartScale, BaseTenTicksAreOneTwoFive) {
  const ChartScale scale = Log10Scale(3, 470);
  EXPECT_EQ(scale.ticks, (std::vector<double>{2, 5, 10, 20, 50, 100, 200, 500}));
  EXPECT_EQ(scale.labels.front(), "2");
  EXPECT_EQ(scale.labels.back(), "500");
  EXPECT_NEAR(scale.Fraction(10), std::log10(10.0 / 2) / std::log10(500.0 / 2), 1e-12);
  EXPECT_EQ(Log10Scale(0.5, 5).ticks, (std::vector<double>{0.5, 1, 2, 5}));
}

TEST(ChartScale, LogOnlyWhenPositiveAndWide) {
  EXPECT_EQ(ChooseScaleKind({1, 2, 3}, true), ScaleKind::kLinear);
  EXPECT_EQ(ChooseScaleKind({8, 16}, true), ScaleKind::kLinear);       // 2x
  EXPECT_EQ(ChooseScaleKind({8, 16, 32}, true), ScaleKind::kLog2);     // 4x, powers of two
  EXPECT_EQ(ChooseScaleKind({8, 16, 32}, false), ScaleKind::kLinear);  // 4x, not > 10x
  EXPECT_EQ(ChooseScaleKind({1, 20}, true), ScaleKind::kLog10);        // 20x, 20 not a power
  EXPECT_EQ(ChooseScaleKind({1, 10}, false), ScaleKind::kLinear);      // exactly 10x
  EXPECT_EQ(ChooseScaleKind({0, 100}, true), ScaleKind::kLinear);      // 0 has no log
  EXPECT_EQ(ChooseScaleKind({-1, 100}, true), ScaleKind::kLinear);
  EXPECT_EQ(ChooseScaleKind({}, true), ScaleKind::kLinear);
}

TEST(ChartScale, PowersOfTwo) {
  for (double v : {1.0, 2.0, 64.0, 1024.0}) EXPECT_TRUE(IsPowerOfTwo(v)) << v;
  for (double v : {0.0, 0.5, 3.0, 48.0, -4.0}) EXPECT_FALSE(IsPowerOfTwo(v)) << v;
}

TEST(ChartScale, LinearTicksCoverTheRangeInOneTwoFiveSteps) {
  // 0 to 27: steps of 1 or 2 give more than 8 ticks, 5 gives 0..30 (7 ticks).
  const ChartScale scale = LinearScale(0, 27, 8);
  EXPECT_EQ(scale.ticks, (std::vector<double>{0, 5, 10, 15, 20, 25, 30}));
  EXPECT_DOUBLE_EQ(scale.Fraction(15), 0.5);
  EXPECT_FALSE(scale.log());
}

}  // namespace
}  // namespace ppsim
