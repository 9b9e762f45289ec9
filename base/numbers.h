// Numbers as ppsim writes and reads them in machine formats (JSON, CSV): one format, the JSON
// library's, and one strict parser for each kind of number.
#ifndef PPSIM_BASE_NUMBERS_H_
#define PPSIM_BASE_NUMBERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ppsim {

// `value` as a JSON number: a whole number below 2^53 in magnitude as an integer ("33"), any
// other finite value as the JSON library's shortest round-trip form ("0.0125", "1e-07"); null
// for infinities and NaN, which JSON cannot hold.
nlohmann::json JsonNumber(double value);

// The text of JsonNumber(value) ("33", "0.0125", "1e-07"), which reads back as exactly `value`;
// "inf", "-inf" or "nan" for those.
std::string FormatNumber(double value);

// The whole text is a decimal integer ("-12", "0"); false on anything else or overflow.
bool ParseWhole(std::string_view text, int64_t* value);
// The whole text is a finite decimal number ("1.5", "-2e-3", "7"); false on anything else,
// infinities and overflow included.
bool ParseFinite(std::string_view text, double* value);

}  // namespace ppsim

#endif  // PPSIM_BASE_NUMBERS_H_
