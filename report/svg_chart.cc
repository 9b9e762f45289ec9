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
#include "report/chart_scale.h"

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
constexpr size_t kMaxEndLabelChars = 24;
// The band above the plot for points out of memory far above everything else.
constexpr double kBandHeight = 28;
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
  std::vector<std::string> values_text;  // per shown point: "472 GiB"
  std::vector<bool> oom;             // per shown point
  bool any_oom = false;
  // Per shown point: drawn in the band above the plot, off the scale (MarkOffScale).
  std::vector<bool> banded;
  bool any_banded = false;
  std::vector<double> capacities;    // distinct capacities > 0, largest first, in display units
  std::vector<std::string> capacity_labels;  // "GPU capacity 80 GiB"
  std::vector<bool> series_shown;    // per series of the plan
};

// A point's value in the chart's metric units: its column's, over the baseline's for a ratio.
double ChartValue(const ChartSpec& chart, const ResultRow& row) {
  const double v = *row.values[chart.column];
  return chart.unit == ChartUnit::kRatio ? v / chart.baseline : v;
}

// Points out of memory that would flatten the memory chart: with capacity lines, an OOM value more
// than twice the largest of the other values and the capacities is drawn in a band above the plot
// instead (when some point fits, so that there is a scale to keep).
void MarkOffScale(const ChartSpec& chart, const std::vector<double>& values, YAxis* y) {
  y->banded.assign(values.size(), false);
  if (!chart.capacity_lines) return;
  double reference = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!y->oom[i]) reference = std::max(reference, values[i]);
  }
  if (reference <= 0) return;
  for (double c : y->capacities) reference = std::max(reference, c);
  for (size_t i = 0; i < values.size(); ++i) {
    y->banded[i] = y->oom[i] && values[i] > 2 * reference;
    y->any_banded = y->any_banded || y->banded[i];
  }
}

// The display unit of the chart's values (largest: the largest absolute value).
std::string PickYUnit(const ChartSpec& chart, double largest, double* scale) {
  switch (chart.unit) {
    case ChartUnit::kRate: {
      const DisplayUnit u = PickUnit(kCountUnits, largest);
      *scale = u.scale;
      return (*u.name ? std::string(u.name) + " " : "") + chart.rate_unit;
    }
    case ChartUnit::kFraction:
      *scale = 0.01;
      return "%";
    case ChartUnit::kBytes: {
      const DisplayUnit u = PickUnit(kSizeUnits, largest);
      *scale = u.scale;
      return u.name;
    }
    case ChartUnit::kRatio:
      *scale = 1;
      return "\u00d7";
  }
  return "";
}

// A value as the tooltip and the band write it: "1.2 M tokens/s", "37.5%", "472 GiB", "1.07x".
std::string ValueText(const ChartSpec& chart, double v) {
  switch (chart.unit) {
    case ChartUnit::kRate:
      return HumanCount(v) + " " + chart.rate_unit;
    case ChartUnit::kFraction:
      return HumanPercent(v);
    case ChartUnit::kBytes:
      return HumanBytes(v);
    case ChartUnit::kRatio:
      return FormatFixed(v, 3) + "\u00d7";
  }
  return "";
}

