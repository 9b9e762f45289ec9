#include "traces/timeline_picture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace ppsim {
namespace {

// The layout rules documented in traces/timeline_picture.cc, from which the expectations follow.
constexpr double kCharPx11 = 0.64 * 11;  // estimated width of a character of 11px text
constexpr double kCharPx12 = 0.64 * 12;
constexpr double kLabelPad = 2;  // each side of a microbatch number
constexpr double kMinPlotWidth = 800;
constexpr double kMargin = 12;
constexpr double kNameGap = 8;
constexpr double kBoxHeight = 22;
constexpr double kMemGap = 2;
constexpr double kMemHeight = 18;
constexpr double kCapacityMemHeight = 32;  // when a band has a capacity line
constexpr double kLabelPitch = 13;         // between the capacity and the peak label
constexpr double kRowGap = 8;
constexpr double kTickLabelGap = 12;
constexpr double kPrinted = 0.05 + 1e-9;  // coordinates are printed with one decimal

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kGiB = int64_t{1} << 30;

struct Element {
  std::map<std::string, std::string> attrs;
  std::string text;  // up to the first child or closing tag

  double Num(const std::string& name) const {
    const auto it = attrs.find(name);
    EXPECT_NE(it, attrs.end()) << name;
    return it == attrs.end() ? NAN : std::stod(it->second);
  }
  const std::string& Attr(const std::string& name) const {
    static const std::string kNone;
    const auto it = attrs.find(name);
    return it == attrs.end() ? kNone : it->second;
  }
};

// The `tag` elements of class `css_class`, in document order.
std::vector<Element> Find(const std::string& doc, const std::string& tag,
                          const std::string& css_class) {
  const std::regex element("<" + tag + "( [^>]*class=\"" + css_class + "\"[^>]*)>([^<]*)");
  const std::regex attribute("([a-z0-9-]+)=\"([^\"]*)\"");
  std::vector<Element> found;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), element);
       it != std::sregex_iterator(); ++it) {
    Element e;
    const std::string attrs = (*it)[1];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attribute);
         a != std::sregex_iterator(); ++a) {
      e.attrs[(*a)[1]] = (*a)[2];
    }
    e.text = (*it)[2];
    found.push_back(e);
  }
  return found;
}

double TextWidth11(const std::string& text) { return static_cast<double>(text.size()) * kCharPx11; }

double LabelWidth(const std::string& digits) { return TextWidth11(digits) + 2 * kLabelPad; }

PictureBox Box(int32_t row, int64_t start_ns, int64_t end_ns, BoxKind kind, int32_t microbatch,
               int32_t chunk = 0, int32_t num_chunks = 1) {
  PictureBox box;
  box.row = row;
  box.start_ns = start_ns;
  box.end_ns = end_ns;
  box.kind = kind;
  box.microbatch = microbatch;
  box.chunk = chunk;
  box.num_chunks = num_chunks;
  box.details = "microbatch " + std::to_string(microbatch);
  return box;
}

TimelinePicture Rows(int count, int64_t end_ns) {
  TimelinePicture picture;
  picture.title = "test";
  picture.end_ns = end_ns;
  for (int r = 0; r < count; ++r) picture.rows.push_back({"rank " + std::to_string(r), {}, 0});
  return picture;
}

// 1F1B on `pp` ranks without communication time (Narayanan et al., PipeDream-Flush): rank r runs
// pp - r - 1 warm-up forwards, then alternates forward and backward, then drains its backwards.
// A backward takes twice a forward. Memory: 1 GiB per microbatch forwarded and not yet backward.
TimelinePicture OneFOneB(int pp, int microbatches, int64_t forward_ns) {
  struct Op {
    bool forward;
    int mb;
  };
  std::vector<std::vector<Op>> order(pp);
  for (int r = 0; r < pp; ++r) {
    const int warmup = std::min(pp - r - 1, microbatches);
    int f = 0, b = 0;
    for (; f < warmup; ++f) order[r].push_back({true, f});
    while (f < microbatches) {
      order[r].push_back({true, f++});
      order[r].push_back({false, b++});
    }
    while (b < microbatches) order[r].push_back({false, b++});
  }
  std::vector<std::vector<int64_t>> f_end(pp, std::vector<int64_t>(microbatches, -1));
  std::vector<std::vector<int64_t>> b_end = f_end;
  std::vector<size_t> next(pp, 0);
  std::vector<int64_t> free_at(pp, 0);
  TimelinePicture picture;
  picture.title = "1F1B \u00b7 pp " + std::to_string(pp);
  for (int r = 0; r < pp; ++r) {
    picture.rows.push_back(
        {"rank " + std::to_string(r) + " \u00b7 stage " + std::to_string(r), {{0, 0}}, 3 * kGiB});
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < pp; ++r) {
      while (next[r] < order[r].size()) {
        const Op op = order[r][next[r]];
        const int64_t ready = op.forward ? (r == 0 ? 0 : f_end[r - 1][op.mb])
                                         : (r == pp - 1 ? f_end[r][op.mb] : b_end[r + 1][op.mb]);
        if (ready < 0) break;
        const int64_t start = std::max(ready, free_at[r]);
        const int64_t end = start + (op.forward ? forward_ns : 2 * forward_ns);
        (op.forward ? f_end : b_end)[r][op.mb] = end;
        free_at[r] = end;
        picture.boxes.push_back(
            Box(r, start, end, op.forward ? BoxKind::kForward : BoxKind::kBackward, op.mb));
        const int64_t live = picture.rows[r].memory.back().bytes + (op.forward ? kGiB : -kGiB);
        picture.rows[r].memory.push_back({op.forward ? start : end, live});
        ++next[r];
        progress = true;
      }
    }
  }
  for (int r = 0; r < pp; ++r) picture.end_ns = std::max(picture.end_ns, free_at[r]);
  return picture;
}

