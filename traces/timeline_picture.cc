#include "traces/timeline_picture.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "base/escape.h"
#include "base/svg.h"

namespace ppsim {
namespace {

// Layout, in SVG pixels. Text widths are estimated at kEmPerChar per character: DejaVu Sans (what
// a Debian browser falls back to) has 0.636 em digits, the widest of the common sans fonts, so the
// estimates err on the wide side wherever the picture is opened.
constexpr double kEmPerChar = 0.64;
constexpr double kBoldEmPerChar = 0.72;
constexpr double kTitlePx = 16;  // bold
constexpr double kFlagPx = 13;   // bold: the OOM line under the title
constexpr double kTextPx = 12;   // subtitle, legend, row names
constexpr double kSmallPx = 11;  // microbatch numbers, tick labels, memory labels
constexpr double kMargin = 12;
// A microbatch number is written only into a box this much wider than its digits.
constexpr double kLabelPad = 2;  // each side
// The plot is wide enough for kFitQuantile of the boxes to hold their microbatch number, within
// [kMinPlotWidth, kMaxPlotWidth]: a percentile, so that a few tiny boxes cannot stretch it.
constexpr double kFitQuantile = 0.9;
constexpr double kMinPlotWidth = 800;
constexpr double kMaxPlotWidth = 12000;
// A row: the boxes, then (when any row has memory) its memory band, then a gap.
constexpr double kBoxHeight = 22;
constexpr double kMemGap = 2;
constexpr double kMemHeight = 18;
// With a capacity line the band is taller: beside it, the capacity label and the peak label stand
// one above the other (kLabelPitch apart, the height of a line of 11 px text).
constexpr double kCapacityMemHeight = 32;
constexpr double kLabelPitch = 13;
constexpr double kRowGap = 8;
constexpr double kNameGap = 8;  // between the longest row name and the plot
constexpr double kPeakGap = 6;  // between the plot and a memory label
// Ticks at least this far apart, and their labels at least kTickLabelGap apart.
constexpr double kMinTickSpacing = 60;
constexpr double kTickLabelGap = 12;
constexpr double kLegendLine = 20;
// The legend wraps at this width (or the picture's, if narrower), so that it fits any window.
constexpr double kLegendWrap = 640;
// A row's transfer lanes, one per kind of transfer the picture has, under its boxes.
constexpr double kXferGap = 2;
constexpr double kXferLane = 7;
constexpr double kSwatch = 14;

constexpr const char* kMemoryColour = "#4a5560";
constexpr const char* kCapacityColour = "#222222";
// Out of memory: the flag, OOM rows' labels and their curves above the capacity (6.5:1 contrast
// on white).

struct Rgb {
  double r, g, b;  // 0..255
};

// The palette's colour of `hex` ("#4e79a7").
Rgb FromHex(const char* hex) {
  unsigned r = 0, g = 0, b = 0;
  std::sscanf(hex, "#%02x%02x%02x", &r, &g, &b);
  return {static_cast<double>(r), static_cast<double>(g), static_cast<double>(b)};
}

// One palette colour per kind (base/svg.h); orange and red for the two backward kinds so that I
// and B stay apart.
Rgb KindColour(BoxKind kind) {
  switch (kind) {
    case BoxKind::kForward:
      return FromHex(kPalette[0]);
    case BoxKind::kBackwardInput:
      return FromHex(kPalette[1]);
    case BoxKind::kBackwardWeight:
      return FromHex(kPalette[4]);
    case BoxKind::kBackward:
      return FromHex(kPalette[2]);
    case BoxKind::kOverlap:
      return FromHex(kPalette[6]);
  }
  return {0x80, 0x80, 0x80};
}

constexpr BoxKind kKinds[] = {BoxKind::kForward, BoxKind::kBackwardInput, BoxKind::kBackwardWeight,
                              BoxKind::kBackward, BoxKind::kOverlap};

const char* KindLegend(BoxKind kind) {
  switch (kind) {
    case BoxKind::kForward:
      return "F forward";
    case BoxKind::kBackwardInput:
      return "I backward (input)";
    case BoxKind::kBackwardWeight:
      return "W backward (weight)";
    case BoxKind::kBackward:
      return "B backward";
    case BoxKind::kOverlap:
      return "F&B overlapped";
  }
  return "";
}

// Later virtual stages are mixed towards white, at most 55% so the hue stays recognisable.
Rgb Shade(BoxKind kind, int32_t chunk, int32_t num_chunks) {
  const Rgb base = KindColour(kind);
  const double t = num_chunks > 1 ? 0.55 * std::clamp(chunk, 0, num_chunks - 1) / num_chunks : 0.0;
  return {base.r + (255 - base.r) * t, base.g + (255 - base.g) * t, base.b + (255 - base.b) * t};
}

std::string Hex(Rgb c) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "#%02x%02x%02x", static_cast<int>(std::lround(c.r)),
                static_cast<int>(std::lround(c.g)), static_cast<int>(std::lround(c.b)));
  return buffer;
}

