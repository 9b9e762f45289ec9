// Helpers for the SVG that ppsim draws by hand (the timeline picture, the sweep report's charts):
// one number format for coordinates, one estimate of text width, one rule for 1-2-5 ticks and one
// palette, so the two pictures cannot drift apart.
#ifndef PPSIM_BASE_SVG_H_
#define PPSIM_BASE_SVG_H_

#include <functional>
#include <iterator>
#include <string>
#include <string_view>

namespace ppsim {

// `value` with `decimals` decimals, never "-0" (a value that rounds to zero prints as 0).
std::string FormatFixed(double value, int decimals);

// A coordinate: one decimal, so equal pictures give equal bytes.
inline std::string Px(double value) { return FormatFixed(value, 1); }

// The width of `text` in character cells, for layout before a browser has measured anything: a
// character of three or more UTF-8 bytes (arrows, CJK) counts as two cells, since such characters
// tend to be wide; continuation bytes count nothing. Callers multiply by their font's cell width.
double TextCells(std::string_view text);

// At most `max_chars` characters (UTF-8 code points) of `text`, ending in an ellipsis when cut.
std::string TruncateText(const std::string& text, size_t max_chars);

// The first of the steps 1, 2 and 5 x 10^k, for k = first_exponent, first_exponent + 1, ... (60
// decades at most), that `accept(step, k)` accepts; 0 when none is. Tick pickers state their rule
// as `accept` (how many ticks, how far apart) and share this walk.
double NiceStep(int first_exponent, const std::function<bool(double step, int exponent)>& accept);

// Twelve colours that stay distinguishable: Tableau 10, then charcoal and a vivid cyan (far from
// every Tableau hue); series and kinds take them in order. Pictures that can have more series than
// colours must tell the repeats apart another way (the report's charts change marker and dash).
inline constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                           "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                           "#9c755f", "#bab0ac", "#333333", "#17becf"};
inline constexpr int kPaletteSize = 12;
static_assert(std::size(kPalette) == kPaletteSize);

// Palette colour `index` (wrapping around after twelve).
inline const char* PaletteColour(int index) { return kPalette[index % kPaletteSize]; }

// What is out of memory, in every picture and page (with white text: 7.5:1 contrast).
inline constexpr const char* kOomColour = "#c00000";

}  // namespace ppsim

#endif  // PPSIM_BASE_SVG_H_