TEST(TimelinePicture, OneBoxElementPerPictureBox) {
  TimelinePicture picture = OneFOneB(4, 8, kMs);
  const std::string svg = TimelineSvg(picture);
  EXPECT_EQ(Find(svg, "rect", "box").size(), picture.boxes.size());
  EXPECT_EQ(Find(svg, "text", "row-name").size(), 4u);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find(" viewBox=\"0 0 "), std::string::npos);
}

TEST(TimelinePicture, KindsGetDistinctFills) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  const BoxKind kinds[] = {BoxKind::kForward, BoxKind::kBackwardInput, BoxKind::kBackwardWeight,
                           BoxKind::kBackward, BoxKind::kOverlap};
  for (int i = 0; i < 5; ++i) picture.boxes.push_back(Box(0, i * kMs, (i + 1) * kMs, kinds[i], i));
  std::set<std::string> fills;
  for (const Element& box : Find(TimelineSvg(picture), "rect", "box")) {
    fills.insert(box.Attr("fill"));
  }
  EXPECT_EQ(fills.size(), 5u);
}

struct Rgb {
  double r, g, b;
};

Rgb ParseHex(const std::string& hex) {
  EXPECT_EQ(hex.size(), 7u) << hex;
  return {static_cast<double>(std::stoi(hex.substr(1, 2), nullptr, 16)),
          static_cast<double>(std::stoi(hex.substr(3, 2), nullptr, 16)),
          static_cast<double>(std::stoi(hex.substr(5, 2), nullptr, 16))};
}

double Luminance(const std::string& hex) {
  const Rgb c = ParseHex(hex);
  auto linear = [](double v) {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

double Contrast(const std::string& a, const std::string& b) {
  const double la = Luminance(a), lb = Luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

TEST(TimelinePicture, LaterVirtualStagesAreLighterShadesOfTheSameKind) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0, 0, 2));
  picture.boxes.push_back(Box(0, kMs, 2 * kMs, BoxKind::kForward, 0, 1, 2));
  const std::vector<Element> boxes = Find(TimelineSvg(picture), "rect", "box");
  ASSERT_EQ(boxes.size(), 2u);
  const Rgb dark = ParseHex(boxes[0].Attr("fill"));
  const Rgb light = ParseHex(boxes[1].Attr("fill"));
  EXPECT_NE(boxes[0].Attr("fill"), boxes[1].Attr("fill"));
  EXPECT_GE(light.r, dark.r);
  EXPECT_GE(light.g, dark.g);
  EXPECT_GE(light.b, dark.b);
  // The same hue: mixing towards white keeps the order of the channels.
  EXPECT_EQ(dark.r < dark.b, light.r < light.b);
  EXPECT_EQ(dark.g < dark.b, light.g < light.b);
}

TEST(TimelinePicture, LabelTextContrastsWithItsBox) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  const BoxKind kinds[] = {BoxKind::kForward, BoxKind::kBackwardInput, BoxKind::kBackwardWeight,
                           BoxKind::kBackward, BoxKind::kOverlap};
  for (int i = 0; i < 5; ++i) {
    for (int chunk = 0; chunk < 4; ++chunk) {
      const int64_t start = (i * 4 + chunk) * kMs / 2;
      picture.boxes.push_back(Box(0, start, start + kMs / 2, kinds[i], 1, chunk, 4));
    }
  }
  const std::string svg = TimelineSvg(picture);
  const std::vector<Element> boxes = Find(svg, "rect", "box");
  const std::vector<Element> labels = Find(svg, "text", "mb");
  ASSERT_EQ(labels.size(), boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) {
    const std::string& fill = boxes[i].Attr("fill");
    const std::string& text = labels[i].Attr("fill");
    const std::string other = text == "#ffffff" ? "#111111" : "#ffffff";
    EXPECT_GE(Contrast(fill, text), Contrast(fill, other)) << fill << " " << text;
  }
}

// Ten boxes 40 px wide set the plot's scale (the rule fits 90% of the boxes); two narrower boxes
// are 16 px wide: enough for one digit (7.04 + 4 px), not for two (18.08 px).
TEST(TimelinePicture, MicrobatchNumbersOnlyWhereTheyFit) {
  TimelinePicture picture = Rows(1, 1'000'000);  // 800 px: 0.0008 px/ns
  for (int i = 0; i < 10; ++i) {
    picture.boxes.push_back(Box(0, i * 60'000, i * 60'000 + 50'000, BoxKind::kForward, i));
  }
  picture.boxes.push_back(Box(0, 700'000, 720'000, BoxKind::kBackward, 3));
  picture.boxes.push_back(Box(0, 800'000, 820'000, BoxKind::kBackward, 12));
  const std::string svg = TimelineSvg(picture);
  std::vector<std::string> texts;
  for (const Element& label : Find(svg, "text", "mb")) texts.push_back(label.text);
  EXPECT_EQ(texts,
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "3"}));
  const std::vector<Element> boxes = Find(svg, "rect", "box");
  ASSERT_EQ(boxes.size(), 12u);
  EXPECT_NEAR(boxes[0].Num("width"), 40, kPrinted);
  EXPECT_NEAR(boxes[11].Num("width"), 16, kPrinted);
  EXPECT_LT(boxes[11].Num("width"), LabelWidth("12"));
  EXPECT_GE(boxes[10].Num("width"), LabelWidth("3"));
}