// WCAG relative luminance.
double Luminance(Rgb c) {
  auto linear = [](double v) {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

constexpr const char* kDarkText = "#111111";
constexpr Rgb kDarkTextRgb = {0x11, 0x11, 0x11};

// Whichever of white and dark text has the higher WCAG contrast ratio on `fill`.
const char* TextColourOn(Rgb fill) {
  const double l = Luminance(fill);
  const double on_white = 1.05 / (l + 0.05);
  const double on_dark = (l + 0.05) / (Luminance(kDarkTextRgb) + 0.05);
  return on_dark >= on_white ? kDarkText : "#ffffff";
}

// Characters of three or more UTF-8 bytes (arrows, CJK) count double: they tend to be wide.
double TextWidth(std::string_view text, double font_px, double em_per_char = kEmPerChar) {
  return TextCells(text) * font_px * em_per_char;
}

double LabelWidth(int32_t microbatch) {
  return TextWidth(std::to_string(microbatch), kSmallPx) + 2 * kLabelPad;
}

// Binary units, at most one decimal: "512 B", "1.5 KiB", "12 GiB".
std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (unit < 4 && std::fabs(std::round(value * 10) / 10) >= 1024) {
    value /= 1024;
    ++unit;
  }
  std::string text = FormatFixed(value, unit == 0 ? 0 : 1);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return text + " " + kUnits[unit];
}

struct TimeUnit {
  double ns;
  const char* name;
};
constexpr TimeUnit kTimeUnits[] = {{1, "ns"}, {1e3, "\u00b5s"}, {1e6, "ms"}, {1e9, "s"}};

// The largest unit of which `span_ns` holds at least one.
TimeUnit UnitFor(double span_ns) {
  TimeUnit unit = kTimeUnits[0];
  for (const TimeUnit& u : kTimeUnits) {
    if (span_ns >= u.ns) unit = u;
  }
  return unit;
}

// Six significant digits, so hover times resolve a box among thousands: "150.25 ms".
std::string FormatTime(int64_t ns) {
  const TimeUnit unit = UnitFor(std::fabs(static_cast<double>(ns)));
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", static_cast<double>(ns) / unit.ns);
  return std::string(buffer) + " " + unit.name;
}

struct Tick {
  double ns;
  std::string label;
};

struct Axis {
  TimeUnit unit;
  std::vector<Tick> ticks;
};

// The smallest 1, 2 or 5 x 10^k step (in the unit the range calls for) whose ticks are at least
// kMinTickSpacing apart and whose labels leave kTickLabelGap between them, and no finer than 1 ns.
// The page's script repeats this rule for zoomed views.
Axis AxisTicks(double end_ns, double plot_width) {
  Axis axis{UnitFor(end_ns), {}};
  const double px_per_unit = plot_width / end_ns * axis.unit.ns;
  const double units = end_ns / axis.unit.ns;
  NiceStep(static_cast<int>(std::floor(std::log10(units))) - 3, [&](double step, int exponent) {
    if (step * axis.unit.ns < 1) return false;  // no ticks between nanoseconds
    const int decimals = std::max(0, -exponent);
    const int64_t last = static_cast<int64_t>(std::floor(units / step + 1e-9));
    double widest = 0;
    std::vector<Tick> ticks;
    for (int64_t i = 0; i <= last; ++i) {
      ticks.push_back({static_cast<double>(i) * step * axis.unit.ns,
                       FormatFixed(static_cast<double>(i) * step, decimals)});
      widest = std::max(widest, TextWidth(ticks.back().label, kSmallPx));
    }
    if (step * px_per_unit < std::max(kMinTickSpacing, widest + kTickLabelGap)) return false;
    axis.ticks = std::move(ticks);
    return true;
  });
  return axis;
}

double PlotWidth(const TimelinePicture& picture) {
  std::vector<double> px_per_ns;
  for (const PictureBox& box : picture.boxes) {
    if (box.end_ns > box.start_ns) {
      px_per_ns.push_back(LabelWidth(box.microbatch) /
                          static_cast<double>(box.end_ns - box.start_ns));
    }
  }
  if (px_per_ns.empty() || picture.end_ns <= 0) return kMinPlotWidth;
  std::sort(px_per_ns.begin(), px_per_ns.end());
  const size_t fit = static_cast<size_t>(kFitQuantile * static_cast<double>(px_per_ns.size() - 1));
  return std::clamp(std::ceil(px_per_ns[fit] * static_cast<double>(picture.end_ns)), kMinPlotWidth,
                    kMaxPlotWidth);
}

// One palette colour per kind of transfer, apart from the boxes' kinds.
const char* TransferColour(TransferKind kind) {
  switch (kind) {
    case TransferKind::kP2p:
      return kPalette[10];
    case TransferKind::kCollective:
      return kPalette[8];
    case TransferKind::kAllToAll:
      return kPalette[11];
  }
  return "#808080";
}

const char* TransferLegend(TransferKind kind) {
  switch (kind) {
    case TransferKind::kP2p:
      return "send/receive (p2p)";
    case TransferKind::kCollective:
      return "collective (all-reduce, ring)";
    case TransferKind::kAllToAll:
      return "all-to-all";
  }
  return "";
}

constexpr TransferKind kTransferKinds[] = {TransferKind::kP2p, TransferKind::kCollective,
                                           TransferKind::kAllToAll};

struct LegendItem {
  enum Type { kKind, kChunks, kTransfer, kMemory, kCapacity, kOverCapacity } type;
  BoxKind kind;  // kKind; kChunks: the kind whose shades it shows
  std::string text;
  double x = 0, y = 0;                         // top left
  TransferKind transfer = TransferKind::kP2p;  // kTransfer
};

// A row's memory band.
struct Band {
  int64_t peak_bytes = 0;      // the curve's largest value
  std::string peak_label;      // "peak 52 GiB" ("peak 52 GiB · OOM"); empty: no curve
  std::string capacity_label;  // "40 GiB capacity"; empty: no line
};

struct Layout {
  double end_ns = 1;  // > 0, so that times map to x
  double plot_x = 0, plot_width = 0, right = 0;
  double width = 0, height = 0, min_width = 0;
  double title_y = 0;
  std::string oom_flag;  // empty: no rank is out of memory
  double oom_flag_y = 0;
  std::vector<double> subtitle_y;
  std::vector<LegendItem> legend;
  double plot_top = 0, pitch = 0, plot_bottom = 0, axis_y = 0;
  bool has_memory = false;
  bool has_capacity = false;  // some band has a capacity line: every band is taller
  double mem_height = kMemHeight;
  int xfer_lanes = 0;                              // lanes per row: the kinds of transfer present
  int lane_of[kTransferKindCount] = {-1, -1, -1};  // by TransferKind; -1: absent
  int32_t max_chunks = 1;
  int64_t max_bytes = 0;    // the top of every band: the largest curve value or capacity
  std::vector<Band> bands;  // per row
  Axis axis;

  double X(double ns) const { return plot_x + ns / end_ns * plot_width; }
  double RowTop(size_t row) const { return plot_top + static_cast<double>(row) * pitch; }
  double XferBlock() const { return xfer_lanes > 0 ? kXferGap + xfer_lanes * kXferLane : 0; }
  double XferTop(size_t row, TransferKind kind) const {
    return RowTop(row) + kBoxHeight + kXferGap + lane_of[static_cast<int>(kind)] * kXferLane;
  }
  double BandTop(size_t row) const { return RowTop(row) + kBoxHeight + XferBlock() + kMemGap; }
  double BandBottom(size_t row) const { return BandTop(row) + mem_height; }
  // Where `bytes` are in row's band: every band has one scale, 0 at the bottom.
  double MemY(size_t row, int64_t bytes) const {
    return max_bytes > 0 ? BandBottom(row) - static_cast<double>(bytes) /
                                                 static_cast<double>(max_bytes) * mem_height
                         : BandBottom(row);
  }
};

// "0-3, 6, 8, 9": runs of three or more ranks as ranges.
std::string RankList(const std::set<int32_t>& ranks) {
  std::string text;
  for (auto it = ranks.begin(); it != ranks.end();) {
    const int32_t first = *it;
    int32_t last = first;
    for (++it; it != ranks.end() && *it == last + 1; ++it) last = *it;
    if (!text.empty()) text += ", ";
    text += std::to_string(first);
    if (last == first + 1) text += ", " + std::to_string(last);
    if (last > first + 1) text += "-" + std::to_string(last);
  }
  return text;
}

// "OOM: rank 2 needs 95.3 GiB of 80 GiB", "OOM: ranks 0-3 need up to 95.3 GiB of 80 GiB" (the
// largest peak of them); empty when no row is out of memory. A rank of several replicas counts
// once.
std::string OomFlag(const TimelinePicture& picture) {
  std::set<int32_t> ranks;
  const PictureRow* worst = nullptr;
  for (const PictureRow& row : picture.rows) {
    if (!row.oom) continue;
    ranks.insert(row.rank);
    if (worst == nullptr || row.peak_memory_bytes > worst->peak_memory_bytes) worst = &row;
  }
  if (worst == nullptr) return "";
  const bool one = ranks.size() == 1;
  return std::string("OOM: rank") + (one ? " " : "s ") + RankList(ranks) +
         (one ? " needs " : " need up to ") + FormatBytes(worst->peak_memory_bytes) + " of " +
         FormatBytes(worst->capacity_bytes);
}

// Each row's curve peak and labels, the one scale of all bands and their height.
void LayOutMemory(const TimelinePicture& picture, Layout* layout) {
  layout->bands.assign(picture.rows.size(), Band());
  for (size_t r = 0; r < picture.rows.size(); ++r) {
    const PictureRow& row = picture.rows[r];
    if (row.memory.empty()) continue;
    layout->has_memory = true;
    Band& band = layout->bands[r];
    for (const MemoryPoint& point : row.memory) {
      band.peak_bytes = std::max(band.peak_bytes, point.bytes);
    }
    band.peak_label = "peak " + FormatBytes(band.peak_bytes) + (row.oom ? " \u00b7 OOM" : "");
    layout->max_bytes = std::max(layout->max_bytes, band.peak_bytes);
    if (row.capacity_bytes > 0) {
      band.capacity_label = FormatBytes(row.capacity_bytes) + " capacity";
      layout->max_bytes = std::max(layout->max_bytes, row.capacity_bytes);
      layout->has_capacity = true;
      layout->mem_height = kCapacityMemHeight;
    }
  }
}

// The baselines of row r's labels beside its band: the capacity label level with its line (kept
// inside the band), the peak label a line above it where that fits, else a line below.
void BandLabelYs(const TimelinePicture& picture, const Layout& layout, size_t r, double* peak_y,
                 double* capacity_y) {
  const double top = layout.BandTop(r) + 9;  // a baseline that keeps 11 px text in the band
  if (layout.bands[r].capacity_label.empty()) {
    *peak_y = layout.BandBottom(r) - 5;
    *capacity_y = 0;
    return;
  }
  *capacity_y =
      std::clamp(layout.MemY(r, picture.rows[r].capacity_bytes) + 4, top, layout.BandBottom(r) + 2);
  *peak_y =
      *capacity_y - kLabelPitch >= top ? *capacity_y - kLabelPitch : *capacity_y + kLabelPitch;
}

double LegendItemWidth(const LegendItem& item) {
  return kSwatch + 5 + TextWidth(item.text, kTextPx) + 18;
}

Layout MakeLayout(const TimelinePicture& picture) {
  Layout layout;
  layout.end_ns = picture.end_ns > 0 ? static_cast<double>(picture.end_ns) : 1;
  layout.plot_width = PlotWidth(picture);
  layout.axis = AxisTicks(layout.end_ns, layout.plot_width);

  double names = 0;
  for (const PictureRow& row : picture.rows) {
    // OOM rows' names are bold.
    names = std::max(names, TextWidth(row.name, kTextPx, row.oom ? kBoldEmPerChar : kEmPerChar));
  }
  layout.plot_x = std::ceil(kMargin + names + kNameGap);

  const size_t rows = picture.rows.size();
  LayOutMemory(picture, &layout);
  double peaks = 0;
  for (const Band& band : layout.bands) {
    peaks = std::max(
        {peaks, TextWidth(band.peak_label, kSmallPx), TextWidth(band.capacity_label, kSmallPx)});
  }
  const double last_tick =
      layout.axis.ticks.empty() ? 0 : TextWidth(layout.axis.ticks.back().label, kSmallPx);
  // The script re-labels the axis when zoomed, with labels of up to about 8 characters.
  layout.right = std::ceil(std::max({kMargin + std::max(last_tick, 8 * kSmallPx * kEmPerChar) / 2,
                                     layout.has_memory ? kPeakGap + peaks + kMargin : 0.0}));

  double text_width = TextWidth(picture.title, kTitlePx, kBoldEmPerChar);
  layout.oom_flag = OomFlag(picture);
  text_width = std::max(text_width, TextWidth(layout.oom_flag, kFlagPx, kBoldEmPerChar));
  for (const std::string& line : picture.subtitle) {
    text_width = std::max(text_width, TextWidth(line, kTextPx));
  }
  layout.width = std::ceil(
      std::max(layout.plot_x + layout.plot_width + layout.right, 2 * kMargin + text_width));

  for (const PictureBox& box : picture.boxes) {
    layout.max_chunks = std::max(layout.max_chunks, box.num_chunks);
  }
  for (BoxKind kind : kKinds) {
    const bool present = std::any_of(picture.boxes.begin(), picture.boxes.end(),
                                     [&](const PictureBox& box) { return box.kind == kind; });
    if (present) layout.legend.push_back({LegendItem::kKind, kind, KindLegend(kind)});
  }
  if (layout.max_chunks > 1) {
    const BoxKind shown = layout.legend.empty() ? BoxKind::kForward : layout.legend[0].kind;
    layout.legend.push_back({LegendItem::kChunks, shown, "lighter = later virtual stage"});
  }
  for (TransferKind kind : kTransferKinds) {
    const bool present = std::any_of(picture.transfers.begin(), picture.transfers.end(),
                                     [&](const PictureTransfer& t) { return t.kind == kind; });
    if (!present) continue;
    layout.lane_of[static_cast<int>(kind)] = layout.xfer_lanes++;
    LegendItem item{LegendItem::kTransfer, BoxKind::kForward, TransferLegend(kind)};
    item.transfer = kind;
    layout.legend.push_back(item);
  }
  if (layout.has_memory) {
    layout.legend.push_back(
        {LegendItem::kMemory, BoxKind::kForward, "memory: static + reserve + activations"});
  }
  if (layout.has_capacity) {
    layout.legend.push_back({LegendItem::kCapacity, BoxKind::kForward, "GPU memory capacity"});
  }
  if (!layout.oom_flag.empty()) {
    layout.legend.push_back({LegendItem::kOverCapacity, BoxKind::kForward, "over capacity (OOM)"});
  }

  double y = kMargin;
  layout.title_y = y + kTitlePx;
  y += kTitlePx + 8;
  if (!layout.oom_flag.empty()) {
    layout.oom_flag_y = y + kFlagPx;
    y += kFlagPx + 7;
  }
  for (size_t i = 0; i < picture.subtitle.size(); ++i) {
    layout.subtitle_y.push_back(y + kTextPx);
    y += kTextPx + 6;
  }
  y += 6;
  // The legend flows in lines as wide as the picture, at most kLegendWrap.
  double x = kMargin;
  double legend_width = 0;
  const double wrap = std::min(layout.width - kMargin, kLegendWrap);
  for (LegendItem& item : layout.legend) {
    const double w = LegendItemWidth(item);
    if (x > kMargin && x + w > wrap) {
      x = kMargin;
      y += kLegendLine;
    }
    item.x = x;
    item.y = y;
    x += w;
    legend_width = std::max(legend_width, x);
  }
  if (!layout.legend.empty()) y += kLegendLine;
  y += 10;
  layout.min_width = std::ceil(std::max(2 * kMargin + text_width, legend_width + kMargin));

  layout.plot_top = y;
  layout.pitch = kBoxHeight + layout.XferBlock() +
                 (layout.has_memory ? kMemGap + layout.mem_height : 0) + kRowGap;
  layout.plot_bottom =
      rows == 0 ? y + kBoxHeight : y + static_cast<double>(rows) * layout.pitch - kRowGap;
  layout.axis_y = layout.plot_bottom + 6;
  layout.height = std::ceil(layout.axis_y + 35 + 4 + kMargin);
  return layout;
}

std::string Attr(const char* name, double px) {
  return std::string(" ") + name + "=\"" + Px(px) + "\"";
}

std::string LegendSvg(const Layout& layout) {
  std::string out = "<g class=\"legend\">\n";
  for (const LegendItem& item : layout.legend) {
    out += "<g class=\"legend-item\">";
    const double top = item.y + 4;
    switch (item.type) {
      case LegendItem::kKind:
        out += "<rect" + Attr("x", item.x) + Attr("y", top) + Attr("width", kSwatch) +
               Attr("height", 12) + " fill=\"" + Hex(KindColour(item.kind)) + "\"/>";
        break;
      case LegendItem::kChunks: {
        const int shades = std::min(layout.max_chunks, 4);
        for (int c = 0; c < shades; ++c) {
          const double w = kSwatch / shades;
          out += "<rect" + Attr("x", item.x + c * w) + Attr("y", top) + Attr("width", w) +
                 Attr("height", 12) + " fill=\"" + Hex(Shade(item.kind, c, shades)) + "\"/>";
        }
        break;
      }
      case LegendItem::kTransfer:
        out += "<rect" + Attr("x", item.x) + Attr("y", top + 3) + Attr("width", kSwatch) +
               Attr("height", kXferLane - 1) + " fill=\"" + TransferColour(item.transfer) + "\"/>";
        break;
      case LegendItem::kMemory:
        out += "<path d=\"M" + Px(item.x) + "," + Px(top + 12) + "V" + Px(top + 8) + "H" +
               Px(item.x + 5) + "V" + Px(top + 2) + "H" + Px(item.x + 10) + "V" + Px(top + 6) +
               "H" + Px(item.x + kSwatch) + "V" + Px(top + 12) + "Z\" fill=\"" + kMemoryColour +
               "\" fill-opacity=\"0.2\" stroke=\"" + kMemoryColour + "\"/>";
        break;
      case LegendItem::kCapacity:
        out += "<line" + Attr("x1", item.x) + Attr("x2", item.x + kSwatch) + Attr("y1", top + 6) +
               Attr("y2", top + 6) + " stroke=\"" + kCapacityColour +
               "\" stroke-dasharray=\"4 2\"/>";
        break;
      case LegendItem::kOverCapacity:
        out += "<rect" + Attr("x", item.x) + Attr("y", top) + Attr("width", kSwatch) +
               Attr("height", 12) + " fill=\"" + kOomColour + "\" fill-opacity=\"0.35\" stroke=\"" +
               kOomColour + "\"/>";
        break;
    }
    out += "<text" + Attr("x", item.x + kSwatch + 5) + Attr("y", item.y + 14) + ">" +
           MarkupEscape(item.text) + "</text></g>\n";
  }
  return out + "</g>\n";
}

std::string GridSvg(const Layout& layout) {
  std::string out = "<g class=\"grid\" stroke=\"#ececec\">\n";
  for (const Tick& tick : layout.axis.ticks) {
    const double x = layout.X(tick.ns);
    out += "<line" + Attr("x1", x) + Attr("x2", x) + Attr("y1", layout.plot_top) +
           Attr("y2", layout.plot_bottom) + "/>\n";
  }
  return out + "</g>\n";
}

std::string AxisSvg(const Layout& layout) {
  const double y = layout.axis_y;
  std::string out = "<g class=\"axis\" font-size=\"11\" text-anchor=\"middle\">\n";
  out += "<line" + Attr("x1", layout.plot_x) + Attr("x2", layout.plot_x + layout.plot_width) +
         Attr("y1", y) + Attr("y2", y) + " stroke=\"#555\"/>\n";
  for (const Tick& tick : layout.axis.ticks) {
    const double x = layout.X(tick.ns);
    out += "<line" + Attr("x1", x) + Attr("x2", x) + Attr("y1", y) + Attr("y2", y + 5) +
           " stroke=\"#555\"/><text class=\"tick\"" + Attr("x", x) + Attr("y", y + 17) + ">" +
           tick.label + "</text>\n";
  }
  out += "<text class=\"axis-title\"" + Attr("x", layout.plot_x + layout.plot_width / 2) +
         Attr("y", y + 35) + " font-size=\"12\">time (" + layout.axis.unit.name + ")</text>\n";
  return out + "</g>\n";
}

std::string BoxTitle(const PictureBox& box) {
  std::string text = box.details.empty() ? "" : box.details + "\n";
  return text + FormatTime(box.start_ns) + " \u2192 " + FormatTime(box.end_ns) + " (" +
         FormatTime(std::max<int64_t>(0, box.end_ns - box.start_ns)) + ")";
}

// What a row's memory is made of, for hover: "static (weights, gradients, optimizer) 20 GiB",
// "peak 52 GiB = static 20 GiB + reserve 12 GiB + activations 20 GiB", "capacity 40 GiB: out of
// memory", a line each.
std::string MemoryDetails(const PictureRow& row) {
  std::string text = "static (weights, gradients, optimizer) " + FormatBytes(row.static_bytes);
  if (row.peak_memory_bytes > 0) {
    text += "\npeak " + FormatBytes(row.peak_memory_bytes) + " = static " +
            FormatBytes(row.static_bytes) + " + reserve " + FormatBytes(row.reserve_bytes) +
            " + activations " + FormatBytes(row.peak_activation_bytes);
  }
  if (row.capacity_bytes > 0) {
    text += "\ncapacity " + FormatBytes(row.capacity_bytes) + (row.oom ? ": out of memory" : "");
  }
  return text;
}

// A step curve of the row's memory from its first point on, its last value held until end_ns,
// on the bands' one scale; for an OOM row, the part of the curve above its capacity again, in red.
std::string MemorySvg(const TimelinePicture& picture, const Layout& layout, size_t r) {
  const PictureRow& row = picture.rows[r];
  const Band& band = layout.bands[r];
  const double bottom = layout.BandBottom(r);
  std::string d = "M" +
                  Px(layout.X(std::clamp(static_cast<double>(row.memory.front().time_ns), 0.0,
                                         layout.end_ns))) +
                  "," + Px(bottom);
  int64_t peak_at = -1;
  for (const MemoryPoint& point : row.memory) {
    const double t = std::clamp(static_cast<double>(point.time_ns), 0.0, layout.end_ns);
    d += "H" + Px(layout.X(t)) + "V" + Px(layout.MemY(r, point.bytes));
    if (point.bytes == band.peak_bytes && peak_at < 0) peak_at = point.time_ns;
  }
  d += "H" + Px(layout.plot_x + layout.plot_width) + "V" + Px(bottom) + "Z";
  std::string out =
      "<path class=\"mem\" d=\"" + d + "\" fill=\"" + kMemoryColour +
      "\" fill-opacity=\"0.2\" stroke=\"" + kMemoryColour +
      "\" stroke-width=\"1\" vector-effect=\"non-scaling-stroke\"><title>" +
      MarkupEscape(row.name + "\nmemory = static + reserve + live activations\n" +
                   MemoryDetails(row) + "\nhighest shown " + FormatBytes(band.peak_bytes) + " at " +
                   FormatTime(std::max<int64_t>(0, peak_at))) +
      "</title></path>\n";
  if (row.capacity_bytes <= 0) return out;
  const double line_y = layout.MemY(r, row.capacity_bytes);
  if (row.oom && line_y > layout.BandTop(r)) {
    // The clip rectangle is in the path's coordinates: the page's zoom transforms both alike.
    const std::string id = "over-" + std::to_string(r);
    out += "<clipPath id=\"" + id + "\"><rect" + Attr("x", layout.plot_x) +
           Attr("y", layout.BandTop(r) - 1) + Attr("width", layout.plot_width) +
           Attr("height", line_y - layout.BandTop(r) + 1) + "/></clipPath>";
    out += "<path class=\"mem over\" clip-path=\"url(#" + id + ")\" d=\"" + d + "\" fill=\"" +
           kOomColour + "\" fill-opacity=\"0.35\" stroke=\"" + kOomColour +
           "\" stroke-width=\"1.5\" vector-effect=\"non-scaling-stroke\" "
           "pointer-events=\"none\"/>\n";
  }
  return out;
}

// The capacity line across row r's band (outside the clipped plot group, as the row line, so
// that the page's zoom only stretches it).
std::string CapacitySvg(const TimelinePicture& picture, const Layout& layout, size_t r) {
  const double y = layout.MemY(r, picture.rows[r].capacity_bytes);
  return "<line class=\"capacity\"" + Attr("x1", layout.plot_x) +
         Attr("x2", layout.plot_x + layout.plot_width) + Attr("y1", y) + Attr("y2", y) +
         " stroke=\"" + kCapacityColour + "\" stroke-dasharray=\"5 3\" data-bytes=\"" +
         std::to_string(picture.rows[r].capacity_bytes) + "\"/>\n";
}

std::string TransferTitle(const PictureTransfer& t) {
  std::string text = t.details.empty() ? "" : t.details + "\n";
  return text + FormatTime(t.start_ns) + " \u2192 " + FormatTime(t.end_ns);
}

// The transfers of one row, in their lanes: at least a pixel wide, so that short ones show.
std::string TransfersSvg(const Layout& layout, size_t r,
                         const std::vector<const PictureTransfer*>& transfers, size_t* next) {
  std::string out;
  for (; *next < transfers.size() && static_cast<size_t>(transfers[*next]->row) == r; ++*next) {
    const PictureTransfer& t = *transfers[*next];
    const double x0 = layout.X(static_cast<double>(t.start_ns));
    const double w = std::max(1.0, layout.X(static_cast<double>(t.end_ns)) - x0);
    out += "<rect class=\"xfer\"" + Attr("x", x0) + Attr("y", layout.XferTop(r, t.kind)) +
           Attr("width", w) + Attr("height", kXferLane - 1) + " fill=\"" + TransferColour(t.kind) +
           "\" data-s=\"" + std::to_string(t.start_ns) + "\" data-e=\"" + std::to_string(t.end_ns) +
           "\"><title>" + MarkupEscape(TransferTitle(t)) + "</title></rect>\n";
  }
  return out;
}

// The transfers by row, then by time.
std::vector<const PictureTransfer*> SortedTransfers(const TimelinePicture& picture) {
  std::vector<const PictureTransfer*> transfers;
  for (const PictureTransfer& t : picture.transfers) {
    if (t.row >= 0 && static_cast<size_t>(t.row) < picture.rows.size()) transfers.push_back(&t);
  }
  std::stable_sort(transfers.begin(), transfers.end(),
                   [](const PictureTransfer* a, const PictureTransfer* b) {
                     return std::tie(a->row, a->kind, a->start_ns, a->end_ns) <
                            std::tie(b->row, b->kind, b->start_ns, b->end_ns);
                   });
  return transfers;
}

// Where a flow meets a row: the middle of its boxes, or of one of its transfer lanes (a lane the
// picture does not have: its boxes).
double FlowY(const Layout& layout, int32_t row, std::optional<TransferKind> lane) {
  if (lane.has_value() && layout.lane_of[static_cast<int>(*lane)] >= 0) {
    return layout.XferTop(static_cast<size_t>(row), *lane) + (kXferLane - 1) / 2;
  }
  return layout.RowTop(static_cast<size_t>(row)) + kBoxHeight / 2;
}

// The dependencies as arrows, hidden until the page's checkbox shows them; clipped to the plot.
std::string FlowsSvg(const TimelinePicture& picture, const Layout& layout) {
  std::string out =
      "<g class=\"flows\" clip-path=\"url(#plot-clip)\" visibility=\"hidden\" "
      "stroke=\"#333333\" stroke-opacity=\"0.55\" stroke-width=\"1\">\n";
  const int32_t rows = static_cast<int32_t>(picture.rows.size());
  for (const PictureFlow& f : picture.flows) {
    if (f.from_row < 0 || f.from_row >= rows || f.to_row < 0 || f.to_row >= rows) continue;
    out += "<line class=\"flow\"" + Attr("x1", layout.X(static_cast<double>(f.from_ns))) +
           Attr("y1", FlowY(layout, f.from_row, f.from_lane)) +
           Attr("x2", layout.X(static_cast<double>(f.to_ns))) +
           Attr("y2", FlowY(layout, f.to_row, f.to_lane)) + " data-s=\"" +
           std::to_string(f.from_ns) + "\" data-e=\"" + std::to_string(f.to_ns) +
           "\" marker-end=\"url(#arrow)\"/>\n";
  }
  return out + "</g>\n";
}

// `page`: the HTML page's picture: every box gets its microbatch number, hidden where it does not
// fit, so that the page's script can show it when zoomed in, and the flows are drawn (hidden).
std::string Svg(const TimelinePicture& picture, bool page) {
  const Layout layout = MakeLayout(picture);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" +
                    FormatFixed(layout.width, 0) + "\" height=\"" + FormatFixed(layout.height, 0) +
                    "\" viewBox=\"0 0 " + FormatFixed(layout.width, 0) + " " +
                    FormatFixed(layout.height, 0) +
                    "\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"12\"";
  // Where the plot is, for the page's zoom.
  out += " data-plot-x=\"" + Px(layout.plot_x) + "\" data-plot-w=\"" + Px(layout.plot_width) +
         "\" data-right=\"" + Px(layout.right) + "\" data-min-width=\"" + Px(layout.min_width) +
         "\" data-plot-top=\"" + Px(layout.plot_top) + "\" data-plot-bottom=\"" +
         Px(layout.plot_bottom) + "\" data-axis-y=\"" + Px(layout.axis_y) + "\" data-end-ns=\"" +
         FormatFixed(layout.end_ns, 0) + "\">\n";
  out += "<defs><clipPath id=\"plot-clip\"><rect" + Attr("x", layout.plot_x) +
         Attr("y", layout.plot_top) + Attr("width", layout.plot_width) +
         Attr("height", layout.plot_bottom - layout.plot_top) + "/></clipPath>";
  if (page && !picture.flows.empty()) {
    out +=
        "<marker id=\"arrow\" viewBox=\"0 0 6 6\" refX=\"6\" refY=\"3\" markerWidth=\"6\" "
        "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0L6,3L0,6Z\" fill=\"#333333\"/>"
        "</marker>";
  }
  out += "</defs>\n";
  out += "<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += "<text class=\"title\"" + Attr("x", kMargin) + Attr("y", layout.title_y) +
         " font-size=\"16\" font-weight=\"bold\">" + MarkupEscape(picture.title) + "</text>\n";
  if (!layout.oom_flag.empty()) {
    out += "<text class=\"oom-flag\"" + Attr("x", kMargin) + Attr("y", layout.oom_flag_y) +
           " font-size=\"13\" font-weight=\"bold\" fill=\"" + kOomColour + "\">" +
           MarkupEscape(layout.oom_flag) + "</text>\n";
  }
  for (size_t i = 0; i < picture.subtitle.size(); ++i) {
    out += "<text class=\"subtitle\"" + Attr("x", kMargin) + Attr("y", layout.subtitle_y[i]) +
           " fill=\"#444\">" + MarkupEscape(picture.subtitle[i]) + "</text>\n";
  }
  out += LegendSvg(layout);
  out += GridSvg(layout);

  // Boxes by row, then by time: the file reads like the picture. A box of no row is not drawn.
  std::vector<const PictureBox*> boxes;
  for (const PictureBox& box : picture.boxes) {
    if (box.row >= 0 && static_cast<size_t>(box.row) < picture.rows.size()) boxes.push_back(&box);
  }
  std::stable_sort(boxes.begin(), boxes.end(), [](const PictureBox* a, const PictureBox* b) {
    return std::tie(a->row, a->start_ns, a->end_ns) < std::tie(b->row, b->start_ns, b->end_ns);
  });
  const std::vector<const PictureTransfer*> transfers = SortedTransfers(picture);
  size_t next_transfer = 0;
  size_t next = 0;
  for (size_t r = 0; r < picture.rows.size(); ++r) {
    const PictureRow& row = picture.rows[r];
    const double top = layout.RowTop(r);
    out += "<g class=\"row\">\n";
    out += "<line class=\"row-line\"" + Attr("x1", layout.plot_x) +
           Attr("x2", layout.plot_x + layout.plot_width) + Attr("y1", top + kBoxHeight) +
           Attr("y2", top + kBoxHeight) + " stroke=\"#d8d8d8\"/>\n";
    const std::string oom_style =
        row.oom ? std::string(" font-weight=\"bold\" fill=\"") + kOomColour + "\"" : "";
    out += "<text class=\"row-name\"" + Attr("x", layout.plot_x - kNameGap) +
           Attr("y", top + kBoxHeight / 2 + 4) + " text-anchor=\"end\"" + oom_style + ">" +
           MarkupEscape(row.name) + "<title>" + MarkupEscape(row.name + "\n" + MemoryDetails(row)) +
           "</title></text>\n";
    out += "<g clip-path=\"url(#plot-clip)\">\n";
    for (; next < boxes.size() && static_cast<size_t>(boxes[next]->row) == r; ++next) {
      const PictureBox& box = *boxes[next];
      const double x0 = layout.X(static_cast<double>(box.start_ns));
      const double w = std::max(0.0, layout.X(static_cast<double>(box.end_ns)) - x0);
      const Rgb fill = Shade(box.kind, box.chunk, box.num_chunks);
      out += "<rect class=\"box\"" + Attr("x", x0) + Attr("y", top) + Attr("width", w) +
             Attr("height", kBoxHeight) + " fill=\"" + Hex(fill) +
             "\" stroke=\"#ffffff\" stroke-width=\"0.5\" data-s=\"" + std::to_string(box.start_ns) +
             "\" data-e=\"" + std::to_string(box.end_ns) + "\"><title>" +
             MarkupEscape(BoxTitle(box)) + "</title></rect>";
      const bool fits = w >= LabelWidth(box.microbatch);
      if (fits || page) {
        out += "<text class=\"mb\"" + Attr("x", x0 + w / 2) + Attr("y", top + kBoxHeight / 2 + 4) +
               " font-size=\"11\" text-anchor=\"middle\" fill=\"" + TextColourOn(fill) + "\"" +
               (fits ? "" : " visibility=\"hidden\"") + ">" + std::to_string(box.microbatch) +
               "</text>";
      }
      out += "\n";
    }
    out += TransfersSvg(layout, r, transfers, &next_transfer);
    if (!row.memory.empty()) out += MemorySvg(picture, layout, r);
    out += "</g>\n";
    if (!row.memory.empty()) {
      const Band& band = layout.bands[r];
      double peak_y = 0, capacity_y = 0;
      BandLabelYs(picture, layout, r, &peak_y, &capacity_y);
      const double label_x = layout.plot_x + layout.plot_width + kPeakGap;
      if (!band.capacity_label.empty()) {
        out += CapacitySvg(picture, layout, r);
        out += "<text class=\"capacity\"" + Attr("x", label_x) + Attr("y", capacity_y) +
               " font-size=\"11\" fill=\"" + kCapacityColour + "\">" +
               MarkupEscape(band.capacity_label) + "</text>\n";
      }
      out += "<text class=\"peak\"" + Attr("x", label_x) + Attr("y", peak_y) +
             " font-size=\"11\" fill=\"" + (row.oom ? kOomColour : kMemoryColour) + "\">" +
             MarkupEscape(band.peak_label) + "</text>\n";
    }
    out += "</g>\n";
  }
  if (page && !picture.flows.empty()) out += FlowsSvg(picture, layout);
  out += AxisSvg(layout);
  return out + "</svg>\n";
}

// The page's style and script are traces/timeline.css and traces/timeline.js, embedded at build
// time. The script's zoom and pan re-place the boxes for the visible time range [t0, t1] rather
// than scaling the picture, so that text keeps its size: microbatch numbers appear when their box
// has room, the axis is re-ticked (the writer's AxisTicks rule) and the row names stay where they
// are. The plot fills the window's width.
std::string_view PageFile(std::string_view name) {
  const EmbeddedFile* file = FindEmbeddedFile(TimelinePageFiles(), name);
  return file == nullptr ? std::string_view() : file->bytes;
}

}  // namespace

std::string TimelineSvg(const TimelinePicture& picture) { return Svg(picture, false); }

std::string TimelineHtml(const TimelinePicture& picture) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  out += MarkupEscape(picture.title.empty() ? "timeline" : picture.title);
  out +=
      "</title>\n<style>\n" + std::string(PageFile("timeline.css")) + "</style>\n</head>\n<body>\n";
  out +=
      "<div class=\"bar\"><button id=\"reset\" type=\"button\">legible zoom</button><button "
      "id=\"whole\" type=\"button\">whole run</button><label><input id=\"xfers\" "
      "type=\"checkbox\" checked> transfers</label>";
  if (!picture.flows.empty()) {
    out += "<label><input id=\"flows\" type=\"checkbox\"> dependencies</label>";
  }
  out +=
      " \u00b7 <span id=\"view\"></span> \u00b7 wheel over the plot: zoom \u00b7 drag: pan "
      "\u00b7 hover a box: details \u00b7 wheel over the row names: scroll</div>\n";
  out += "<div id=\"wrap\">\n" + Svg(picture, true) + "</div>\n";
  out += "<div id=\"tip\" hidden></div>\n";
  out += "<script>\n" + std::string(PageFile("timeline.js")) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace ppsim