YAxis MakeYAxis(const ResultsTable& results, const Plan& plan, const ChartSpec& chart) {
  YAxis y;
  y.series_shown.assign(plan.series_labels.size(), false);
  std::vector<double> capacities;
  std::vector<double> raw;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const ResultRow& row = results.rows[plan.points[i].row];
    if (!row.values[chart.column]) continue;
    y.shown.push_back(i);
    y.series_shown[plan.points[i].series] = true;
    raw.push_back(ChartValue(chart, row));
    y.oom.push_back(row.oom);
    y.any_oom = y.any_oom || row.oom;
    const double capacity = row.values[kCapacityColumn].value_or(0);
    if (chart.capacity_lines && capacity > 0) capacities.push_back(capacity);
  }
  std::sort(capacities.begin(), capacities.end(), std::greater<double>());
  capacities.erase(std::unique(capacities.begin(), capacities.end()), capacities.end());
  for (double capacity : capacities) y.capacities.push_back(capacity);
  MarkOffScale(chart, raw, &y);  // capacities still in metric units here: scale is 1
  double largest = capacities.empty() ? 0 : capacities[0];
  for (size_t i = 0; i < raw.size(); ++i) {
    if (!y.banded[i]) largest = std::max(largest, std::fabs(raw[i]));
  }
  y.title = chart.quantity + " (" + PickYUnit(chart, largest, &y.scale) + ")";
  for (size_t k = 0; k < y.shown.size(); ++k) {
    const ResultRow& row = results.rows[plan.points[y.shown[k]].row];
    y.values.push_back(raw[k] / y.scale);
    y.values_text.push_back(ValueText(chart, raw[k]));
    std::string label = y.values_text.back();
    if (chart.unit == ChartUnit::kBytes && row.values[kCapacityColumn].value_or(0) > 0) {
      label += " of " + HumanBytes(*row.values[kCapacityColumn]);
    }
    y.labels.push_back(label + (row.oom ? ", OOM" : ""));
  }
  for (double& capacity : y.capacities) {
    y.capacity_labels.push_back("GPU capacity " + HumanBytes(capacity));
    capacity /= y.scale;
  }
  return y;
}

double MaxLabelWidth(const ChartScale& scale) {
  double width = 0;
  for (const std::string& label : scale.labels) width = std::max(width, TextWidth(label));
  return width;
}

// A linear x scale whose labels leave at least 10px between them; whole steps when `whole`
// (microbatches have no 1.5).
ChartScale FittingXScale(double lo, double hi, double plot_width, bool whole) {
  ChartScale scale;
  for (int max_ticks = kMaxTicks; max_ticks >= 3; --max_ticks) {
    scale = LinearScale(lo, hi, max_ticks, whole ? 1 : 0);
    const double spacing = plot_width / static_cast<double>(scale.ticks.size() - 1);
    if (MaxLabelWidth(scale) + 10 <= spacing) break;
  }
  return scale;
}

// The x scale: log (base 2 for powers of two) when the values span a wide range
// (chart_scale.h ChooseScaleKind), else linear.
ChartScale XScale(const std::vector<double>& xs, double plot_width) {
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  bool whole = true;
  for (double x : xs) whole = whole && x == std::floor(x);
  switch (ChooseScaleKind(xs, whole)) {
    case ScaleKind::kLog2:
      return Log2Scale(*lo, *hi);
    case ScaleKind::kLog10:
      return Log10Scale(*lo, *hi);
    case ScaleKind::kLinear:
      break;
  }
  return FittingXScale(*lo, *hi, plot_width, whole);
}

const char* Colour(int series) { return PaletteColour(series); }

// Series that share a colour or a value must stay apart: each series has a marker shape and a
// dash of its own among its neighbours (the colour's repeats shift both), and series drawn
// earlier (under the later ones) have larger markers and wider lines, so that a series hidden by
// an equal one still shows around it.
int ShapeOf(int series) { return (series + series / kPaletteSize) % 4; }
int DashOf(int series) { return (series + 2 * (series / kPaletteSize)) % 4; }

// How much larger than the top series' a series' marker and line are: 1, 1.4 or 1.8.
double Layer(int series, int series_count) {
  return 1 + 0.4 * ((series_count - 1 - series) % 3);
}

std::string Marker(int series, double size, double x, double y, const char* css_class,
                   const std::string& tooltip) {
  const std::string fill = Colour(series);
  const double r = 3.5 * size;
  std::string tag = "polygon";
  std::string out;
  switch (ShapeOf(series)) {
    case 0:
      tag = "circle";
      out = "<circle class=\"" + std::string(css_class) + "\" cx=\"" + Px(x) + "\" cy=\"" + Px(y) +
            "\" r=\"" + Px(r) + "\"";
      break;
    case 1:
      tag = "rect";
      out = "<rect class=\"" + std::string(css_class) + "\" x=\"" + Px(x - r) + "\" y=\"" +
            Px(y - r) + "\" width=\"" + Px(2 * r) + "\" height=\"" + Px(2 * r) + "\"";
      break;
    case 2:
      out = "<polygon class=\"" + std::string(css_class) + "\" points=\"" + Px(x) + "," +
            Px(y - 1.3 * r) + " " + Px(x + 1.3 * r) + "," + Px(y + r) + " " + Px(x - 1.3 * r) +
            "," + Px(y + r) + "\"";
      break;
    default:
      out = "<polygon class=\"" + std::string(css_class) + "\" points=\"" + Px(x) + "," +
            Px(y - 1.4 * r) + " " + Px(x + 1.4 * r) + "," + Px(y) + " " + Px(x) + "," +
            Px(y + 1.4 * r) + " " + Px(x - 1.4 * r) + "," + Px(y) + "\"";
      break;
  }
  out += " fill=\"" + fill + "\" stroke=\"#fff\" stroke-width=\"0.8\"";
  if (tooltip.empty()) return out + "/>";
  return out + "><title>" + MarkupEscape(tooltip) + "</title></" + tag + ">";
}