TEST(TimelinePicture, BoxesArePlacedInProportionToTime) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  picture.boxes.push_back(Box(0, 0, 2 * kMs, BoxKind::kForward, 0));
  picture.boxes.push_back(Box(0, 3 * kMs, 7 * kMs, BoxKind::kBackward, 0));
  const std::string svg = TimelineSvg(picture);
  const std::vector<Element> boxes = Find(svg, "rect", "box");
  ASSERT_EQ(boxes.size(), 2u);
  // The plot starts after the margin, the estimated width of "rank 0" and a gap, rounded up.
  const double plot_x = std::ceil(kMargin + 6 * kCharPx12 + kNameGap);
  EXPECT_EQ(boxes[0].Num("x"), plot_x);
  // Large boxes and a short run: the plot keeps its minimum width, 80 px per ms.
  EXPECT_NEAR(boxes[0].Num("width"), 2 * kMinPlotWidth / 10, kPrinted);
  EXPECT_NEAR(boxes[1].Num("x"), plot_x + 3 * kMinPlotWidth / 10, kPrinted);
  EXPECT_NEAR(boxes[1].Num("width"), 4 * kMinPlotWidth / 10, kPrinted);
  EXPECT_NEAR((boxes[1].Num("x") - boxes[0].Num("x")) / boxes[0].Num("width"), 3.0 / 2, 1e-3);
  EXPECT_EQ(boxes[0].Num("y"), boxes[1].Num("y"));
  EXPECT_EQ(boxes[0].Num("height"), kBoxHeight);
}

TEST(TimelinePicture, BoxesOfARowDoNotOverlapAndStayInThePlot) {
  const TimelinePicture picture = OneFOneB(4, 8, kMs);
  const std::string svg = TimelineSvg(picture);
  const std::vector<Element> root = Find(svg, "svg", "timeline");
  ASSERT_EQ(root.size(), 1u);
  const double plot_x = root[0].Num("data-plot-x");
  const double plot_right = plot_x + root[0].Num("data-plot-w");
  std::map<double, std::vector<std::pair<double, double>>> rows;  // y: (x, x + width)
  for (const Element& box : Find(svg, "rect", "box")) {
    EXPECT_GE(box.Num("x"), plot_x);
    EXPECT_LE(box.Num("x") + box.Num("width"), plot_right + kPrinted);
    rows[box.Num("y")].push_back({box.Num("x"), box.Num("x") + box.Num("width")});
  }
  EXPECT_EQ(rows.size(), 4u);
  for (auto& [y, spans] : rows) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      EXPECT_LE(spans[i - 1].second, spans[i].first + 2 * kPrinted) << "row at y " << y;
    }
  }
  // And the rows do not overlap one another.
  double previous_bottom = -1;
  for (const auto& [y, spans] : rows) {
    EXPECT_GE(y, previous_bottom);
    previous_bottom = y + kBoxHeight;
  }
}

struct AxisView {
  std::string title;
  std::vector<std::string> labels;
  std::vector<double> xs;
};

AxisView AxisOf(const TimelinePicture& picture) {
  const std::string svg = TimelineSvg(picture);
  AxisView axis;
  for (const Element& tick : Find(svg, "text", "tick")) {
    axis.labels.push_back(tick.text);
    axis.xs.push_back(tick.Num("x"));
  }
  const std::vector<Element> title = Find(svg, "text", "axis-title");
  EXPECT_EQ(title.size(), 1u);
  if (!title.empty()) axis.title = title[0].text;
  return axis;
}

