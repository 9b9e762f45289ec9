// Matching names the way users type them: case-insensitive lookup, the distance behind "did you
// mean" suggestions, and the one message for a name that is not known.
#ifndef PPSIM_BASE_NAMES_H_
#define PPSIM_BASE_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

// ASCII case-insensitive equality.
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

// Levenshtein distance ignoring ASCII case ("swiglu" is 0 from "SWIGLU").
size_t EditDistance(std::string_view a, std::string_view b);

// "a, b, c": the names a message lists as valid.
std::string JoinNames(const std::vector<std::string>& names);

// The candidate closest to `given` when it is within max(1, |given| / 3) edits (first of equals),
// else "": what a "did you mean" names.
std::string ClosestName(std::string_view given, const std::vector<std::string>& candidates);

// "unknown KIND 'GIVEN'; valid: a, b, c (did you mean b?)" — the suggestion only when one is
// close (ClosestName). GIVEN is shown as Printable (base/escape.h) shows it.
std::string UnknownName(std::string_view kind, std::string_view given,
                        const std::vector<std::string>& valid);

}  // namespace ppsim

#endif  // PPSIM_BASE_NAMES_H_
