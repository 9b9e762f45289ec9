#include "base/escape.h"

#include <nlohmann/json.hpp>

namespace ppsim {

void AppendJsonString(std::string_view s, std::string* out) {
  *out += nlohmann::json(std::string(s)).dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
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

namespace {

constexpr size_t kLongest = 60;

// The first kLongest characters of `text`, control characters escaped; *cut when more follow.
std::string Shown(std::string_view text, bool* cut) {
  std::string out;
  size_t i = 0;
  for (; i < text.size() && out.size() < kLongest; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      const char* hex = "0123456789abcdef";
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) {
    out.push_back(text[i++]);  // Finish a multi-byte character.
  }
  *cut = i < text.size();
  return out;
}

}  // namespace

std::string Printable(std::string_view text) {
  bool cut = false;
  const std::string shown = Shown(text, &cut);
  return cut ? shown + "... (" + std::to_string(text.size()) + " bytes)" : shown;
}

std::string Quoted(std::string_view text) {
  bool cut = false;
  const std::string shown = Shown(text, &cut);
  return cut ? "'" + shown + "...' (" + std::to_string(text.size()) + " bytes)" : "'" + shown + "'";
}

std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ppsim