// With no boxes the plot is 800 px wide. The step is the smallest 1, 2 or 5 x 10^k of the unit
// the range calls for with ticks at least 60 px apart (and labels 12 px apart).
TEST(TimelinePicture, AxisTicksInAUnitChosenFromTheRange) {
  // 10 ms: 80 px per ms, so a step of 1 ms (0.5 ms would be 40 px).
  AxisView axis = AxisOf(Rows(1, 10 * kMs));
  EXPECT_EQ(axis.title, "time (ms)");
  EXPECT_EQ(axis.labels,
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  // 2.5 s: 320 px per s, so 0.2 s (64 px).
  axis = AxisOf(Rows(1, 2'500 * kMs));
  EXPECT_EQ(axis.title, "time (s)");
  EXPECT_EQ(axis.labels, (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0", "1.2",
                                                   "1.4", "1.6", "1.8", "2.0", "2.2", "2.4"}));
  // 750 us: 1.07 px per us, so 100 us (50 us would be 53 px).
  axis = AxisOf(Rows(1, 750'000));
  EXPECT_EQ(axis.title, "time (\u00b5s)");
  EXPECT_EQ(axis.labels,
            (std::vector<std::string>{"0", "100", "200", "300", "400", "500", "600", "700"}));
  // 37 ns: 21.6 px per ns, so 5 ns.
  axis = AxisOf(Rows(1, 37));
  EXPECT_EQ(axis.title, "time (ns)");
  EXPECT_EQ(axis.labels, (std::vector<std::string>{"0", "5", "10", "15", "20", "25", "30", "35"}));
  EXPECT_NEAR(axis.xs[1] - axis.xs[0], 5 * kMinPlotWidth / 37, kPrinted);
}

TEST(TimelinePicture, AxisTickLabelsDoNotOverlap) {
  for (const int64_t end_ns :
       {int64_t{1}, int64_t{999}, int64_t{123'456'789}, 99'999 * kMs, int64_t{7'777'777'777'777}}) {
    const AxisView axis = AxisOf(Rows(2, end_ns));
    ASSERT_GE(axis.labels.size(), 1u) << end_ns;
    for (size_t i = 1; i < axis.labels.size(); ++i) {
      const double half_widths =
          (TextWidth11(axis.labels[i - 1]) + TextWidth11(axis.labels[i])) / 2;
      EXPECT_GE(axis.xs[i] - axis.xs[i - 1] + kPrinted, half_widths + kTickLabelGap)
          << end_ns << ": " << axis.labels[i - 1] << " " << axis.labels[i];
    }
  }
  // A wide plot still gets a readable number of ticks, not one per box.
  const TimelinePicture wide = OneFOneB(16, 64, kMs);
  const AxisView axis = AxisOf(wide);
  for (size_t i = 1; i < axis.xs.size(); ++i) EXPECT_GE(axis.xs[i] - axis.xs[i - 1], 60 - kPrinted);
}

std::vector<std::string> LegendTexts(const std::string& svg) {
  const size_t begin = svg.find("<g class=\"legend\">");
  const size_t end = svg.find("<g class=\"grid\"");
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  const std::string legend = svg.substr(begin, end - begin);
  const std::regex text("<text[^>]*>([^<]*)</text>");
  std::vector<std::string> texts;
  for (auto it = std::sregex_iterator(legend.begin(), legend.end(), text);
       it != std::sregex_iterator(); ++it) {
    texts.push_back((*it)[1]);
  }
  return texts;
}

TEST(TimelinePicture, LegendListsTheKindsPresent) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  picture.boxes.push_back(Box(0, 4 * kMs, 5 * kMs, BoxKind::kBackwardWeight, 0));
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  EXPECT_EQ(LegendTexts(TimelineSvg(picture)),
            (std::vector<std::string>{"F forward", "W backward (weight)"}));

  picture.boxes.push_back(Box(0, 6 * kMs, 7 * kMs, BoxKind::kOverlap, 0, 1, 2));
  picture.boxes.push_back(Box(0, 2 * kMs, 3 * kMs, BoxKind::kBackwardInput, 0));
  picture.boxes.push_back(Box(0, 8 * kMs, 9 * kMs, BoxKind::kBackward, 0));
  picture.rows[0].memory = {{0, 100}};
  EXPECT_EQ(
      LegendTexts(TimelineSvg(picture)),
      (std::vector<std::string>{"F forward", "I backward (input)", "W backward (weight)",
                                "B backward", "F&amp;B overlapped", "lighter = later virtual stage",
                                "memory: static + reserve + activations"}));
}

PictureTransfer Transfer(int32_t row, int64_t start_ns, int64_t end_ns, TransferKind kind) {
  PictureTransfer t;
  t.row = row;
  t.start_ns = start_ns;
  t.end_ns = end_ns;
  t.kind = kind;
  t.details = "activation";
  return t;
}

TEST(TimelinePicture, TransfersAreDrawnInALanePerKindUnderTheirRow) {
  // Two rows; p2p and all-to-all present (no collective): two lanes of 7 px under each row's
  // boxes, 2 px below them, in the order p2p, collective, all-to-all.
  TimelinePicture picture = Rows(2, 10 * kMs);
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  picture.boxes.push_back(Box(1, kMs, 2 * kMs, BoxKind::kForward, 0));
  picture.transfers.push_back(Transfer(1, 3 * kMs, 4 * kMs, TransferKind::kAllToAll));
  picture.transfers.push_back(Transfer(0, kMs, 2 * kMs, TransferKind::kP2p));
  const std::string svg = TimelineSvg(picture);
  const std::vector<Element> boxes = Find(svg, "rect", "box");
  const std::vector<Element> xfers = Find(svg, "rect", "xfer");
  ASSERT_EQ(boxes.size(), 2u);
  ASSERT_EQ(xfers.size(), 2u);
  // Row 0's p2p lane, then row 1's all-to-all lane (the second of the two).
  EXPECT_NEAR(xfers[0].Num("y"), boxes[0].Num("y") + kBoxHeight + 2, kPrinted);
  EXPECT_NEAR(xfers[1].Num("y"), boxes[1].Num("y") + kBoxHeight + 2 + 7, kPrinted);
  EXPECT_NEAR(xfers[0].Num("height"), 6, kPrinted);
  // Rows are apart by the boxes, the two lanes (2 + 2 x 7) and the row gap.
  EXPECT_NEAR(boxes[1].Num("y") - boxes[0].Num("y"), kBoxHeight + 16 + kRowGap, kPrinted);
  // The p2p transfer spans 1 to 2 ms of 10 ms over the 800 px plot: 80 px from x(1 ms).
  EXPECT_NEAR(xfers[0].Num("x") - boxes[0].Num("x"), kMinPlotWidth / 10, kPrinted);
  EXPECT_NEAR(xfers[0].Num("width"), kMinPlotWidth / 10, kPrinted);
  EXPECT_EQ(xfers[0].Attr("data-s"), std::to_string(kMs));
  EXPECT_EQ(xfers[1].Attr("data-e"), std::to_string(4 * kMs));
  EXPECT_EQ(LegendTexts(svg),
            (std::vector<std::string>{"F forward", "send/receive (p2p)", "all-to-all"}));
}

// Dependencies, on the page only and hidden until asked for: an arrow from where the producer
// ends (box 0's end, on its row's boxes) to the transfer's start in its lane, and from the
// transfer's end to where the consumer starts (box 1, on row 1's boxes).
TEST(TimelinePicture, FlowsAreArrowsOnThePageFromAProducersEndToItsConsumersStart) {
  TimelinePicture picture = Rows(2, 10 * kMs);
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  picture.boxes.push_back(Box(1, 3 * kMs, 4 * kMs, BoxKind::kForward, 0));
  picture.transfers.push_back(Transfer(0, kMs, 2 * kMs, TransferKind::kP2p));
  picture.flows.push_back({0, std::nullopt, kMs, 0, TransferKind::kP2p, kMs});
  picture.flows.push_back({0, TransferKind::kP2p, 2 * kMs, 1, std::nullopt, 3 * kMs});
  EXPECT_TRUE(Find(TimelineSvg(picture), "line", "flow").empty());
  const std::string html = TimelineHtml(picture);
  const std::vector<Element> boxes = Find(html, "rect", "box");
  const std::vector<Element> xfers = Find(html, "rect", "xfer");
  const std::vector<Element> flows = Find(html, "line", "flow");
  ASSERT_EQ(boxes.size(), 2u);
  ASSERT_EQ(xfers.size(), 1u);
  ASSERT_EQ(flows.size(), 2u);
  // Box 0 ends at x(1 ms), level with its middle; the transfer starts there, mid-lane.
  EXPECT_NEAR(flows[0].Num("x1"), boxes[0].Num("x") + boxes[0].Num("width"), kPrinted);
  EXPECT_NEAR(flows[0].Num("y1"), boxes[0].Num("y") + kBoxHeight / 2, kPrinted);
  EXPECT_NEAR(flows[0].Num("x2"), xfers[0].Num("x"), kPrinted);
  EXPECT_NEAR(flows[0].Num("y2"), xfers[0].Num("y") + 3, kPrinted);
  // The transfer ends at x(2 ms); box 1 starts at x(3 ms), 80 px later on the 800 px plot.
  EXPECT_NEAR(flows[1].Num("x1"), xfers[0].Num("x") + xfers[0].Num("width"), kPrinted);
  EXPECT_NEAR(flows[1].Num("x2"), boxes[1].Num("x"), kPrinted);
  EXPECT_NEAR(flows[1].Num("x2") - flows[1].Num("x1"), kMinPlotWidth / 10, kPrinted);
  EXPECT_NEAR(flows[1].Num("y2"), boxes[1].Num("y") + kBoxHeight / 2, kPrinted);
  EXPECT_EQ(flows[1].Attr("data-s"), std::to_string(2 * kMs));
  EXPECT_EQ(flows[1].Attr("data-e"), std::to_string(3 * kMs));
  EXPECT_EQ(flows[1].Attr("marker-end"), "url(#arrow)");
  // Hidden until the page's checkbox shows them; without flows there is no checkbox.
  EXPECT_NE(html.find("<g class=\"flows\" clip-path=\"url(#plot-clip)\" visibility=\"hidden\""),
            std::string::npos);
  EXPECT_NE(html.find("<input id=\"flows\" type=\"checkbox\"> dependencies"), std::string::npos);
  picture.flows.clear();
  EXPECT_EQ(TimelineHtml(picture).find("id=\"flows\""), std::string::npos);
}

TEST(TimelinePicture, ShortTransfersStayAPixelWide) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  picture.transfers.push_back(Transfer(0, kMs, kMs + 10, TransferKind::kCollective));
  const std::vector<Element> xfers = Find(TimelineSvg(picture), "rect", "xfer");
  ASSERT_EQ(xfers.size(), 1u);
  EXPECT_NEAR(xfers[0].Num("width"), 1, kPrinted);
}

TEST(TimelinePicture, LegendWrapsWithin640Pixels) {
  // A wide plot (16 ranks x 64 microbatches) and every kind of item: the legend still wraps
  // within 640 px, so that it fits a window of any usual width.
  TimelinePicture picture = OneFOneB(16, 64, kMs);
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kOverlap, 0, 1, 2));
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kBackwardInput, 0));
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kBackwardWeight, 0));
  for (TransferKind kind :
       {TransferKind::kP2p, TransferKind::kCollective, TransferKind::kAllToAll}) {
    picture.transfers.push_back(Transfer(0, 0, kMs, kind));
  }
  const std::string svg = TimelineSvg(picture);
  const size_t legend = svg.find("<g class=\"legend\">");
  const size_t legend_end = svg.find("</g>\n<g class=\"grid\"");
  ASSERT_NE(legend, std::string::npos);
  const std::string part = svg.substr(legend, legend_end - legend);
  const std::regex item("<text x=\"([0-9.]+)\" y=\"[0-9.]+\">([^<]*)</text>");
  int items = 0;
  for (auto it = std::sregex_iterator(part.begin(), part.end(), item); it != std::sregex_iterator();
       ++it, ++items) {
    const std::string text = std::regex_replace((*it)[2].str(), std::regex("&amp;"), "&");
    const double right = std::stod((*it)[1]) + static_cast<double>(text.size()) * kCharPx12;
    EXPECT_LE(right, 640 + kPrinted) << (*it)[2];
  }
  EXPECT_EQ(items, 10);
  EXPECT_GT(Find(svg, "svg", "timeline")[0].Num("width"), 640);
}

