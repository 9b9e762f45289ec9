// Text escaped for the formats ppsim writes: JSON string literals (results, sweeps, Chrome traces)
// and XML/HTML text and attribute values (the sweep report, timeline pictures).
#ifndef PPSIM_SIM_ESCAPE_H_
#define PPSIM_SIM_ESCAPE_H_

#include <string>
#include <string_view>

namespace ppsim {

// `s` as a JSON string literal, quotes included: `"` and `\` escaped, control characters as
// \u00XX; other bytes (UTF-8) as they are.
std::string JsonString(std::string_view s);
// Appends JsonString(s) to `out`.
void AppendJsonString(std::string_view s, std::string* out);

// `s` for XML or HTML text and quoted attribute values: & < > " ' as entities, the control
// characters XML 1.0 forbids (all below 0x20 but tab, line feed and carriage return) as spaces;
// other bytes (UTF-8) as they are.
std::string MarkupEscape(std::string_view s);

}  // namespace ppsim

#endif  // PPSIM_SIM_ESCAPE_H_
