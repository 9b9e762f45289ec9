#include "base/svg.h"

#include <cmath>
#include <cstdio>

namespace ppsim {

std::string FormatFixed(double value, int decimals) {
  if (std::fabs(value) < 0.5 * std::pow(10.0, -decimals)) value = 0;  // never "-0"
  char buffer[400];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

double TextCells(std::string_view text) {
  double cells = 0;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u & 0xC0) == 0x80) continue;  // a continuation byte
    cells += u >= 0xE0 ? 2 : 1;
  }
  return cells;
}

std::string TruncateText(const std::string& text, size_t max_chars) {
  auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (continuation(text[i])) continue;
    if (chars == max_chars - 1) {
      size_t rest = 0;
      for (size_t j = i; j < text.size(); ++j) rest += continuation(text[j]) ? 0 : 1;
      if (rest > 1) return text.substr(0, i) + "\u2026";
      return text;
    }
    ++chars;
  }
  return text;
}

double NiceStep(int first_exponent, const std::function<bool(double step, int exponent)>& accept) {
  for (int exponent = first_exponent; exponent < first_exponent + 60; ++exponent) {
    for (int mantissa : {1, 2, 5}) {
      const double step = mantissa * std::pow(10.0, exponent);
      if (accept(step, exponent)) return step;
    }
  }
  return 0;
}

}  // namespace ppsim
