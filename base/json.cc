#include "base/json.h"

#include <algorithm>

namespace ppsim {
namespace {

using Json = nlohmann::ordered_json;

// The library's text of a scalar; strings with bytes that are not UTF-8 get U+FFFD.
std::string Scalar(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void AppendCompact(const Json& value, std::string* out) {
  if (value.is_object()) {
    *out += '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first) *out += ", ";
      first = false;
      *out += Scalar(Json(it.key())) + ": ";
      AppendCompact(it.value(), out);
    }
    *out += '}';
  } else if (value.is_array()) {
    *out += '[';
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) *out += ", ";
      AppendCompact(value[i], out);
    }
    *out += ']';
  } else {
    *out += Scalar(value);
  }
}

// A non-empty array whose elements are all objects or all arrays: laid out one per line.
bool ExpandsByElement(const Json& value) {
  if (!value.is_array() || value.empty()) return false;
  const bool objects = value[0].is_object();
  const bool arrays = value[0].is_array();
  for (const Json& element : value) {
    if ((objects && !element.is_object()) || (arrays && !element.is_array()) ||
        (!objects && !arrays)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string FormatJsonCompact(const Json& value) {
  std::string out;
  AppendCompact(value, &out);
  return out;
}

std::string FormatJsonPretty(const Json& value) {
  if (!value.is_object() || value.empty()) return FormatJsonCompact(value);
  std::string out = "{";
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    out += Scalar(Json(it.key())) + ": ";
    const Json& member = it.value();
    if (!ExpandsByElement(member)) {
      AppendCompact(member, &out);
      continue;
    }
    out += '[';
    for (size_t i = 0; i < member.size(); ++i) {
      out += i == 0 ? "\n    " : ",\n    ";
      AppendCompact(member[i], &out);
    }
    out += "\n  ]";
  }
  return out + "\n}";
}

int JsonNestingDepth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::string JsonExceptionText(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (const size_t tag = what.find("] "); tag != std::string::npos) what = what.substr(tag + 2);
  return what;
}

}  // namespace ppsim