struct PathPoint {
  double x, y;
};

// The corners of an "M x,y H x V y ... Z" path.
std::vector<PathPoint> Corners(const std::string& d) {
  std::vector<PathPoint> points;
  const std::regex command("([MHVZ])([-0-9.]*)(?:,([-0-9.]+))?");
  for (auto it = std::sregex_iterator(d.begin(), d.end(), command); it != std::sregex_iterator();
       ++it) {
    const std::string op = (*it)[1];
    if (op == "M") {
      points.push_back({std::stod((*it)[2]), std::stod((*it)[3])});
    } else if (op == "H") {
      points.push_back({std::stod((*it)[2]), points.back().y});
    } else if (op == "V") {
      points.push_back({points.back().x, std::stod((*it)[2])});
    }
  }
  return points;
}

TEST(TimelinePicture, MemoryCurvesShareOneScale) {
  TimelinePicture picture = Rows(3, 10 * kMs);
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  picture.rows[0].memory = {{0, kGiB}, {2 * kMs, 4 * kGiB}, {5 * kMs, 0}};
  picture.rows[1].memory = {{kMs, 2 * kGiB}};
  const std::string svg = TimelineSvg(picture);
  const std::vector<Element> curves = Find(svg, "path", "mem");
  ASSERT_EQ(curves.size(), 2u);  // row 2 has no memory
  const double top0 = Find(svg, "rect", "box")[0].Num("y");
  const double pitch = kBoxHeight + kMemGap + kMemHeight + kRowGap;
  const double root_x = Find(svg, "svg", "timeline")[0].Num("data-plot-x");
  for (int r = 0; r < 2; ++r) {
    const std::vector<PathPoint> corners = Corners(curves[r].Attr("d"));
    ASSERT_FALSE(corners.empty());
    const double band_top = top0 + r * pitch + kBoxHeight + kMemGap;
    const double band_bottom = band_top + kMemHeight;
    double min_y = band_bottom;
    for (const PathPoint& p : corners) {
      min_y = std::min(min_y, p.y);
      EXPECT_LE(p.y, band_bottom);
    }
    // Row 0 has the largest value: it reaches the band's top; row 1's half of it, half way.
    EXPECT_NEAR(min_y, r == 0 ? band_top : band_top + kMemHeight / 2, kPrinted);
    // The curve starts at its first point (row 0 at 0 ms, row 1 at 1 ms) and holds its last
    // value until the end of the plot.
    EXPECT_NEAR(corners.front().x, root_x + r * kMinPlotWidth / 10, kPrinted);
    EXPECT_EQ(corners.front().y, band_bottom);
    EXPECT_NEAR(corners[corners.size() - 2].x, root_x + kMinPlotWidth, kPrinted);
  }
  // Row 0 is back to 0 from 5 ms: its last step is at the band's bottom.
  const std::vector<PathPoint> row0 = Corners(curves[0].Attr("d"));
  EXPECT_NEAR(row0[row0.size() - 3].x, root_x + 5 * kMinPlotWidth / 10, kPrinted);
  EXPECT_NEAR(row0[row0.size() - 3].y, top0 + kBoxHeight + kMemGap + kMemHeight, kPrinted);
  std::vector<std::string> peaks;
  for (const Element& peak : Find(svg, "text", "peak")) peaks.push_back(peak.text);
  EXPECT_EQ(peaks, (std::vector<std::string>{"peak 4 GiB", "peak 2 GiB"}));
}

