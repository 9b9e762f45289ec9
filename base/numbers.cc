#include "base/numbers.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace ppsim {

nlohmann::json JsonNumber(double value) {
  if (!std::isfinite(value)) return nullptr;
  // 2^53: every integer below it is a double exactly, so the integer text is the value.
  constexpr double kExactIntegers = 9007199254740992.0;
  if (value == std::trunc(value) && std::fabs(value) < kExactIntegers) {
    return static_cast<int64_t>(value);
  }
  return value;
}

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return JsonNumber(value).dump();
}

bool ParseWhole(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && stop == end;
}

bool ParseFinite(std::string_view text, double* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && stop == end && std::isfinite(*value);
}

}  // namespace ppsim
