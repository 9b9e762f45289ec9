#include "experiments/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "base/escape.h"
#include "base/svg.h"
#include "models/units.h"

namespace ppsim {
namespace {

// Layout, in SVG pixels. Text widths are estimated conservatively per character.
constexpr double kCharPx = 7;       // 12px text
constexpr double kTitleCharPx = 9;  // 14px bold titles
constexpr double kPlotHeight = 300;
constexpr double kLinePlotWidth = 520;
constexpr double kPlotTop = 44;
constexpr double kLegendRowPx = 18;
constexpr double kLegendBesideMaxPx = 320;
constexpr size_t kMaxLabelChars = 80;
constexpr size_t kMaxBarLabelChars = 40;
constexpr int kMaxTicks = 8;

double TextWidth(std::string_view text, double char_px = kCharPx) {
  return TextCells(text) * char_px;
}

std::string Short(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.4g", value);
  return buffer;
}

// Values of one metric, in a display unit.
struct YAxis {
  std::string title;
  double scale = 1;                 // metric units per display unit
  std::vector<double> values;       // per plan point, in display units
  std::vector<std::string> labels;  // per plan point, for tooltips
};

YAxis MakeYAxis(const ResultsTable& results, const Plan& plan, const ChartMetric& chart) {
  YAxis y;
  double largest = 0;
  for (const PlotPoint& p : plan.points) {
    largest = std::max(largest, std::fabs(*results.rows[p.row].values[chart.metric]));
  }
  std::string unit;
  if (chart.metric == kMakespanColumn) {
    const DisplayUnit u = PickUnit(kDurationUnits, largest);
    y.scale = u.scale;
    unit = u.name;
  } else if (chart.metric == kBubbleColumn) {
    y.scale = 0.01;
    unit = "%";
  } else {
    const DisplayUnit u = PickUnit(kSizeUnits, largest);
    y.scale = u.scale;
    unit = u.name;
  }
  y.title = std::string(chart.quantity) + " (" + unit + ")";
  for (const PlotPoint& p : plan.points) {
    const ResultRow& row = results.rows[p.row];
    const double v = *row.values[chart.metric];
    y.values.push_back(v / y.scale);
    if (chart.metric == kMakespanColumn) {
      y.labels.push_back(HumanDuration(v));
    } else if (chart.metric == kBubbleColumn) {
      y.labels.push_back(Short(v * 100) + " %");
    } else {
      y.labels.push_back(HumanBytes(v) + (row.oom ? " (OOM)" : ""));
    }
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

std::string Text(double x, double y, const char* anchor, const std::string& text,
                 const std::string& extra = "") {
  return "<text x=\"" + Px(x) + "\" y=\"" + Px(y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + MarkupEscape(text) + "</text>\n";
}

std::string Line(double x1, double y1, double x2, double y2, const char* stroke,
                 const char* extra = "") {
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

double LegendWidth(const std::vector<std::string>& labels) {
  double width = 0;
  for (const std::string& label : labels) {
    width = std::max(width, 28 + TextWidth(TruncateText(label, kMaxLabelChars)));
  }
  return width;
}

bool HasLegend(const Plan& plan) {
  return plan.series_labels.size() > 1 ||
         (plan.series_labels.size() == 1 && !plan.series_labels[0].empty());
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

std::string SvgOpen(const Frame& f, const ChartMetric& chart, const char* kind) {
  return "<svg class=\"chart " + std::string(kind) + "\" data-metric=\"" +
         std::string(kResultColumns[chart.metric].name) + "\" width=\"" + Px(f.width) + "\" height=\"" +
         Px(f.height) + "\" viewBox=\"0 0 " + Px(f.width) + " " + Px(f.height) +
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

Ticks MakeYTicks(const YAxis& y) {
  double lo = 0;
  double hi = 0;
  for (double v : y.values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return NiceTicks(lo, hi, kMaxTicks);
}

}  // namespace

std::string LineChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                      const ChartMetric& chart) {
  const YAxis y = MakeYAxis(results, plan, chart);
  const Ticks y_ticks = MakeYTicks(y);
  const Axis& x_axis = axes[plan.x_axis];
  double x_lo = std::numeric_limits<double>::infinity();
  double x_hi = -x_lo;
  bool whole = true;
  for (const PlotPoint& p : plan.points) {
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    whole = whole && p.x == std::floor(p.x);
  }
  const Ticks x_ticks = FittingXTicks(x_lo, x_hi, kLinePlotWidth, whole);
  const std::string x_title = AxisTitle(x_axis.name, x_axis.unit);
  const bool legend = HasLegend(plan);
  const Frame f = PlaceFrame(
      chart.title, MaxLabelWidth(y_ticks), kLinePlotWidth, 44, MaxLabelWidth(x_ticks) / 2,
      TextWidth(x_title), LegendWidth(plan.series_labels), legend ? plan.series_labels.size() : 0);
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

  for (size_t begin = 0; begin < plan.points.size();) {
    const int series = plan.points[begin].series;
    size_t end = begin;
    while (end < plan.points.size() && plan.points[end].series == series) ++end;
    std::string coordinates;
    for (size_t i = begin; i < end; ++i) {
      coordinates += (i == begin ? "" : " ") + Px(px(plan.points[i].x)) + "," + Px(py(y.values[i]));
    }
    out += "<g class=\"series\" data-series=\"" + MarkupEscape(plan.series_labels[series]) + "\">\n";
    out += "<polyline class=\"line\" points=\"" + coordinates + "\" fill=\"none\" stroke=\"" +
           Colour(series) + "\" stroke-width=\"2\"/>\n";
    for (size_t i = begin; i < end; ++i) {
      const ResultRow& row = results.rows[plan.points[i].row];
      out += Marker(series, px(plan.points[i].x), py(y.values[i]), "marker",
                    PointName(results, axes, row) + ": " + y.labels[i]) +
             "\n";
    }
    out += "</g>\n";
    begin = end;
  }

  if (legend) {
    for (size_t s = 0; s < plan.series_labels.size(); ++s) {
      const double ly = f.legend_y + s * kLegendRowPx + 9;
      out += "<g class=\"legend-entry\">";
      out += Line(f.legend_x, ly, f.legend_x + 20, ly, Colour(static_cast<int>(s)),
                  " stroke-width=\"2\"");
      out += Marker(static_cast<int>(s), f.legend_x + 10, ly, "swatch", "");
      out += LegendText(f.legend_x + 28, ly + 4, plan.series_labels[s]);
      out += "</g>\n";
    }
  }
  return out + "</svg>\n";
}

std::string BarChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                     const ChartMetric& chart) {
  constexpr double kBarWidth = 16;
  constexpr double kBarGap = 2;
  constexpr double kGroupGap = 14;
  const YAxis y = MakeYAxis(results, plan, chart);
  const Ticks y_ticks = MakeYTicks(y);

  // Bars per group, and the x extent of each group.
  std::vector<int> bars_in_group(plan.group_labels.size(), 0);
  for (const PlotPoint& p : plan.points) ++bars_in_group[p.group];
  std::vector<double> group_left;
  double x = kGroupGap;
  for (int count : bars_in_group) {
    group_left.push_back(x);
    x += count * (kBarWidth + kBarGap) - kBarGap + kGroupGap;
  }
  const double plot_width = std::max(240.0, x);

  // Labels horizontal when every one fits its group, else vertical.
  bool horizontal = true;
  double longest = 0;
  std::vector<std::string> shown;
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    shown.push_back(TruncateText(plan.group_labels[g], kMaxBarLabelChars));
    const double w = TextWidth(shown.back());
    longest = std::max(longest, w);
    const double room = bars_in_group[g] * (kBarWidth + kBarGap) - kBarGap + kGroupGap - 4;
    horizontal = horizontal && w <= room;
  }
  const double label_band = horizontal ? 22 : longest + 14;
  const std::string x_title =
      plan.group_axis >= 0 ? AxisTitle(axes[plan.group_axis].name, "") : "point";
  const bool legend = HasLegend(plan);
  const Frame f = PlaceFrame(chart.title, MaxLabelWidth(y_ticks), plot_width, label_band + 22, 0,
                             TextWidth(x_title), LegendWidth(plan.series_labels),
                             legend ? plan.series_labels.size() : 0);
  const double bottom = kPlotTop + kPlotHeight;
  auto py = [&](double v) {
    return bottom - (v - y_ticks.Lo()) / (y_ticks.Hi() - y_ticks.Lo()) * kPlotHeight;
  };

  std::string out = SvgOpen(f, chart, "bars");
  out += YAxisMarkup(f, y_ticks, y.title);
  std::vector<int> placed(plan.group_labels.size(), 0);
  const double zero = py(0);
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const PlotPoint& p = plan.points[i];
    const double left =
        f.plot_left + group_left[p.group] + placed[p.group]++ * (kBarWidth + kBarGap);
    const double top = std::min(zero, py(y.values[i]));
    const double height = std::fabs(py(y.values[i]) - zero);
    const ResultRow& row = results.rows[p.row];
    out += "<rect class=\"bar\" data-series=\"" + MarkupEscape(plan.series_labels[p.series]) + "\" x=\"" +
           Px(left) + "\" y=\"" + Px(top) + "\" width=\"" + Px(kBarWidth) + "\" height=\"" +
           Px(height) + "\" fill=\"" + Colour(p.series) + "\"><title>" +
           MarkupEscape(PointName(results, axes, row) + ": " + y.labels[i]) + "</title></rect>\n";
  }
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
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

  if (legend) {
    for (size_t s = 0; s < plan.series_labels.size(); ++s) {
      const double ly = f.legend_y + s * kLegendRowPx + 9;
      out += "<g class=\"legend-entry\"><rect class=\"swatch\" x=\"" + Px(f.legend_x + 4) +
             "\" y=\"" + Px(ly - 6) + "\" width=\"12\" height=\"12\" fill=\"" +
             Colour(static_cast<int>(s)) + "\"/>";
      out += LegendText(f.legend_x + 28, ly + 4, plan.series_labels[s]);
      out += "</g>\n";
    }
  }
  return out + "</svg>\n";
}

}  // namespace ppsim
