#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string_view>

#include "base/escape.h"
#include "base/svg.h"
#include "batch/result_values.h"
#include "config/units.h"

namespace ppsim {
namespace {

// Layout, in SVG pixels. Text widths are estimated conservatively per character.
constexpr double kCharPx = 7;       // 12px text
constexpr double kTitleCharPx = 9;  // 14px bold titles
constexpr double kPlotHeight = 300;
constexpr double kLinePlotWidth = 480;
constexpr double kPlotTop = 44;
constexpr double kLegendRowPx = 18;
constexpr double kLegendBesideMaxPx = 320;
constexpr size_t kMaxLabelChars = 80;
constexpr size_t kMaxBarLabelChars = 40;
constexpr int kMaxTicks = 8;

double TextWidth(std::string_view text, double char_px = kCharPx) {
  return TextCells(text) * char_px;
}

// One chart's values in a display unit: those of the plan's points with a value in the column.
struct YAxis {
  std::string title;
  double scale = 1;                  // metric units per display unit
  std::vector<size_t> shown;         // indexes into plan.points
  std::vector<double> values;        // per shown point, in display units
  std::vector<std::string> labels;   // per shown point, for tooltips
  std::vector<bool> oom;             // per shown point
  bool any_oom = false;
  std::vector<double> capacities;    // distinct capacities > 0, largest first, in display units
  std::vector<std::string> capacity_labels;  // "GPU capacity 80 GiB"
  std::vector<bool> series_shown;    // per series of the plan
};

YAxis MakeYAxis(const ResultsTable& results, const Plan& plan, const ChartSpec& chart) {
  YAxis y;
  y.series_shown.assign(plan.series_labels.size(), false);
  std::vector<double> capacities;
  double largest = 0;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const ResultRow& row = results.rows[plan.points[i].row];
    if (!row.values[chart.column]) continue;
    y.shown.push_back(i);
    y.series_shown[plan.points[i].series] = true;
    largest = std::max(largest, std::fabs(*row.values[chart.column]));
    const double capacity = row.values[kCapacityColumn].value_or(0);
    if (chart.capacity_lines && capacity > 0) capacities.push_back(capacity);
  }
  std::sort(capacities.begin(), capacities.end(), std::greater<double>());
  capacities.erase(std::unique(capacities.begin(), capacities.end()), capacities.end());
  if (!capacities.empty()) largest = std::max(largest, capacities[0]);
  std::string unit;
  switch (chart.unit) {
    case ChartUnit::kRate: {
      const DisplayUnit u = PickUnit(kCountUnits, largest);
      y.scale = u.scale;
      unit = (*u.name ? std::string(u.name) + " " : "") + chart.rate_unit;
      break;
    }
    case ChartUnit::kFraction:
      y.scale = 0.01;
      unit = "%";
      break;
    case ChartUnit::kBytes: {
      const DisplayUnit u = PickUnit(kSizeUnits, largest);
      y.scale = u.scale;
      unit = u.name;
      break;
    }
  }
  y.title = chart.quantity + " (" + unit + ")";
  for (size_t i : y.shown) {
    const ResultRow& row = results.rows[plan.points[i].row];
    const double v = *row.values[chart.column];
    y.values.push_back(v / y.scale);
    std::string label;
    switch (chart.unit) {
      case ChartUnit::kRate:
        label = HumanCount(v) + " " + chart.rate_unit;
        break;
      case ChartUnit::kFraction:
        label = HumanPercent(v);
        break;
      case ChartUnit::kBytes:
        label = HumanBytes(v);
        if (row.values[kCapacityColumn].value_or(0) > 0) {
          label += " of " + HumanBytes(*row.values[kCapacityColumn]);
        }
        break;
    }
    y.labels.push_back(label + (row.oom ? ", OOM" : ""));
    y.oom.push_back(row.oom);
    y.any_oom = y.any_oom || row.oom;
  }
  for (double capacity : capacities) {
    y.capacities.push_back(capacity / y.scale);
    y.capacity_labels.push_back("GPU capacity " + HumanBytes(capacity));
  }
  return y;
}

// Ticks at multiples of a 1, 2 or 5 × 10^k step covering [lo, hi].
struct Ticks {
  int64_t first = 0;
  int count = 2;
  double step = 1;
  int decimals = 0;

