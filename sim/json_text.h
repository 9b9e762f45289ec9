// JSON string literals, for every writer of JSON (results, sweeps, Chrome traces).
#ifndef PPSIM_SIM_JSON_TEXT_H_
#define PPSIM_SIM_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace ppsim {

// `s` as a JSON string literal, quotes included: `"` and `\` escaped, control characters as
// \u00XX; other bytes (UTF-8) as they are.
std::string JsonString(std::string_view s);
// Appends JsonString(s) to `out`.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace ppsim

#endif  // PPSIM_SIM_JSON_TEXT_H_
