// Matching names the way users type them: case-insensitive lookup, the distance behind "did you
// mean" suggestions, and the one message for a name that is not known.
#ifndef PPSIM_BASE_NAMES_H_
#define PPSIM_BASE_NAMES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// ASCII case-insensitive equality.
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

// Levenshtein distance ignoring ASCII case ("swiglu" is 0 from "SWIGLU").
size_t EditDistance(std::string_view a, std::string_view b);

// "1 point", "3 points": the count and the noun, with an s unless the count is 1 (or `plural`
// when given: "2 microbatches").
std::string Plural(int64_t count, std::string_view noun, std::string_view plural = "");

// "a,b,,c" as {"a", "b", "", "c"}; "" as {""}.
std::vector<std::string> SplitCommas(std::string_view text);
// The same with another separator ("a;b").
std::vector<std::string> SplitOn(std::string_view text, char separator);

// "a, b, c": the names a message lists as valid.
std::string JoinNames(const std::vector<std::string>& names);

// The candidate closest to `given` when it is within max(1, |given| / 3) edits (first of equals),
// counting edits of the names as written or of their letters and digits alone, and none when
// those are the same letters and digits in another order ("1f1b-interleaved" and
// "Interleaved1F1B"); else "": what a "did you mean" names.
std::string ClosestName(std::string_view given, const std::vector<std::string>& candidates);

// "unknown KIND 'GIVEN'; valid: a, b, c (did you mean b?)" — the suggestion only when one is
// close (ClosestName). GIVEN is shown as Printable (base/escape.h) shows it. `also` (when not
// empty) ends the list of valid values without being a name itself: "valid: a, b, or a file".
std::string UnknownName(std::string_view kind, std::string_view given,
                        const std::vector<std::string>& valid, std::string_view also = "");

// One table per enum: each value and the name users write for it, in the order messages list them.
template <class Enum>
struct NamedValue {
  std::string_view name;
  Enum value;
};

// The value `text` names in `table` (ASCII case ignored when `ignore_case`), or InvalidInput
// "WHAT: unknown KIND 'TEXT'; valid: a, b (did you mean a?)".
template <class Enum, size_t N>
Status ParseNamed(const NamedValue<Enum> (&table)[N], std::string_view kind, std::string_view what,
                  std::string_view text, Enum* value, bool ignore_case = false) {
  std::vector<std::string> names;
  for (const NamedValue<Enum>& entry : table) {
    if (ignore_case ? EqualsIgnoringCase(entry.name, text) : entry.name == text) {
      *value = entry.value;
      return Status();
    }
    names.emplace_back(entry.name);
  }
  return Status::InvalidInput(std::string(what) + ": " + UnknownName(kind, text, names));
}

// The name of `value` in `table`, or "?" when it has none.
template <class Enum, size_t N>
std::string_view NameOf(const NamedValue<Enum> (&table)[N], Enum value) {
  for (const NamedValue<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

}  // namespace ppsim

#endif  // PPSIM_BASE_NAMES_H_
