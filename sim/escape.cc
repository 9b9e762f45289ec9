#include "sim/escape.h"

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

std::string MarkupEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        const bool allowed = static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r';
        out += allowed ? c : ' ';
    }
  }
  return out;
}

}  // namespace ppsim