// A line's dash and width.
std::string Stroke(int series, double size) {
  static constexpr const char* kDashes[] = {"", "7 3", "2 2", "9 3 2 3"};
  const int dash = DashOf(series);
  std::string out = " stroke-width=\"" + Px(2 * size) + "\"";
  if (dash > 0) out += std::string(" stroke-dasharray=\"") + kDashes[dash] + "\"";
  return out;
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

// Where the legend goes: beside the plot when narrow enough, else below everything else. The
// plot starts lower when the chart has a band for points off its scale.
struct Frame {
  double plot_top = kPlotTop;
  double plot_left = 0;
  double plot_width = 0;
  double below_plot = 0;  // height of the tick labels and x title band
  double width = 0;
  double height = 0;
  double legend_x = 0;
  double legend_y = 0;

  double Bottom() const { return plot_top + kPlotHeight; }
};

struct FrameInput {
  double y_label_width = 0;
  double plot_width = 0;
  double below_plot = 0;
  double right_overhang = 0;
  double x_title_width = 0;
  double legend_width = 0;
  size_t legend_rows = 0;
  bool band = false;  // a band above the plot for points off the scale
};

Frame PlaceFrame(const std::string& title, const FrameInput& in) {
  Frame f;
  if (in.band) f.plot_top += kBandHeight;
  f.plot_left = 28 + in.y_label_width + 8;
  f.plot_width = in.plot_width;
  f.below_plot = in.below_plot;
  const double plot_right = f.plot_left + in.plot_width;
  f.width = std::max({plot_right + in.right_overhang + 12, TextWidth(title, kTitleCharPx) + 24,
                      f.plot_left + in.plot_width / 2 + in.x_title_width / 2 + 12});
  f.height = f.Bottom() + in.below_plot + 8;
  if (in.legend_rows == 0) return f;
  if (in.legend_width <= kLegendBesideMaxPx) {
    f.legend_x = std::max(plot_right + 24, plot_right + in.right_overhang + 12);
    f.legend_y = f.plot_top;
    f.width = std::max(f.width, f.legend_x + in.legend_width + 12);
    f.height = std::max(f.height, f.legend_y + in.legend_rows * kLegendRowPx + 8);
  } else {
    f.legend_x = f.plot_left;
    f.legend_y = f.Bottom() + in.below_plot + 4;
    f.width = std::max(f.width, f.legend_x + in.legend_width + 12);
    f.height = f.legend_y + in.legend_rows * kLegendRowPx + 8;
  }
  return f;
}

std::string ScaleName(const ChartScale& scale) {
  switch (scale.kind) {
    case ScaleKind::kLinear:
      return "linear";
    case ScaleKind::kLog2:
      return "log2";
    case ScaleKind::kLog10:
      return "log10";
  }
  return "";
}

// The middle of the band above the plot.
double BandY(const Frame& f) { return f.plot_top - kBandHeight / 2; }

// The chart's title, with its definition (ChartSpec::definition) as the title's and the chart's
// tooltip.
std::string SvgOpen(const Frame& f, const ChartSpec& chart, const char* kind,
                    const ChartScale& y) {
  std::string out = "<svg class=\"chart " + std::string(kind) + "\" data-metric=\"" +
                    chart.metric + "\" data-y-scale=\"" + ScaleName(y) + "\" width=\"" +
                    Px(f.width) + "\" height=\"" + Px(f.height) + "\" viewBox=\"0 0 " +
                    Px(f.width) + " " + Px(f.height) + "\" role=\"img\" aria-label=\"" +
                    MarkupEscape(chart.title) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  if (!chart.definition.empty()) out += "<title>" + MarkupEscape(chart.definition) + "</title>\n";
  out += "<text class=\"chart-title\" x=\"12\" y=\"22\" text-anchor=\"start\" font-size=\"14\" "
         "font-weight=\"bold\">";
  if (!chart.definition.empty()) out += "<title>" + MarkupEscape(chart.definition) + "</title>";
  return out + MarkupEscape(chart.title) + "</text>\n";
}

// Where value v is on the y scale (off-scale points are drawn in the band, not here).
double PlotY(const Frame& f, const ChartScale& y, double v) {
  return f.Bottom() - y.Fraction(v) * kPlotHeight;
}

// The y grid, tick labels and title, and the plot's frame.
std::string YAxisMarkup(const Frame& f, const ChartScale& y, const std::string& title) {
  std::string out;
  for (size_t i = 0; i < y.ticks.size(); ++i) {
    const double py = PlotY(f, y, y.ticks[i]);
    out += Line(f.plot_left, py, f.plot_left + f.plot_width, py, "#e6e6e6");
    out += Text(f.plot_left - 6, py + 4, "end", y.labels[i], " class=\"y-tick\"");
  }
  const double middle = f.plot_top + kPlotHeight / 2;
  const std::string shown = y.log() ? title + ", log scale" : title;
  out += Text(16, middle, "middle", shown,
              " class=\"y-title\" transform=\"rotate(-90 16 " + Px(middle) + ")\"");
  out += "<rect x=\"" + Px(f.plot_left) + "\" y=\"" + Px(f.plot_top) + "\" width=\"" +
         Px(f.plot_width) + "\" height=\"" + Px(kPlotHeight) +
         "\" fill=\"none\" stroke=\"#888\"/>\n";
  return out;
}

// The y scale over the values on the scale and the capacities: log for rates and sizes spanning
// more than 10x (all positive), else linear from 0 (or below, for negative values).
ChartScale YScale(const YAxis& y, const ChartSpec& chart) {
  std::vector<double> values;
  for (size_t i = 0; i < y.values.size(); ++i) {
    if (!y.banded[i]) values.push_back(y.values[i]);
  }
  for (double c : y.capacities) values.push_back(c);
  if (values.empty()) values.push_back(0);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (chart.unit != ChartUnit::kFraction &&
      ChooseScaleKind(values, false) == ScaleKind::kLog10) {
    return Log10Scale(*lo, *hi);
  }
  return LinearScale(std::min(0.0, *lo), std::max(0.0, *hi), kMaxTicks);
}

// Each capacity as a dashed line across the plot, labelled above its right end; labels that would
// overlap the one above move down.
std::string CapacityMarkup(const Frame& f, const YAxis& y, const ChartScale& scale) {
  std::string out;
  double last_label_y = -1e9;
  for (size_t c = 0; c < y.capacities.size(); ++c) {
    const double line_y = PlotY(f, scale, y.capacities[c]);
    out += Line(f.plot_left, line_y, f.plot_left + f.plot_width, line_y, kOomColour,
                " class=\"capacity\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
    const double label_y = std::max(line_y - 5, last_label_y + 14);
    out += Text(f.plot_left + f.plot_width - 4, label_y, "end", y.capacity_labels[c],
                " class=\"capacity-label\" fill=\"" + std::string(kOomColour) + "\"");
    last_label_y = label_y;
  }
  return out;
}

// The band above the plot for points out of memory far off the scale: a pale red strip named
// "OOM, off scale", each such point drawn in it with its value written beside it.
std::string BandMarkup(const Frame& f) {
  const double top = f.plot_top - kBandHeight + 4;
  return "<rect class=\"oom-band\" x=\"" + Px(f.plot_left) + "\" y=\"" + Px(top) +
         "\" width=\"" + Px(f.plot_width) + "\" height=\"" + Px(kBandHeight - 8) +
         "\" fill=\"#fbe5e5\"/>\n" +
         Text(f.plot_left - 6, BandY(f) + 4, "end", "OOM \u2191",
              " class=\"band-label\" fill=\"" + std::string(kOomColour) + "\"");
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

// The short label written at the end of each line: its series' axis values.
std::string EndLabel(const Plan& plan, int series) {
  return TruncateText(plan.series_values[series], kMaxEndLabelChars);
}

// The y of each end label (by series), moved apart so that none overlaps another and all stay
// within the plot: sorted by the lines' last y, each at least a line below the one above.
std::vector<double> PlaceEndLabels(const Frame& f, std::vector<std::pair<double, int>> ends,
                                   size_t series_count) {
  std::sort(ends.begin(), ends.end());
  constexpr double kPitch = 14;
  const double first = f.plot_top + 12;
  const double last = f.Bottom() - 4;
  std::vector<double> placed(ends.size());
  for (size_t i = 0; i < ends.size(); ++i) {
    placed[i] = std::max(ends[i].first + 4, i == 0 ? first : placed[i - 1] + kPitch);
  }
  for (size_t i = ends.size(); i-- > 0;) {
    const double limit = i + 1 == ends.size() ? last : placed[i + 1] - kPitch;
    placed[i] = std::min(placed[i], limit);
  }
  std::vector<double> by_series(series_count, 0);
  for (size_t i = 0; i < ends.size(); ++i) by_series[ends[i].second] = placed[i];
  return by_series;
}

}  // namespace

std::string LineChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                      const ChartSpec& chart) {
  const YAxis y = MakeYAxis(results, plan, chart);
  const ChartScale y_scale = YScale(y, chart);
  std::vector<double> xs;
  for (size_t i : y.shown) xs.push_back(plan.points[i].x);
  const ChartScale x_scale = XScale(xs, kLinePlotWidth);
  const std::string x_title = AxisTitle(axes[plan.x_axis]) + (x_scale.log() ? ", log scale" : "");
  const Legend legend = MakeLegend(plan, y);
  double end_labels = 0;
  for (int s : legend.series) end_labels = std::max(end_labels, TextWidth(EndLabel(plan, s)));
  FrameInput in;
  in.y_label_width = MaxLabelWidth(y_scale);
  in.plot_width = kLinePlotWidth;
  in.below_plot = 46;
  in.right_overhang = std::max(MaxLabelWidth(x_scale) / 2, end_labels > 0 ? end_labels + 10 : 0);
  in.x_title_width = TextWidth(x_title);
  in.legend_width = LegendWidth(plan, legend);
  in.legend_rows = legend.Rows();
  in.band = y.any_banded;
  const Frame f = PlaceFrame(chart.title, in);
  const double bottom = f.Bottom();
  auto px = [&](double x) { return f.plot_left + x_scale.Fraction(x) * f.plot_width; };
  auto py = [&](size_t i) { return y.banded[i] ? BandY(f) : PlotY(f, y_scale, y.values[i]); };

  std::string out = SvgOpen(f, chart, "lines", y_scale);
  out += YAxisMarkup(f, y_scale, y.title);
  if (y.any_banded) out += BandMarkup(f);
  for (size_t i = 0; i < x_scale.ticks.size(); ++i) {
    const double x = px(x_scale.ticks[i]);
    out += Line(x, bottom, x, bottom + 4, "#888");
    // Low enough to clear the y axis's bottom label where both stand at the plot's corner.
    out += Text(x, bottom + 20, "middle", x_scale.labels[i], " class=\"x-tick\"");
  }
  out += "<g class=\"x-axis\" data-scale=\"" + ScaleName(x_scale) + "\">" +
         Text(f.plot_left + f.plot_width / 2, bottom + 39, "middle", x_title) + "</g>\n";
  out += CapacityMarkup(f, y, y_scale);

  // Each series' line and markers, then the OOM marks, the off-scale values and the end labels
  // over everything.
  const int series_count = static_cast<int>(plan.series_labels.size());
  std::string oom_marks;
  std::string band_values;
  std::vector<double> band_value_xs;
  std::vector<std::pair<double, int>> ends;
  for (size_t begin = 0; begin < y.shown.size();) {
    const int series = plan.points[y.shown[begin]].series;
    const double size = Layer(series, series_count);
    size_t end = begin;
    while (end < y.shown.size() && plan.points[y.shown[end]].series == series) ++end;
    std::string coordinates;
    for (size_t i = begin; i < end; ++i) {
      coordinates += (i == begin ? "" : " ") + Px(px(plan.points[y.shown[i]].x)) + "," + Px(py(i));
    }
    out += "<g class=\"series\" data-series=\"" + MarkupEscape(plan.series_labels[series]) + "\">\n";
    out += "<polyline class=\"line\" points=\"" + coordinates + "\" fill=\"none\" stroke=\"" +
           Colour(series) + "\"" + Stroke(series, size) + "/>\n";
    for (size_t i = begin; i < end; ++i) {
      const PlotPoint& p = plan.points[y.shown[i]];
      const std::string tooltip = PointName(results, axes, results.rows[p.row]) + ": " + y.labels[i];
      out += Marker(series, size, px(p.x), py(i), "marker", tooltip) + "\n";
      if (y.oom[i]) oom_marks += OomMark(px(p.x), py(i), tooltip);
      const bool written = std::find(band_value_xs.begin(), band_value_xs.end(), px(p.x)) !=
                           band_value_xs.end();
      if (y.banded[i] && !written) {
        band_values += Text(px(p.x) + 9, BandY(f) + 4, "start", y.values_text[i],
                            " class=\"band-value\" fill=\"" + std::string(kOomColour) + "\"");
        band_value_xs.push_back(px(p.x));
      }
    }
    out += "</g>\n";
    if (!plan.series_values[series].empty() && !y.banded[end - 1]) {
      ends.push_back({py(end - 1), series});
    }
    begin = end;
  }
  out += oom_marks + band_values;
  if (legend.series.size() > 1) {
    const std::vector<double> label_y = PlaceEndLabels(f, ends, plan.series_labels.size());
    for (const auto& [line_y, s] : ends) {
      out += Text(f.plot_left + f.plot_width + 8, label_y[s], "start", EndLabel(plan, s),
                  " class=\"end-label\" fill=\"" + std::string(Colour(s)) + "\"");
    }
  }

  out += LegendMarkup(
      f, plan, legend,
      [&](int s, double x, double ly) {
        return Line(x, ly, x + 20, ly, Colour(s), Stroke(s, 1)) +
               Marker(s, 1, x + 10, ly, "swatch", "");
      },
      "");
  return out + "</svg>\n";
}

// Bars in groups: each group a slot of equal width across the plot, its bars centred in it.
struct BarLayout {
  double plot_width = 0;
  double bar_width = 0;
  std::vector<int> bars_in_group;
  std::vector<double> group_centre;  // from the plot's left
};

BarLayout LayOutBars(const Plan& plan, const YAxis& y) {
  constexpr double kBarGap = 2;
  constexpr double kGroupGap = 14;
  constexpr double kMinPlotWidth = 360;
  constexpr double kMaxBarWidth = 36;
  BarLayout b;
  b.bars_in_group.assign(plan.group_labels.size(), 0);
  for (size_t i : y.shown) ++b.bars_in_group[plan.points[i].group];
  int most = 1;
  size_t groups = 0;
  for (int count : b.bars_in_group) {
    most = std::max(most, count);
    if (count > 0) ++groups;
  }
  groups = std::max<size_t>(groups, 1);
  // Narrow bars (16 px) when they fill the minimum width, else wider ones up to kMaxBarWidth.
  const double natural = static_cast<double>(groups) * (most * (16 + kBarGap) - kBarGap + kGroupGap);
  b.plot_width = std::max(kMinPlotWidth, natural + kGroupGap);
  const double slot = b.plot_width / static_cast<double>(groups);
  b.bar_width = std::clamp((slot - kGroupGap) / most - kBarGap, 16.0, kMaxBarWidth);
  double at = slot / 2;
  for (int count : b.bars_in_group) {
    b.group_centre.push_back(at);
    if (count > 0) at += slot;
  }
  return b;
}

std::string BarChart(const ResultsTable& results, const std::vector<Axis>& axes, const Plan& plan,
                     const ChartSpec& chart) {
  constexpr double kBarGap = 2;
  const YAxis y = MakeYAxis(results, plan, chart);
  const ChartScale y_scale = YScale(y, chart);
  const BarLayout bars = LayOutBars(plan, y);
  const double slot_room = bars.plot_width / std::max<double>(1, bars.group_centre.size()) - 4;

  // Labels horizontal when every one fits its group's slot, else vertical.
  bool horizontal = true;
  double longest = 0;
  std::vector<std::string> shown;
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    shown.push_back(TruncateText(plan.group_labels[g], kMaxBarLabelChars));
    if (bars.bars_in_group[g] == 0) continue;
    const double w = TextWidth(shown.back());
    longest = std::max(longest, w);
    horizontal = horizontal && w <= slot_room;
  }
  const double label_band = horizontal ? 22 : longest + 14;
  const std::string x_title = plan.group_axis >= 0 ? AxisTitle(axes[plan.group_axis]) : "point";
  const Legend legend = MakeLegend(plan, y);
  FrameInput in;
  in.y_label_width = MaxLabelWidth(y_scale);
  in.plot_width = bars.plot_width;
  in.below_plot = label_band + 22;
  in.x_title_width = TextWidth(x_title);
  in.legend_width = LegendWidth(plan, legend);
  in.legend_rows = legend.Rows();
  in.band = y.any_banded;
  const Frame f = PlaceFrame(chart.title, in);
  const double bottom = f.Bottom();
  auto py = [&](size_t i) { return y.banded[i] ? BandY(f) : PlotY(f, y_scale, y.values[i]); };
  // The hatch of an OOM bar; one id per chart, since a page holds several.
  const std::string hatch = "oom-hatch-" + chart.metric;

  std::string out = SvgOpen(f, chart, "bars", y_scale);
  if (y.any_oom) {
    out += "<defs><pattern id=\"" + hatch +
           "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff\" "
           "fill-opacity=\"0.35\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"" +
           std::string(kOomColour) + "\" stroke-width=\"3\"/></pattern></defs>\n";
  }
  out += YAxisMarkup(f, y_scale, y.title);
  if (y.any_banded) out += BandMarkup(f);
  std::vector<int> placed(plan.group_labels.size(), 0);
  // Bars rise from 0 on a linear scale, from the bottom on a log one.
  const double base = y_scale.log() ? bottom : PlotY(f, y_scale, 0);
  std::string oom_marks;
  double band_text_end = -1e9;
  for (size_t i = 0; i < y.shown.size(); ++i) {
    const PlotPoint& p = plan.points[y.shown[i]];
    const double width = bars.bars_in_group[p.group] * (bars.bar_width + kBarGap) - kBarGap;
    const double left = f.plot_left + bars.group_centre[p.group] - width / 2 +
                        placed[p.group]++ * (bars.bar_width + kBarGap);
    const double top = std::min(base, py(i));
    const double height = std::fabs(py(i) - base);
    const std::string tooltip =
        PointName(results, axes, results.rows[p.row]) + ": " + y.labels[i];
    const std::string box = "x=\"" + Px(left) + "\" y=\"" + Px(top) + "\" width=\"" +
                            Px(bars.bar_width) + "\" height=\"" + Px(height) + "\"";
    out += "<rect class=\"bar\" data-series=\"" + MarkupEscape(plan.series_labels[p.series]) +
           "\" " + box + " fill=\"" + Colour(p.series) + "\"><title>" + MarkupEscape(tooltip) +
           "</title></rect>\n";
    if (y.banded[i] && left + bars.bar_width / 2 + 9 >= band_text_end + 4) {
      oom_marks += Text(left + bars.bar_width / 2 + 9, BandY(f) + 4, "start", y.values_text[i],
                        " class=\"band-value\" fill=\"" + std::string(kOomColour) + "\"");
      band_text_end = left + bars.bar_width / 2 + 9 + TextWidth(y.values_text[i]);
    }
    if (y.oom[i]) {
      oom_marks += "<rect class=\"oom-bar\" " + box + " fill=\"url(#" + hatch + ")\" stroke=\"" +
                   kOomColour + "\" stroke-width=\"1.5\"><title>" + MarkupEscape(tooltip) +
                   "</title></rect>\n";
      oom_marks += OomMark(left + bars.bar_width / 2, py(i), tooltip);
    }
  }
  out += oom_marks;
  out += CapacityMarkup(f, y, y_scale);
  for (size_t g = 0; g < plan.group_labels.size(); ++g) {
    if (bars.bars_in_group[g] == 0) continue;
    const double centre = f.plot_left + bars.group_centre[g];
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
