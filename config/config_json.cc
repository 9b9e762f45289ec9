#include "config/config_json.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "base/escape.h"

namespace ppsim::config_internal {
namespace {

// Appends the UTF-8 encoding of `code_point` (at most 0x10FFFF) to `out`.
void AppendUtf8(unsigned long code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// How a character is shown in a syntax error: 'x', or a name for the invisible ones.
std::string DescribeChar(std::string_view text, size_t offset) {
  if (offset >= text.size()) return "the end of the file";
  const char c = text[offset];
  if (c == '\n' || c == '\r') return "the end of the line";
  if (c == '\t') return "a tab";
  size_t end = offset + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return Quoted(text.substr(offset, end - offset));
}

// Recursive descent over one document, nesting bounded by kMaxNesting; the first syntax error
// ends the reading.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  bool Read(ConfigNode* root, ConfigError* error) {
    SkipSpace();
    if (!ReadValue(root, 0)) return Fail(error);
    SkipSpace();
    if (pos_ < text_.size()) {
      Complain(pos_, "unexpected " + DescribeChar(text_, pos_) + " after the end of the document");
      return Fail(error);
    }
    return true;
  }

 private:
  bool Fail(ConfigError* error) {
    *error = error_;
    return false;
  }

  bool Complain(size_t offset, std::string message) {
    error_ = {offset, std::move(message)};
    return false;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool ReadValue(ConfigNode* node, int depth) {
    node->offset = pos_;
    if (pos_ >= text_.size()) return Complain(pos_, "expected a value, got the end of the file");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxNesting) {
        return Complain(pos_, "nested deeper than " + std::to_string(kMaxNesting) + " levels");
      }
      return c == '{' ? ReadObject(node, depth + 1) : ReadArray(node, depth + 1);
    }
    if (c == '"') {
      node->kind = ConfigNode::Kind::kScalar;
      return ReadString(&node->text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ReadNumber(node);
    if (c == '/') return Complain(pos_, "comments are not allowed in JSON");
    if (c == '\'') return Complain(pos_, "strings must be in double quotes");
    size_t end = pos_;
    while (end < text_.size() && IsWordChar(text_[end])) ++end;
    const std::string_view word = text_.substr(pos_, end - pos_);
    if (word == "true" || word == "false") {
      node->kind = ConfigNode::Kind::kScalar;
      node->text = std::string(word);
      pos_ = end;
      return true;
    }
    if (word == "null") {
      pos_ = end;
      return true;
    }
    if (word.empty()) return Complain(pos_, "expected a value, got " + DescribeChar(text_, pos_));
    return Complain(pos_, "unexpected '" + std::string(word) +
                              "'; strings must be in double quotes, and the literals are true, "
                              "false and null");
  }

  static bool IsWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '-';
  }

  bool ReadObject(ConfigNode* node, int depth) {
    node->kind = ConfigNode::Kind::kMap;
    ++pos_;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        const bool after_comma = !node->entries.empty();
        return Complain(pos_, "expected a key in double quotes" +
                                  std::string(after_comma ? " after ','" : "") + ", got " +
                                  DescribeChar(text_, pos_));
      }
      ConfigEntry entry;
      entry.key_offset = pos_;
      if (!ReadString(&entry.key)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') {
        return Complain(pos_, "expected ':' after the key, got " + DescribeChar(text_, pos_));
      }
      ++pos_;
      SkipSpace();
      if (!ReadValue(&entry.value, depth)) return false;
      node->entries.push_back(std::move(entry));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Complain(pos_, "expected ',' or '}', got " + DescribeChar(text_, pos_));
    }
  }

  bool ReadArray(ConfigNode* node, int depth) {
    node->kind = ConfigNode::Kind::kList;
    ++pos_;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        return Complain(pos_, "expected a value after ',', got ']'");
      }
      node->items.emplace_back();
      if (!ReadValue(&node->items.back(), depth)) return false;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return Complain(pos_, "expected ',' or ']', got " + DescribeChar(text_, pos_));
    }
  }

  // At the opening quote.
  bool ReadString(std::string* out) {
    const size_t start = pos_++;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') {
        return Complain(start, "unterminated string");
      }
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return Complain(pos_, "control character in a string; write it as an escape such as \\t");
      }
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      const size_t escape = pos_;
      if (pos_ + 1 >= text_.size()) return Complain(start, "unterminated string");
      const char e = text_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          unsigned long code = 0;
          if (!ReadHex4(&code))
            return Complain(escape, "invalid \\u escape; write \\u and 4 hex digits");
          if (code >= 0xD800 && code <= 0xDBFF) {
            unsigned long low = 0;
            if (pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
              pos_ += 2;
              if (!ReadHex4(&low) || low < 0xDC00 || low > 0xDFFF) low = 0;
            }
            if (low == 0) return Complain(escape, "unpaired surrogate in a \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            return Complain(escape, "unpaired surrogate in a \\u escape");
          }
          AppendUtf8(code, out);
          break;
        }
        default:
          return Complain(escape, "invalid escape '\\" + Printable(std::string(1, e)) +
                                      "'; valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
    }
  }

  bool ReadHex4(unsigned long* code) {
    if (pos_ + 4 > text_.size()) return false;
    *code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_ + i];
      int digit;
      if (h >= '0' && h <= '9') {
        digit = h - '0';
      } else if (h >= 'a' && h <= 'f') {
        digit = h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        digit = h - 'A' + 10;
      } else {
        return false;
      }
      *code = *code * 16 + digit;
    }
    pos_ += 4;
    return true;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as written.
  bool ReadNumber(ConfigNode* node) {
    const size_t start = pos_;
    size_t end = pos_;
    while (end < text_.size() && IsWordChar(text_[end])) ++end;
    const std::string_view number = text_.substr(start, end - start);
    size_t i = 0;
    auto digits = [&] {
      const size_t from = i;
      while (i < number.size() && number[i] >= '0' && number[i] <= '9') ++i;
      return i - from;
    };
    bool valid = true;
    if (i < number.size() && number[i] == '-') ++i;
    const size_t int_start = i;
    const size_t int_digits = digits();
    if (int_digits == 0 || (int_digits > 1 && number[int_start] == '0')) valid = false;
    if (valid && i < number.size() && number[i] == '.') {
      ++i;
      if (digits() == 0) valid = false;
    }
    if (valid && i < number.size() && (number[i] == 'e' || number[i] == 'E')) {
      ++i;
      if (i < number.size() && (number[i] == '+' || number[i] == '-')) ++i;
      if (digits() == 0) valid = false;
    }
    if (!valid || i != number.size()) {
      return Complain(start, "invalid number " + Quoted(number));
    }
    node->kind = ConfigNode::Kind::kScalar;
    node->text = std::string(number);
    pos_ = end;
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  ConfigError error_;
};

}  // namespace

bool ReadJson(std::string_view text, ConfigNode* root, ConfigError* error) {
  return JsonReader(text).Read(root, error);
}

}  // namespace ppsim::config_internal
