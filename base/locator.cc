#include "base/locator.h"

#include <algorithm>

namespace ppsim {

std::string NameFields(std::string_view text, const Locator& names) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find('{', at);
    const size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) break;
    out.append(text.substr(at, open - at));
    out += names.Name(text.substr(open + 1, close - open - 1));
    at = close + 1;
  }
  out.append(text.substr(std::min(at, text.size())));
  return out;
}

}  // namespace ppsim