  double At(int i) const { return static_cast<double>(first + i) * step; }
  double Lo() const { return At(0); }
  double Hi() const { return At(count - 1); }
  std::string Label(int i) const { return FormatFixed(At(i), decimals); }
};

// The smallest step of at least `min_step` giving at most `max_ticks` (>= 3) ticks.
Ticks NiceTicks(double lo, double hi, int max_ticks, double min_step = 0) {
  if (!(hi > lo)) {
    if (lo == 0) {
      hi = 1;
    } else {
      const double pad = std::fabs(lo) * 0.1;
      lo -= pad;
      hi += pad;
    }
  }
  Ticks ticks;
  NiceStep(static_cast<int>(std::floor(std::log10((hi - lo) / (max_ticks - 1)))) - 1,
           [&](double step, int exponent) {
             if (step < min_step) return false;
             ticks.step = step;
             ticks.first = static_cast<int64_t>(std::floor(lo / step + 1e-9));
             const int64_t last = static_cast<int64_t>(std::ceil(hi / step - 1e-9));
             ticks.count = static_cast<int>(last - ticks.first + 1);
             ticks.decimals = std::max(0, -exponent);
             return ticks.count <= max_ticks;
           });
  return ticks;
}

double MaxLabelWidth(const Ticks& ticks) {
  double width = 0;
  for (int i = 0; i < ticks.count; ++i) width = std::max(width, TextWidth(ticks.Label(i)));
  return width;
}

// x ticks whose labels leave at least 10px between them; whole steps when `whole` (microbatches
// have no 1.5).
Ticks FittingXTicks(double lo, double hi, double plot_width, bool whole) {
  Ticks ticks;
  for (int max_ticks = kMaxTicks; max_ticks >= 3; --max_ticks) {
    ticks = NiceTicks(lo, hi, max_ticks, whole ? 1 : 0);
    const double spacing = plot_width * ticks.step / (ticks.Hi() - ticks.Lo());
    if (MaxLabelWidth(ticks) + 10 <= spacing) break;
  }
  return ticks;
}

const char* Colour(int series) { return PaletteColour(series); }

// Series past the palette repeat its colours with another marker shape.
std::string Marker(int series, double x, double y, const char* css_class,
                   const std::string& tooltip) {
  const std::string fill = Colour(series);
  std::string tag;
  std::string out;
  switch ((series / kPaletteSize) % 4) {
    case 0:
      tag = "circle";
      out = "<circle class=\"" + std::string(css_class) + "\" cx=\"" + Px(x) + "\" cy=\"" + Px(y) +
            "\" r=\"3.5\"";
      break;
    case 1:
      tag = "rect";
      out = "<rect class=\"" + std::string(css_class) + "\" x=\"" + Px(x - 3.5) + "\" y=\"" +
            Px(y - 3.5) + "\" width=\"7\" height=\"7\"";
      break;
    case 2:
      tag = "polygon";
      out = "<polygon class=\"" + std::string(css_class) + "\" points=\"" + Px(x) + "," +
            Px(y - 4.5) + " " + Px(x + 4.5) + "," + Px(y + 3.5) + " " + Px(x - 4.5) + "," +
            Px(y + 3.5) + "\"";
      break;
    default:
      tag = "polygon";
      out = "<polygon class=\"" + std::string(css_class) + "\" points=\"" + Px(x) + "," +
            Px(y - 5) + " " + Px(x + 5) + "," + Px(y) + " " + Px(x) + "," + Px(y + 5) + " " +
            Px(x - 5) + "," + Px(y) + "\"";
      break;
  }
  out += " fill=\"" + fill + "\"";
  if (tooltip.empty()) return out + "/>";
  return out + "><title>" + MarkupEscape(tooltip) + "</title></" + tag + ">";
}

// A line's dash: none for the palette's first round, then dashes so that repeated colours differ.
std::string Dash(int series) {
  return series < kPaletteSize ? "" : " stroke-dasharray=\"6 3\"";
}

// The out-of-memory mark: a red cross with a white halo, centred on (x, y).
std::string OomMark(double x, double y, const std::string& tooltip) {
  constexpr double kArm = 5.5;
  const std::string d = "M" + Px(x - kArm) + " " + Px(y - kArm) + "L" + Px(x + kArm) + " " +
                        Px(y + kArm) + "M" + Px(x - kArm) + " " + Px(y + kArm) + "L" +
                        Px(x + kArm) + " " + Px(y - kArm);
  std::string out = "<g class=\"oom\">";
  if (!tooltip.empty()) out += "<title>" + MarkupEscape(tooltip) + "</title>";
  return out + "<path d=\"" + d + "\" stroke=\"#fff\" stroke-width=\"5\" fill=\"none\"/>" +
         "<path d=\"" + d + "\" stroke=\"" + kOomColour +
         "\" stroke-width=\"2.5\" stroke-linecap=\"round\" fill=\"none\"/></g>\n";
}

std::string Text(double x, double y, const char* anchor, const std::string& text,
                 const std::string& extra = "") {
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + MarkupEscape(text) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2, const char* stroke,
                 const std::string& extra = "") {
  return "<line x1=\"" + Px(x1) + "\" y1=\"" + Px(y1) + "\" x2=\"" + Px(x2) + "\" y2=\"" + Px(y2) +
         "\" stroke=\"" + stroke + "\"" + extra + "/>\n";
}

// A legend label, shortened when very long; the full text is its tooltip.
std::string LegendText(double x, double y, const std::string& label) {
  const std::string shown = TruncateText(label, kMaxLabelChars);
  if (shown == label) return Text(x, y, "start", label);
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" text-anchor=\"start\"><title>" +
         MarkupEscape(label) + "</title>" + MarkupEscape(shown) + "</text>\n";
}

constexpr const char* kOomLegend = "OOM (out of memory)";

// The legend's rows: the series the chart shows (when they have labels), then OOM when some shown
// point runs out of memory.
struct Legend {
  std::vector<int> series;
  bool oom = false;
  size_t Rows() const { return series.size() + (oom ? 1 : 0); }
};

Legend MakeLegend(const Plan& plan, const YAxis& y) {
  Legend legend;
  const bool labelled = plan.series_labels.size() > 1 ||
                        (plan.series_labels.size() == 1 && !plan.series_labels[0].empty());
  for (size_t s = 0; labelled && s < plan.series_labels.size(); ++s) {
    if (y.series_shown[s]) legend.series.push_back(static_cast<int>(s));
  }
  legend.oom = y.any_oom;
  return legend;
}

double LegendWidth(const Plan& plan, const Legend& legend) {
  double width = legend.oom ? 28 + TextWidth(kOomLegend) : 0;
  for (int s : legend.series) {
    width = std::max(width, 28 + TextWidth(TruncateText(plan.series_labels[s], kMaxLabelChars)));
  }
  return width;
}

// Where the legend goes: beside the plot when narrow enough, else below everything else.
struct Frame {
  double plot_left = 0;
  double plot_width = 0;
  double below_plot = 0;  // height of the tick labels and x title band
  double width = 0;
  double height = 0;
  double legend_x = 0;
  double legend_y = 0;
};

Frame PlaceFrame(const std::string& title, double y_label_width, double plot_width,
                 double below_plot, double right_overhang, double x_title_width,
                 double legend_width, size_t legend_rows) {
  Frame f;
  f.plot_left = 28 + y_label_width + 8;
  f.plot_width = plot_width;
  f.below_plot = below_plot;
  const double plot_right = f.plot_left + plot_width;
  const double plot_bottom = kPlotTop + kPlotHeight;
  f.width = std::max({plot_right + right_overhang + 12, TextWidth(title, kTitleCharPx) + 24,
                      f.plot_left + plot_width / 2 + x_title_width / 2 + 12});
  f.height = plot_bottom + below_plot + 8;
  if (legend_rows == 0) return f;
  if (legend_width <= kLegendBesideMaxPx) {
    f.legend_x = std::max(plot_right + 24, plot_right + right_overhang + 12);
    f.legend_y = kPlotTop;
    f.width = std::max(f.width, f.legend_x + legend_width + 12);
    f.height = std::max(f.height, f.legend_y + legend_rows * kLegendRowPx + 8);
  } else {
    f.legend_x = f.plot_left;
    f.legend_y = plot_bottom + below_plot + 4;
    f.width = std::max(f.width, f.legend_x + legend_width + 12);
    f.height = f.legend_y + legend_rows * kLegendRowPx + 8;
  }
  return f;
}

std::string SvgOpen(const Frame& f, const ChartSpec& chart, const char* kind) {
  return "<svg class=\"chart " + std::string(kind) + "\" data-metric=\"" +
         std::string(kResultColumns[chart.column].name) + "\" width=\"" + Px(f.width) +
         "\" height=\"" + Px(f.height) + "\" viewBox=\"0 0 " + Px(f.width) + " " + Px(f.height) +
         "\" role=\"img\" aria-label=\"" + MarkupEscape(chart.title) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n" +
         Text(12, 22, "start", chart.title, " font-size=\"14\" font-weight=\"bold\"");
}

// The y grid, tick labels and title, and the plot's frame.
std::string YAxisMarkup(const Frame& f, const Ticks& y, const std::string& title) {
  std::string out;
  const double bottom = kPlotTop + kPlotHeight;
  for (int i = 0; i < y.count; ++i) {
    const double py = bottom - (y.At(i) - y.Lo()) / (y.Hi() - y.Lo()) * kPlotHeight;
    out += Line(f.plot_left, py, f.plot_left + f.plot_width, py, "#e6e6e6");
    out += Text(f.plot_left - 6, py + 4, "end", y.Label(i));
  }
  const double middle = kPlotTop + kPlotHeight / 2;
  out += Text(16, middle, "middle", title, " transform=\"rotate(-90 16 " + Px(middle) + ")\"");
  out += "<rect x=\"" + Px(f.plot_left) + "\" y=\"" + Px(kPlotTop) + "\" width=\"" +
         Px(f.plot_width) + "\" height=\"" + Px(kPlotHeight) +
         "\" fill=\"none\" stroke=\"#888\"/>\n";
  return out;
}

// Ticks covering 0, the values and the capacities.
Ticks MakeYTicks(const YAxis& y) {
  double lo = 0;
  double hi = 0;
  for (double v : y.values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  for (double c : y.capacities) hi = std::max(hi, c);
  return NiceTicks(lo, hi, kMaxTicks);
}

// Each capacity as a dashed line across the plot, labelled above its right end; labels that would
// overlap the one above move down.
std::string CapacityMarkup(const Frame& f, const YAxis& y, const std::function<double(double)>& py) {
  std::string out;
  double last_label_y = -1e9;
  for (size_t c = 0; c < y.capacities.size(); ++c) {
    const double line_y = py(y.capacities[c]);
    out += Line(f.plot_left, line_y, f.plot_left + f.plot_width, line_y, kOomColour,
                " class=\"capacity\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
    const double label_y = std::max(line_y - 5, last_label_y + 14);
    out += Text(f.plot_left + f.plot_width - 4, label_y, "end", y.capacity_labels[c],
                " class=\"capacity-label\" fill=\"" + std::string(kOomColour) + "\"");
    last_label_y = label_y;
  }
  return out;
}

// The legend's rows; `swatch(series, x, y)` draws a series' sample centred at (x + 10, y).
std::string LegendMarkup(const Frame& f, const Plan& plan, const Legend& legend,
                         const std::function<std::string(int, double, double)>& swatch,
                         const std::string& oom_swatch_extra) {
  std::string out;
  size_t row = 0;
  for (int s : legend.series) {
    const double ly = f.legend_y + row++ * kLegendRowPx + 9;
    out += "<g class=\"legend-entry\">" + swatch(s, f.legend_x, ly);
    out += LegendText(f.legend_x + 28, ly + 4, plan.series_labels[s]);
    out += "</g>\n";
  }
  if (legend.oom) {
    const double ly = f.legend_y + row * kLegendRowPx + 9;
    out += "<g class=\"legend-entry oom-entry\">" + oom_swatch_extra +
           OomMark(f.legend_x + 10, ly, "");
    out += Text(f.legend_x + 28, ly + 4, "start", kOomLegend);
    out += "</g>\n";
  }
  return out;
}

}  // namespace

std::string LineChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                      const ChartSpec& chart) {
  const YAxis y = MakeYAxis(results, plan, chart);
  const Ticks y_ticks = MakeYTicks(y);
  const Axis& x_axis = axes[plan.x_axis];
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -x_lo;
  bool whole = true;
  for (size_t i : y.shown) {
    const double x = plan.points[i].x;
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    whole = whole && x == std::floor(x);
  }
  const Ticks x_ticks = FittingXTicks(x_lo, x_hi, kLinePlotWidth, whole);
  const std::string x_title = AxisTitle(x_axis);
  const Legend legend = MakeLegend(plan, y);
  const Frame f = PlaceFrame(chart.title, MaxLabelWidth(y_ticks), kLinePlotWidth, 44,
                             MaxLabelWidth(x_ticks) / 2, TextWidth(x_title),
                             LegendWidth(plan, legend), legend.Rows());
  const double bottom = kPlotTop + kPlotHeight;
  auto px = [&](double x) {
    return f.plot_left + (x - x_ticks.Lo()) / (x_ticks.Hi() - x_ticks.Lo()) * f.plot_width;
  };
  auto py = [&](double v) {
    return bottom - (v - y_ticks.Lo()) / (y_ticks.Hi() - y_ticks.Lo()) * kPlotHeight;
  };

  std::string out = SvgOpen(f, chart, "lines");
  out += YAxisMarkup(f, y_ticks, y.title);
  for (int i = 0; i < x_ticks.count; ++i) {
    const double x = px(x_ticks.At(i));
    out += Line(x, bottom, x, bottom + 4, "#888");
    out += Text(x, bottom + 17, "middle", x_ticks.Label(i));
  }
  out += Text(f.plot_left + f.plot_width / 2, bottom + 37, "middle", x_title);
  out += CapacityMarkup(f, y, py);

  // Each series' line and markers, then the OOM marks over everything.
  std::string oom_marks;
  for (size_t begin = 0; begin < y.shown.size();) {
    const int series = plan.points[y.shown[begin]].series;
    size_t end = begin;
    while (end < y.shown.size() && plan.points[y.shown[end]].series == series) ++end;
    std::string coordinates;
    for (size_t i = begin; i < end; ++i) {
      coordinates += (i == begin ? "" : " ") + Px(px(plan.points[y.shown[i]].x)) + "," +
                     Px(py(y.values[i]));
    }
    out += "<g class=\"series\" data-series=\"" + MarkupEscape(plan.series_labels[series]) + "\">\n";
    out += "<polyline class=\"line\" points=\"" + coordinates + "\" fill=\"none\" stroke=\"" +
           Colour(series) + "\" stroke-width=\"2\"" + Dash(series) + "/>\n";
    for (size_t i = begin; i < end; ++i) {
      const PlotPoint& p = plan.points[y.shown[i]];
      const std::string tooltip = PointName(results, axes, results.rows[p.row]) + ": " + y.labels[i];
      out += Marker(series, px(p.x), py(y.values[i]), "marker", tooltip) + "\n";
      if (y.oom[i]) oom_marks += OomMark(px(p.x), py(y.values[i]), tooltip);
    }
    out += "</g>\n";
    begin = end;
  }
  out += oom_marks;

  out += LegendMarkup(
      f, plan, legend,
      [](int s, double x, double ly) {
        return Line(x, ly, x + 20, ly, Colour(s), " stroke-width=\"2\"" + Dash(s)) +
               Marker(s, x + 10, ly, "swatch", "");
      },
      "");
  return out + "</svg>\n";
}

std::string BarChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                     const ChartSpec& chart) {
  constexpr double kBarWidth = 16;
  constexpr double kBarGap = 2;
  constexpr double kGroupGap = 14;
  const YAxis y = MakeYAxis(results, plan, chart);
  const Ticks y_ticks = MakeYTicks(y);

  // Bars per group, and the x extent of each group.
  std::vector<int> bars_in_group(plan.group_labels.size(), 0);
  for (size_t i : y.shown) ++bars_in_group[plan.points[i].group];
  std::vector<double> group_left;
  double x = kGroupGap;
  for (int count : bars_in_group) {
    group_left.push_back(x);
    if (count > 0) x += count * (kBarWidth + kBarGap) - kBarGap + kGroupGap;
  }
  const double plot_width = std::max(240.0, x);

  // Labels horizontal when every one fits its group, else vertical.
  bool horizontal = true;
  double longest = 0;
  std::vector<std::string> shown;
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    shown.push_back(TruncateText(plan.group_labels[g], kMaxBarLabelChars));
    if (bars_in_group[g] == 0) continue;
    const double w = TextWidth(shown.back());
    longest = std::max(longest, w);
    const double room = bars_in_group[g] * (kBarWidth + kBarGap) - kBarGap + kGroupGap - 4;
    horizontal = horizontal && w <= room;
  }
  const double label_band = horizontal ? 22 : longest + 14;
  const std::string x_title = plan.group_axis >= 0 ? AxisTitle(axes[plan.group_axis]) : "point";
  const Legend legend = MakeLegend(plan, y);
  const Frame f = PlaceFrame(chart.title, MaxLabelWidth(y_ticks), plot_width, label_band + 22, 0,
                             TextWidth(x_title), LegendWidth(plan, legend), legend.Rows());
  const double bottom = kPlotTop + kPlotHeight;
  auto py = [&](double v) {
    return bottom - (v - y_ticks.Lo()) / (y_ticks.Hi() - y_ticks.Lo()) * kPlotHeight;
  };
  // The hatch of an OOM bar; one id per chart, since a page holds several.
  const std::string hatch = "oom-hatch-" + std::string(kResultColumns[chart.column].name);

  std::string out = SvgOpen(f, chart, "bars");
  if (y.any_oom) {
    out += "<defs><pattern id=\"" + hatch +
           "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff\" "
           "fill-opacity=\"0.35\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"" +
           std::string(kOomColour) + "\" stroke-width=\"3\"/></pattern></defs>\n";
  }
  out += YAxisMarkup(f, y_ticks, y.title);
  std::vector<int> placed(plan.group_labels.size(), 0);
  const double zero = py(0);
  std::string oom_marks;
  for (size_t i = 0; i < y.shown.size(); ++i) {
    const PlotPoint& p = plan.points[y.shown[i]];
    const double left =
        f.plot_left + group_left[p.group] + placed[p.group]++ * (kBarWidth + kBarGap);
    const double top = std::min(zero, py(y.values[i]));
    const double height = std::fabs(py(y.values[i]) - zero);
    const std::string tooltip =
        PointName(results, axes, results.rows[p.row]) + ": " + y.labels[i];
    const std::string box = "x=\"" + Px(left) + "\" y=\"" + Px(top) + "\" width=\"" +
                            Px(kBarWidth) + "\" height=\"" + Px(height) + "\"";
    out += "<rect class=\"bar\" data-series=\"" + MarkupEscape(plan.series_labels[p.series]) +
           "\" " + box + " fill=\"" + Colour(p.series) + "\"><title>" + MarkupEscape(tooltip) +
           "</title></rect>\n";
    if (y.oom[i]) {
      oom_marks += "<rect class=\"oom-bar\" " + box + " fill=\"url(#" + hatch + ")\" stroke=\"" +
                   kOomColour + "\" stroke-width=\"1.5\"><title>" + MarkupEscape(tooltip) +
                   "</title></rect>\n";
      oom_marks += OomMark(left + kBarWidth / 2, py(y.values[i]), tooltip);
    }
  }
  out += oom_marks;
  out += CapacityMarkup(f, y, py);
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    if (bars_in_group[g] == 0) continue;
    const double width = bars_in_group[g] * (kBarWidth + kBarGap) - kBarGap;
    const double centre = f.plot_left + group_left[g] + width / 2;
    const std::string tooltip = shown[g] == plan.group_labels[g]
                                    ? ""
                                    : "<title>" + MarkupEscape(plan.group_labels[g]) + "</title>";
    if (horizontal) {
      out += "<text x=\"" + Px(centre) + "\" y=\"" + Px(bottom + 17) +
             "\" text-anchor=\"middle\">" + tooltip + MarkupEscape(shown[g]) + "</text>\n";
    } else {
      const double ax = centre + 4;
      const double ay = bottom + 8;
      out += "<text x=\"" + Px(ax) + "\" y=\"" + Px(ay) +
             "\" text-anchor=\"end\" transform=\"rotate(-90 " + Px(ax) + " " + Px(ay) + ")\">" +
             tooltip + MarkupEscape(shown[g]) + "</text>\n";
    }
  }
  out += Text(f.plot_left + f.plot_width / 2, bottom + label_band + 15, "middle", x_title);

  out += LegendMarkup(
      f, plan, legend,
      [](int s, double x, double ly) {
        return "<rect class=\"swatch\" x=\"" + Px(x + 4) + "\" y=\"" + Px(ly - 6) +
               "\" width=\"12\" height=\"12\" fill=\"" + Colour(s) + "\"/>";
      },
      "<rect class=\"swatch\" x=\"" + Px(f.legend_x + 4) + "\" y=\"" +
          Px(f.legend_y + legend.series.size() * kLegendRowPx + 3) +
          "\" width=\"12\" height=\"12\" fill=\"url(#" + hatch + ")\" stroke=\"" + kOomColour +
          "\"/>");
  return out + "</svg>\n";
}

}  // namespace ppsim
