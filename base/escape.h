// Text made safe for where it goes: JSON string literals, XML/HTML text, and one-line messages.
#ifndef PPSIM_BASE_ESCAPE_H_
#define PPSIM_BASE_ESCAPE_H_

#include <string>
#include <string_view>

namespace ppsim {

// `s` as a JSON string literal, quotes included, escaped by the JSON library (nlohmann::json);
// bytes that are not UTF-8 become U+FFFD.
std::string JsonString(std::string_view s);
// Appends JsonString(s) to `out`.
void AppendJsonString(std::string_view s, std::string* out);

// `s` for XML or HTML text and quoted attribute values: & < > " ' as entities, the control
// characters XML 1.0 forbids (all below 0x20 but tab, line feed and carriage return) as spaces;
// other bytes (UTF-8) as they are.
std::string MarkupEscape(std::string_view s);

// `text` as it can appear inside a one-line message: control characters escaped (\n, \t, \r,
// \xHH), and cut after 60 characters: "aaaa... (1048576 bytes)".
std::string Printable(std::string_view text);
// One line: line breaks in a message become "; ".
std::string OneLine(std::string_view text);
// The same in single quotes: 'text', or 'aaaa...' (1048576 bytes).
std::string Quoted(std::string_view text);

}  // namespace ppsim

#endif  // PPSIM_BASE_ESCAPE_H_
