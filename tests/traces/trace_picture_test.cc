// The timeline picture of an executed run (traces/trace_picture.cc): each rank's memory lane is its
// static bytes, reserve and live activations, topping out at the run's peak memory to the byte,
// with the GPU's capacity drawn and out-of-memory ranks flagged. Expected values are worked out
// by hand from 1F1B's memory rule: rank r of p holds at most min(p - r, m) microbatches.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "experiments/run.h"
#include "tests/support/runs.h"
#include "traces/timeline_picture.h"
#include "traces/trace.h"

namespace ppsim {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
// The layout of traces/timeline_picture.cc: a row's boxes, a gap, its memory band (taller with a
// capacity line), and the gap to the next row.
constexpr double kBoxHeight = 22;
constexpr double kMemGap = 2;
constexpr double kCapacityMemHeight = 32;
constexpr double kRowGap = 8;
constexpr double kPrinted = 0.05 + 1e-9;  // coordinates are printed with one decimal

struct PictureRun {
  PreparedRun prepared;
  RunResult result;
  Timeline timeline;
  TimelinePicture picture;
};

// 1F1B on two ranks, four microbatches, F = 1 ms, B = 2 ms, on the ideal platform, with the
// memory flags given.
PictureRun RunPicture(const std::string& activation, const std::string& grad_bytes,
                      const std::string& reserve, double overhead, const std::string& limit) {
  proto::RunConfig spec;
  spec.set_schedule("1F1B");
  spec.set_pp(2);
  spec.set_microbatches(4);
  spec.set_f("1ms");
  spec.set_b("2ms");
  spec.set_activation(activation);
  spec.set_grad_bytes(grad_bytes);
  spec.set_memory_reserve(reserve);
  spec.set_activation_overhead(overhead);
  spec.set_memory_limit(limit);
  spec.set_platform("ideal");
  PictureRun run;
  Status status = PrepareRun(SpecOf(spec), &run.prepared);
  EXPECT_TRUE(status.ok()) << status.message();
  status = ExecuteRun(run.prepared, &run.result, &run.timeline);
  EXPECT_TRUE(status.ok()) << status.message();
  const TraceRun trace{&run.prepared.schedule,
                       &run.prepared.costs,
                       &run.prepared.graph,
                       &run.timeline,
                       &run.prepared.platform,
                       &run.result.metrics,
                       {}};
  run.picture = BuildTimelinePicture(trace, TraceWindow(), "1F1B", {});
  return run;
}

int64_t LaneMax(const PictureRow& row) {
  int64_t most = 0;
  for (const MemoryPoint& point : row.memory) most = std::max(most, point.bytes);
  return most;
}

// The `tag` element of class `css_class` (the first), with its attribute `name` as a number.
double AttributeOf(const std::string& doc, const std::string& tag, const std::string& css_class,
                   const std::string& name) {
  const std::regex element("<" + tag + " [^>]*class=\"" + css_class + "\"[^>]*>");
  std::smatch found;
  if (!std::regex_search(doc, found, element)) {
    ADD_FAILURE() << "no <" << tag << " class=" << css_class << ">";
    return -1;
  }
  const std::string text = found[0];
  std::smatch value;
  if (!std::regex_search(text, value, std::regex(" " + name + "=\"([-0-9.]+)\""))) {
    ADD_FAILURE() << "no " << name << " in " << text;
    return -1;
  }
  return std::stod(value[1]);
}

// 10 GiB of activations per microbatch, 20 GiB of gradients (the static bytes) per stage, a
// reserve of 2 GiB and half the live activations, on a 40 GiB GPU:
//   rank 0 holds 2 microbatches at most: 20 + 20 + (2 + 10) = 52 GiB, out of memory;
//   rank 1 holds 1:                      20 + 10 + (2 + 5)  = 37 GiB, fits.
TEST(TracePicture, MemoryLanesAreStaticReserveAndActivationsUpToThePeakMemory) {
  const PictureRun run = RunPicture("10GiB", "20GiB", "2GiB", 0.5, "40GiB");
  const std::vector<RankMetrics>& ranks = run.result.metrics.ranks;
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].peak_memory_bytes, 52 * kGiB);
  EXPECT_TRUE(ranks[0].oom);
  EXPECT_EQ(ranks[1].peak_memory_bytes, 37 * kGiB);
  EXPECT_FALSE(ranks[1].oom);

  const std::vector<PictureRow>& rows = run.picture.rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(LaneMax(rows[0]), 52 * kGiB);
  EXPECT_EQ(LaneMax(rows[1]), 37 * kGiB);
  for (const PictureRow& row : rows) {
    // From time 0, before any activation, and at the end: static and the fixed reserve.
    ASSERT_FALSE(row.memory.empty());
    EXPECT_EQ(row.memory.front().time_ns, 0);
    EXPECT_EQ(row.memory.front().bytes, 22 * kGiB);
    EXPECT_EQ(row.memory.back().bytes, 22 * kGiB);
    EXPECT_EQ(row.static_bytes, 20 * kGiB);
    EXPECT_EQ(row.capacity_bytes, 40 * kGiB);
  }
  EXPECT_EQ(rows[0].reserve_bytes, 12 * kGiB);
  EXPECT_EQ(rows[0].peak_activation_bytes, 20 * kGiB);
  EXPECT_TRUE(rows[0].oom);
  EXPECT_EQ(rows[1].reserve_bytes, 7 * kGiB);
  EXPECT_FALSE(rows[1].oom);

  // The boundary transfers are drawn in one lane (sends and receives), 2 + 7 px under the boxes
  // and above the memory band.
  ASSERT_FALSE(run.picture.transfers.empty());
  for (const PictureTransfer& t : run.picture.transfers) EXPECT_EQ(t.kind, TransferKind::kP2p);
  constexpr double kTransferLanes = 2 + 7;
  // Both pictures: the flag under the title, a capacity line on each band at 40/52 of its height
  // (the bands' scale runs to the largest value, rank 0's 52 GiB), and rank 0's curve up to
  // the top of its band.
  for (const std::string& doc : {TimelineSvg(run.picture), TimelineHtml(run.picture)}) {
    EXPECT_NE(doc.find("<text class=\"oom-flag\""), std::string::npos);
    EXPECT_NE(doc.find(">OOM: rank 0 needs 52 GiB of 40 GiB</text>"), std::string::npos);
    EXPECT_NE(doc.find(">40 GiB capacity</text>"), std::string::npos);
    EXPECT_NE(doc.find(">peak 52 GiB \u00b7 OOM</text>"), std::string::npos);
    EXPECT_NE(doc.find(">peak 37 GiB</text>"), std::string::npos);
    const double band_top = AttributeOf(doc, "svg", "timeline", "data-plot-top") + kBoxHeight +
                            kTransferLanes + kMemGap;
    const double line_y = band_top + kCapacityMemHeight - 40.0 / 52 * kCapacityMemHeight;
    EXPECT_NEAR(AttributeOf(doc, "line", "capacity", "y1"), line_y, kPrinted);
    EXPECT_NEAR(AttributeOf(doc, "line", "capacity", "data-bytes"), 40.0 * kGiB, 0.5);
    // Rank 1's line is a row further down.
    const std::regex lines("<line class=\"capacity\"[^>]* y1=\"([0-9.]+)\"");
    std::vector<double> ys;
    for (auto it = std::sregex_iterator(doc.begin(), doc.end(), lines);
         it != std::sregex_iterator(); ++it) {
      ys.push_back(std::stod((*it)[1]));
    }
    ASSERT_EQ(ys.size(), 2u);
    EXPECT_NEAR(ys[1] - ys[0], kBoxHeight + kTransferLanes + kMemGap + kCapacityMemHeight + kRowGap,
                2 * kPrinted);
    // The highest corner of rank 0's curve is the band's top: 52 GiB of 52.
    const std::regex path("<path class=\"mem\" d=\"([^\"]*)\"");
    std::smatch found;
    ASSERT_TRUE(std::regex_search(doc, found, path));
    const std::string d = found[1];
    double top = 1e9;
    const std::regex corner("V([0-9.]+)");
    for (auto it = std::sregex_iterator(d.begin(), d.end(), corner); it != std::sregex_iterator();
         ++it) {
      top = std::min(top, std::stod((*it)[1]));
    }
    EXPECT_NEAR(top, band_top, kPrinted);
  }
}

