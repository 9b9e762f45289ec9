#include "base/names.h"

#include "base/escape.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ppsim {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// A name's ASCII letters (lower case) and digits, in order.
std::string Key(std::string_view name) {
  std::string key;
  for (char c : name) {
    const char l = Lower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) key += l;
  }
  return key;
}

std::string Sorted(std::string text) {
  std::sort(text.begin(), text.end());
  return text;
}

}  // namespace

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diagonal + (Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string ClosestName(std::string_view given, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(1, given.size() / 3);
  std::string best;
  std::pair<size_t, size_t> best_distance = {limit + 1, 0};
  const std::string given_key = Key(given);
  for (const std::string& candidate : candidates) {
    // Spelling, or the same letters and digits without the punctuation, or in another order
    // ("zb_v" for ZB-V, "1f1b-interleaved" for Interleaved1F1B); the spelling as written breaks
    // ties ("ffnHiden" is ffnHidden before ffn_hidden).
    const std::string key = Key(candidate);
    const size_t written = EditDistance(given, candidate);
    size_t distance = std::min(written, EditDistance(given_key, key));
    if (!key.empty() && Sorted(key) == Sorted(given_key)) distance = 0;
    if (std::pair{distance, written} < best_distance) {
      best_distance = {distance, written};
      best = candidate;
    }
  }
  return best;
}

std::string UnknownName(std::string_view kind, std::string_view given,
                        const std::vector<std::string>& valid, std::string_view also) {
  const std::string best = ClosestName(given, valid);
  return "unknown " + std::string(kind) + " '" + Printable(given) + "'; valid: " +
         JoinNames(valid) + (also.empty() ? "" : ", " + std::string(also)) +
         (best.empty() ? "" : " (did you mean " + best + "?)");
}

std::string Plural(int64_t count, std::string_view noun, std::string_view plural) {
  if (count != 1 && !plural.empty()) return std::to_string(count) + " " + std::string(plural);
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

std::vector<std::string> SplitCommas(std::string_view text) { return SplitOn(text, ','); }

std::vector<std::string> SplitOn(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace ppsim
