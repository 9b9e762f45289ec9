// JSON text as ppsim writes it. Documents are built as nlohmann::ordered_json values (the JSON
// library escapes strings and prints numbers), and laid out here in one of two forms:
//   compact: one line, ", " between items and ": " after keys — {"rank": 0, "busy_s": 24}
//   pretty:  an object with one member per line (two spaces of indent); a member whose value is a
//            non-empty array of objects or of arrays has one element per line (four spaces), each
//            element compact; every other value compact.
// Both are valid JSON whatever the values hold: the layout only walks the value.
#ifndef PPSIM_BASE_JSON_H_
#define PPSIM_BASE_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ppsim {

std::string FormatJsonCompact(const nlohmann::ordered_json& value);

// Pretty form of an object (any other value is compact). No final line break.
std::string FormatJsonPretty(const nlohmann::ordered_json& value);

// The deepest nesting of arrays and objects in JSON `text`, counted outside strings: readers
// refuse a document deeper than they allow before parsing it (nlohmann's values are freed
// recursively).
int JsonNestingDepth(std::string_view text);

// What a nlohmann exception says, without its "[json.exception.NAME.ID] " tag.
std::string JsonExceptionText(const nlohmann::json::exception& e);

}  // namespace ppsim

#endif  // PPSIM_BASE_JSON_H_