TEST(TimelinePicture, PeaksInBinaryUnitsWithAtMostOneDecimal) {
  TimelinePicture picture = Rows(5, 10 * kMs);
  picture.rows[0].memory = {{0, 512}};
  picture.rows[1].memory = {{0, 1536}};
  picture.rows[2].memory = {{0, 1024 * 1024 - 20}};  // 1023.98 KiB rounds to 1 MiB
  picture.rows[3].memory = {{0, 12 * kGiB + kGiB / 3}};
  picture.rows[4].memory = {{0, 0}};
  std::vector<std::string> peaks;
  for (const Element& peak : Find(TimelineSvg(picture), "text", "peak")) peaks.push_back(peak.text);
  EXPECT_EQ(peaks, (std::vector<std::string>{"peak 512 B", "peak 1.5 KiB", "peak 1 MiB",
                                             "peak 12.3 GiB", "peak 0 B"}));
}

// A row with a memory curve of `points` on a GPU of `capacity` bytes.
PictureRow MemoryRow(int32_t rank, std::vector<MemoryPoint> points, int64_t capacity) {
  PictureRow row;
  row.name = "rank " + std::to_string(rank);
  row.rank = rank;
  row.memory = std::move(points);
  for (const MemoryPoint& point : row.memory) {
    row.peak_memory_bytes = std::max(row.peak_memory_bytes, point.bytes);
  }
  row.capacity_bytes = capacity;
  row.oom = capacity > 0 && row.peak_memory_bytes > capacity;
  return row;
}

std::vector<std::string> Texts(const std::string& svg, const std::string& tag,
                               const std::string& css_class) {
  std::vector<std::string> texts;
  for (const Element& e : Find(svg, tag, css_class)) texts.push_back(e.text);
  return texts;
}

// Curves below an 80 GiB capacity: the bands are 32 px tall and their scale runs to 80 GiB, so
// the line is at a band's top and 60 GiB three quarters of the way up.
TEST(TimelinePicture, CapacityLineTopsTheScaleWhenEverythingFits) {
  TimelinePicture picture = Rows(0, 10 * kMs);
  picture.rows.push_back(
      MemoryRow(0, {{0, 20 * kGiB}, {2 * kMs, 60 * kGiB}, {5 * kMs, 30 * kGiB}}, 80 * kGiB));
  picture.rows.push_back(MemoryRow(1, {{0, 10 * kGiB}}, 80 * kGiB));
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  const std::string svg = TimelineSvg(picture);
  const double plot_x = Find(svg, "svg", "timeline")[0].Num("data-plot-x");
  const double top0 = Find(svg, "svg", "timeline")[0].Num("data-plot-top");
  const double pitch = kBoxHeight + kMemGap + kCapacityMemHeight + kRowGap;
  const std::vector<Element> lines = Find(svg, "line", "capacity");
  ASSERT_EQ(lines.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const double band_top = top0 + r * pitch + kBoxHeight + kMemGap;
    EXPECT_NEAR(lines[r].Num("y1"), band_top, kPrinted);
    EXPECT_EQ(lines[r].Num("y2"), lines[r].Num("y1"));
    EXPECT_EQ(lines[r].Num("x1"), plot_x);
    EXPECT_NEAR(lines[r].Num("x2"), plot_x + kMinPlotWidth, kPrinted);
    EXPECT_EQ(lines[r].Attr("data-bytes"), "85899345920");
  }
  // Row 0's curve reaches 60/80 of its band.
  double min_y = 1e9;
  for (const PathPoint& p : Corners(Find(svg, "path", "mem")[0].Attr("d"))) {
    min_y = std::min(min_y, p.y);
  }
  const double bottom0 = top0 + kBoxHeight + kMemGap + kCapacityMemHeight;
  EXPECT_NEAR(min_y, bottom0 - 0.75 * kCapacityMemHeight, kPrinted);
  // Beside the band: the capacity label level with the line (kept 9 px into the band), the
  // peak label a line below it.
  EXPECT_EQ(Texts(svg, "text", "capacity"),
            (std::vector<std::string>{"80 GiB capacity", "80 GiB capacity"}));
  EXPECT_EQ(Texts(svg, "text", "peak"), (std::vector<std::string>{"peak 60 GiB", "peak 10 GiB"}));
  const Element capacity_label = Find(svg, "text", "capacity")[0];
  EXPECT_NEAR(capacity_label.Num("y"), top0 + kBoxHeight + kMemGap + 9, kPrinted);
  EXPECT_NEAR(Find(svg, "text", "peak")[0].Num("y"), capacity_label.Num("y") + kLabelPitch,
              kPrinted);
  // Nothing is out of memory.
  EXPECT_TRUE(Find(svg, "text", "oom-flag").empty());
  EXPECT_TRUE(Find(svg, "path", "mem over").empty());
  EXPECT_EQ(LegendTexts(svg),
            (std::vector<std::string>{"F forward", "memory: static + reserve + activations",
                                      "GPU memory capacity"}));
}