// Sizes that do not divide: 1,000,003 activation bytes per microbatch and 0.3 of them reserved,
// rounded up to whole bytes, nothing else. Rank 0's peak: 2,000,006 + ceil(600,001.8) =
// 2,600,008 bytes, one more than the GPU's 2,600,007; rank 1's: 1,000,003 + ceil(300,000.9).
TEST(TracePicture, LaneMaximumIsThePeakMemoryToTheByte) {
  const PictureRun run = RunPicture("1000003", "0", "0", 0.3, "2600007");
  ASSERT_EQ(run.picture.rows.size(), 2u);
  EXPECT_EQ(run.result.metrics.ranks[0].peak_memory_bytes, 2'600'008);
  EXPECT_EQ(LaneMax(run.picture.rows[0]), 2'600'008);
  EXPECT_TRUE(run.picture.rows[0].oom);
  EXPECT_EQ(run.result.metrics.ranks[1].peak_memory_bytes, 1'300'004);
  EXPECT_EQ(LaneMax(run.picture.rows[1]), 1'300'004);
  EXPECT_FALSE(run.picture.rows[1].oom);
  EXPECT_EQ(run.picture.rows[0].memory.front().bytes, 0);  // no static bytes, no fixed reserve
}

// The dependencies between ranks: 1F1B on 2 ranks with 4 microbatches sends each microbatch's
// activation down and its gradient up, 2 (p - 1) m = 8 transfers, each with a flow in from the
// action that produced it and a flow out to the one that uses it: 16 flows. On the ideal platform
// a transfer takes no time: rank 0's F0 ends at F = 1 ms and rank 1's F0 starts then.
TEST(TracePicture, EachTransferHasAFlowInFromItsProducerAndOutToItsConsumer) {
  const PictureRun run = RunPicture("1GiB", "0", "0", 0, "80GiB");
  ASSERT_EQ(run.picture.rows.size(), 2u);
  ASSERT_EQ(run.picture.transfers.size(), 8u);
  ASSERT_EQ(run.picture.flows.size(), 16u);
  int into_lanes = 0, out_of_lanes = 0;
  for (const PictureFlow& f : run.picture.flows) {
    if (!f.from_lane.has_value() && f.to_lane == TransferKind::kP2p) {
      ++into_lanes;
      EXPECT_EQ(f.from_row, f.to_row);  // a rank's sends are drawn on its own row
    }
    if (f.from_lane == TransferKind::kP2p && !f.to_lane.has_value()) {
      ++out_of_lanes;
      EXPECT_EQ(std::abs(f.to_row - f.from_row), 1);
    }
    EXPECT_LE(f.from_ns, f.to_ns);
  }
  EXPECT_EQ(into_lanes, 8);
  EXPECT_EQ(out_of_lanes, 8);
  const auto first_activation =
      std::find_if(run.picture.flows.begin(), run.picture.flows.end(), [](const PictureFlow& f) {
        return f.from_lane.has_value() && f.from_row == 0 && f.to_row == 1;
      });
  ASSERT_NE(first_activation, run.picture.flows.end());
  EXPECT_EQ(first_activation->from_ns, 1'000'000);
  EXPECT_EQ(first_activation->to_ns, 1'000'000);
}

}  // namespace
}  // namespace ppsim
