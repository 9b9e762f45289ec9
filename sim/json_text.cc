#include "sim/json_text.h"

#include <cstdio>

namespace ppsim {

void AppendJsonString(std::string_view s, std::string* out) {
  *out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      *out += buffer;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

}  // namespace ppsim