// A curve reaching 100 GiB on an 80 GiB GPU: the scale runs to 100 GiB, the line is at 80/100
// of the band, and the row is flagged.
TEST(TimelinePicture, OutOfMemoryRowsAreFlaggedAndTheirCurveAboveTheLineIsRed) {
  TimelinePicture picture = Rows(0, 10 * kMs);
  picture.title = "1F1B";
  picture.subtitle = {"makespan 10 ms"};
  picture.rows.push_back(MemoryRow(3, {{0, 50 * kGiB}, {kMs, 100 * kGiB}}, 80 * kGiB));
  picture.rows.push_back(MemoryRow(4, {{0, 40 * kGiB}}, 80 * kGiB));
  for (const std::string& doc : {TimelineSvg(picture), TimelineHtml(picture)}) {
    EXPECT_EQ(Texts(doc, "text", "oom-flag"),
              (std::vector<std::string>{"OOM: rank 3 needs 100 GiB of 80 GiB"}));
    EXPECT_EQ(Find(doc, "text", "oom-flag")[0].Attr("fill"), "#c00000");
    EXPECT_EQ(Find(doc, "line", "capacity").size(), 2u);
  }
  const std::string svg = TimelineSvg(picture);
  const double top0 = Find(svg, "svg", "timeline")[0].Num("data-plot-top");
  const double band_top = top0 + kBoxHeight + kMemGap;
  const double line_y = band_top + kCapacityMemHeight - 0.8 * kCapacityMemHeight;
  EXPECT_NEAR(Find(svg, "line", "capacity")[0].Num("y1"), line_y, kPrinted);
  // The flag stands between the title and the subtitle.
  const double flag_y = Find(svg, "text", "oom-flag")[0].Num("y");
  EXPECT_GT(flag_y, Find(svg, "text", "title")[0].Num("y"));
  EXPECT_LT(flag_y, Find(svg, "text", "subtitle")[0].Num("y"));
  // Rank 3's name and peak are red; rank 4's are not.
  const std::vector<Element> names = Find(svg, "text", "row-name");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].Attr("fill"), "#c00000");
  EXPECT_EQ(names[1].Attr("fill"), "");
  EXPECT_EQ(Texts(svg, "text", "peak"),
            (std::vector<std::string>{"peak 100 GiB \u00b7 OOM", "peak 40 GiB"}));
  EXPECT_EQ(Find(svg, "text", "peak")[0].Attr("fill"), "#c00000");
  // The red copy of rank 3's curve is clipped to above the line.
  const std::vector<Element> over = Find(svg, "path", "mem over");
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].Attr("d"), Find(svg, "path", "mem")[0].Attr("d"));
  const std::regex clip(
      "<clipPath id=\"over-0\"><rect x=\"[0-9.]+\" y=\"([0-9.]+)\" "
      "width=\"[0-9.]+\" height=\"([0-9.]+)\"/></clipPath>");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(svg, match, clip));
  EXPECT_NEAR(std::stod(match[1]) + std::stod(match[2]), line_y, 2 * kPrinted);
  EXPECT_EQ(LegendTexts(svg),
            (std::vector<std::string>{"memory: static + reserve + activations",
                                      "GPU memory capacity", "over capacity (OOM)"}));
  EXPECT_EQ(svg, TimelineSvg(picture));
}

TEST(TimelinePicture, OomFlagNamesEachRankOnceAndTheLargestPeak) {
  const int64_t peak = 95 * kGiB + 3 * kGiB / 10;  // 95.3 GiB
  TimelinePicture picture = Rows(0, 10 * kMs);
  for (int32_t rank : {0, 1, 2, 3, 5, 6}) {
    picture.rows.push_back(MemoryRow(rank,
                                     {{0, rank == 6   ? 70 * kGiB
                                          : rank == 2 ? peak
                                                      : 90 * kGiB}},
                                     80 * kGiB));
  }
  picture.rows.push_back(MemoryRow(0, {{0, 90 * kGiB}}, 80 * kGiB));  // another replica's rank 0
  EXPECT_EQ(Texts(TimelineSvg(picture), "text", "oom-flag"),
            (std::vector<std::string>{"OOM: ranks 0-3, 5 need up to 95.3 GiB of 80 GiB"}));
  picture.rows.resize(2);
  EXPECT_EQ(Texts(TimelineSvg(picture), "text", "oom-flag"),
            (std::vector<std::string>{"OOM: ranks 0, 1 need up to 90 GiB of 80 GiB"}));
}

TEST(TimelinePicture, EscapesText) {
  TimelinePicture picture = Rows(1, 10 * kMs);
  picture.title = "\"A\" & <B>";
  picture.subtitle = {"makespan \u2192 1 ms \u00b7 it's"};
  picture.rows[0].name = "rank 0 & <1>";
  picture.boxes.push_back(Box(0, 0, kMs, BoxKind::kForward, 0));
  picture.boxes[0].details = "a<b & c";
  for (const std::string& doc : {TimelineSvg(picture), TimelineHtml(picture)}) {
    EXPECT_NE(doc.find("&quot;A&quot; &amp; &lt;B&gt;"), std::string::npos);
    EXPECT_NE(doc.find("makespan \u2192 1 ms \u00b7 it&#39;s"), std::string::npos);
    EXPECT_NE(doc.find(">rank 0 &amp; &lt;1&gt;<"), std::string::npos);
    EXPECT_NE(doc.find("a&lt;b &amp; c"), std::string::npos);
    EXPECT_EQ(doc.find("rank 0 & "), std::string::npos);
    EXPECT_EQ(doc.find("a<b"), std::string::npos);
  }
  // Every & in the SVG starts an entity.
  const std::string svg = TimelineSvg(picture);
  const std::regex bare_ampersand("&(?!amp;|lt;|gt;|quot;|#39;)");
  EXPECT_FALSE(std::regex_search(svg, bare_ampersand));
}

TEST(TimelinePicture, EqualPicturesGiveEqualBytes) {
  TimelinePicture picture = OneFOneB(4, 8, 1'234'567);
  picture.subtitle = {"makespan", "bubble"};
  const std::string svg = TimelineSvg(picture);
  EXPECT_EQ(svg, TimelineSvg(picture));
  EXPECT_EQ(TimelineHtml(picture), TimelineHtml(picture));
  // The boxes' order in the picture does not matter.
  std::reverse(picture.boxes.begin(), picture.boxes.end());
  EXPECT_EQ(TimelineSvg(picture), svg);
}

TEST(TimelinePicture, HtmlHasNoExternalReferences) {
  const std::string html = TimelineHtml(OneFOneB(4, 8, kMs));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  const std::string xmlns = "http://www.w3.org/2000/svg";
  for (size_t at = html.find("http"); at != std::string::npos; at = html.find("http", at + 1)) {
    EXPECT_EQ(html.compare(at, xmlns.size(), xmlns), 0) << html.substr(at, 40);
  }
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("id=\"reset\""), std::string::npos);
  // Every box carries its microbatch number, shown by the script when the box has room.
  EXPECT_EQ(Find(html, "text", "mb").size(), Find(html, "rect", "box").size());
}

// The page's style and script are traces/timeline.css and traces/timeline.js, inlined whole.
TEST(TimelinePicture, HtmlInlinesTheStyleAndScriptFiles) {
  const std::string html = TimelineHtml(OneFOneB(2, 2, kMs));
  for (const char* name : {"timeline.css", "timeline.js"}) {
    SCOPED_TRACE(name);
    const EmbeddedFile* file = FindEmbeddedFile(TimelinePageFiles(), name);
    ASSERT_NE(file, nullptr);
    std::ifstream in(std::string(PPSIM_SOURCE_DIR) + "/traces/" + name, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read the source file";
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), file->bytes);
  }
  const std::string css(FindEmbeddedFile(TimelinePageFiles(), "timeline.css")->bytes);
  const std::string js(FindEmbeddedFile(TimelinePageFiles(), "timeline.js")->bytes);
  EXPECT_NE(html.find("\n<style>\n" + css + "</style>\n</head>\n"), std::string::npos);
  EXPECT_TRUE(html.ends_with("\n<script>\n" + js + "</script>\n</body>\n</html>\n"));
}

TEST(TimelinePicture, SixteenRanksOfSixtyFourMicrobatchesAreReadable) {
  const TimelinePicture picture = OneFOneB(16, 64, kMs);
  ASSERT_EQ(picture.boxes.size(), 16u * 128u);
  const std::string svg = TimelineSvg(picture);
  const std::vector<Element> boxes = Find(svg, "rect", "box");
  ASSERT_EQ(boxes.size(), picture.boxes.size());
  size_t labels = 0;
  // Each label directly follows its box.
  const std::regex box_and_label(
      "<rect class=\"box\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"[^>]*>"
      "<title>[^<]*</title></rect><text class=\"mb\" x=\"([0-9.]+)\"[^>]*>([0-9]+)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), box_and_label);
       it != std::sregex_iterator(); ++it) {
    ++labels;
    const double x = std::stod((*it)[1]), width = std::stod((*it)[2]);
    EXPECT_GE(width + kPrinted, LabelWidth((*it)[4]));
    EXPECT_NEAR(std::stod((*it)[3]), x + width / 2, 2 * kPrinted);
  }
  EXPECT_EQ(labels, boxes.size());
  EXPECT_EQ(Find(svg, "path", "mem").size(), 16u);
  // The plot is as wide as the 90th percentile box needs: a forward (1 ms) with two digits.
  const double end_ms = static_cast<double>(picture.end_ns) / kMs;
  EXPECT_EQ(Find(svg, "svg", "timeline")[0].Num("data-plot-w"),
            std::ceil(LabelWidth("10") * end_ms));
}

TEST(TimelinePicture, PlotWidthIsCapped) {
  TimelinePicture picture = Rows(1, 1000 * kMs);
  for (int i = 0; i < 1000; ++i) {
    picture.boxes.push_back(Box(0, i * kMs, i * kMs + kMs / 2, BoxKind::kForward, i));
  }
  const std::string svg = TimelineSvg(picture);
  EXPECT_EQ(Find(svg, "svg", "timeline")[0].Num("data-plot-w"), 12000);
  EXPECT_EQ(Find(svg, "rect", "box").size(), 1000u);
  EXPECT_TRUE(Find(svg, "text", "mb").empty());  // 6 px boxes
}

TEST(TimelinePicture, EmptyPictureIsStillAPicture) {
  TimelinePicture picture;
  const std::string svg = TimelineSvg(picture);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_TRUE(Find(svg, "rect", "box").empty());
  EXPECT_TRUE(LegendTexts(svg).empty());
  EXPECT_EQ(AxisOf(picture).labels, (std::vector<std::string>{"0", "1"}));  // 0 to 1 ns
}

}  // namespace
}  // namespace ppsim
