// A reader of the YAML people write for configuration files, keeping the offset of every value
// and key. Internal to the configuration reader (config_file.cc).
//
// Supported: block mappings and block sequences (including "- key: value" items and sequences at
// their key's indentation), flow sequences [1, 2] and flow mappings {a: 1} (which may span lines),
// plain, 'single-quoted' and "double-quoted" scalars on one line, # comments, null / Null / NULL /
// ~ or an empty value for "no value", and one leading "---". Rejected with a located message rather
// than guessed at: tabs in indentation, anchors, aliases, tags, block scalars (| and >), complex
// keys (?), directives, several documents, and scalars continued on the next line.
#ifndef PPSIM_MODELS_CONFIG_YAML_H_
#define PPSIM_MODELS_CONFIG_YAML_H_

#include <string>
#include <string_view>

#include "models/config_tree.h"

namespace ppsim::config_internal {

class YamlReader {
 public:
  explicit YamlReader(std::string_view text) : text_(text) {}

  // Reads the whole text as one document. Returns false and fills `error` at the first syntax
  // error.
  bool Read(ConfigNode* root, ConfigError* error) {
    if (!ReadDocument(root)) {
      *error = error_;
      return false;
    }
    return true;
  }

 private:
  bool ReadDocument(ConfigNode* root) {
    if (!SkipToContent()) return false;
    if (eof_) return true;
    if (Column() == 0 && text_[pos_] == '%') {
      return Complain(pos_, "directives (%) are not supported");
    }
    if (AtDocumentMarker("---")) {
      pos_ += 3;
      SkipInlineSpace();
      if (!AtLineEnd()) {
        return Complain(pos_, "put the document's content on the lines after '---'");
      }
      if (!EndLine()) return false;
      if (eof_) return true;
    }
    if (!AtDocumentMarker("---") && !AtDocumentMarker("...")) {
      root->offset = pos_;
      if (!ReadBlockNode(root, 0)) return false;
      if (eof_) return true;
    }
    if (AtDocumentMarker("---")) {
      return Complain(pos_, "several documents in one file are not supported; remove this '---'");
    }
    if (AtDocumentMarker("...")) {
      return Complain(pos_, "document end markers ('...') are not supported");
    }
    return Complain(pos_, "unexpected indentation; the document starts at column " +
                              std::to_string(root->offset - LineStartOf(root->offset) + 1));
  }

  bool Complain(size_t offset, std::string message) {
    error_ = {offset, std::move(message)};
    return false;
  }

  // Bytes from the start of the current line; indentation is spaces only, so also columns.
  int Column() const { return static_cast<int>(pos_ - line_start_); }

  size_t LineStartOf(size_t offset) const {
    const size_t newline = text_.rfind('\n', offset == 0 ? 0 : offset - 1);
    return newline == std::string_view::npos || offset == 0 ? 0 : newline + 1;
  }

  char At(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  static bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
  static bool IsBreakOrEnd(char c) { return c == '\n' || c == '\0'; }

  void SkipInlineSpace() {
    while (pos_ < text_.size() && IsBlank(text_[pos_])) ++pos_;
  }

  // At the end of the line's content: its end, or a comment (callers only stop after a blank or
  // at a position where '#' cannot be part of a scalar).
  bool AtLineEnd() const { return IsBreakOrEnd(At(pos_)) || At(pos_) == '#'; }

  bool AtDocumentMarker(std::string_view marker) const {
    return !eof_ && Column() == 0 && text_.substr(pos_, 3) == marker &&
           (IsBlank(At(pos_ + 3)) || IsBreakOrEnd(At(pos_ + 3)));
  }

  bool AtSequenceItem() const {
    return At(pos_) == '-' && (IsBlank(At(pos_ + 1)) || IsBreakOrEnd(At(pos_ + 1)));
  }

  // From the start of a line: moves to the first character of the next line with content,
  // setting eof_ if there is none.
  bool SkipToContent() {
    while (true) {
      if (pos_ >= text_.size()) {
        eof_ = true;
        line_start_ = pos_;
        return true;
      }
      line_start_ = pos_;
      size_t i = pos_;
      size_t tab = std::string_view::npos;
      while (i < text_.size() && IsBlank(text_[i])) {
        if (text_[i] == '\t' && tab == std::string_view::npos) tab = i;
        ++i;
      }
      if (i >= text_.size() || text_[i] == '\n' || text_[i] == '#') {
        const size_t newline = text_.find('\n', i);
        pos_ = newline == std::string_view::npos ? text_.size() : newline + 1;
        continue;
      }
      if (tab != std::string_view::npos) {
        return Complain(tab, "tabs are not allowed in indentation; indent with spaces");
      }
      pos_ = i;
      return true;
    }
  }

  // After a value: only blanks and a comment may follow on its line; then moves to the next
  // line with content.
  bool EndLine() {
    const size_t before = pos_;
    SkipInlineSpace();
    if (At(pos_) == '#' && (pos_ == before && pos_ > 0 && !IsBlank(text_[pos_ - 1]))) {
      return Complain(pos_, "put a space before '#' to start a comment");
    }
    if (At(pos_) == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] != '\n') {
      return Complain(pos_, "unexpected " + DescribeChar(text_, pos_) + " after the value");
    }
    if (pos_ < text_.size()) ++pos_;
    return SkipToContent();
  }

  // Whether the line from pos_ holds "key:" followed by a blank or the end of the line.
  bool LooksLikeKey() const {
    const char c = At(pos_);
    if (c == '"' || c == '\'') {
      size_t i = pos_ + 1;
      while (i < text_.size() && text_[i] != '\n') {
        if (c == '"' && text_[i] == '\\') {
          i += 2;
          continue;
        }
        if (text_[i] == c) {
          if (c == '\'' && At(i + 1) == '\'') {
            i += 2;
            continue;
          }
          ++i;
          while (i < text_.size() && IsBlank(text_[i])) ++i;
          return At(i) == ':';
        }
        ++i;
      }
      return false;
    }
    if (std::string_view("[]{},#&*!|>%@`").find(c) != std::string_view::npos) return false;
    if (c == '?' || AtSequenceItem()) return false;
    for (size_t i = pos_; i < text_.size() && text_[i] != '\n'; ++i) {
      if (text_[i] == '#' && i > pos_ && IsBlank(text_[i - 1])) return false;
      if (text_[i] == ':' && (IsBlank(At(i + 1)) || IsBreakOrEnd(At(i + 1)))) return true;
    }
    return false;
  }

  // A node starting at pos_ (its first character) in block context. Leaves pos_ at the next line
  // with content.
  bool ReadBlockNode(ConfigNode* out, int depth) {
    if (depth >= kMaxNesting) {
      return Complain(pos_, "nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    out->offset = pos_;
    if (AtSequenceItem()) return ReadBlockSequence(Column(), out, depth);
    if (LooksLikeKey()) return ReadBlockMapping(Column(), out, depth);
    return ReadInlineValue(out, depth) && EndLine();
  }

  bool ReadBlockSequence(int column, ConfigNode* out, int depth) {
    out->kind = ConfigNode::Kind::kList;
    out->offset = pos_;
    while (true) {
      ConfigNode item;
      item.offset = pos_;
      ++pos_;  // '-'
      SkipInlineSpace();
      if (AtLineEnd()) {
        if (!EndLine()) return false;
        if (!eof_ && Column() > column && !AtDocumentMarker("---")) {
          if (!ReadBlockNode(&item, depth + 1)) return false;
        }
      } else if (!ReadBlockNode(&item, depth + 1)) {
        return false;
      }
      out->items.push_back(std::move(item));
      if (eof_ || AtDocumentMarker("---") || AtDocumentMarker("...") || Column() < column) {
        return true;
      }
      if (Column() == column) {
        if (AtSequenceItem()) continue;
        return true;  // The next key of a mapping whose value this sequence is.
      }
      return Complain(pos_, "unexpected indentation; the items of this list start at column " +
                                std::to_string(column + 1));
    }
  }

  bool ReadBlockMapping(int column, ConfigNode* out, int depth) {
    out->kind = ConfigNode::Kind::kMap;
    out->offset = pos_;
    while (true) {
      ConfigEntry entry;
      entry.key_offset = pos_;
      if (!ReadKey(&entry.key)) return false;
      SkipInlineSpace();
      entry.value.offset = entry.key_offset;
      if (AtLineEnd()) {
        if (!EndLine()) return false;
        if (!eof_ && !AtDocumentMarker("---") && !AtDocumentMarker("...")) {
          if (Column() > column) {
            if (!ReadBlockNode(&entry.value, depth + 1)) return false;
          } else if (Column() == column && AtSequenceItem()) {
            if (!ReadBlockSequence(column, &entry.value, depth + 1)) return false;
          }
        }
      } else {
        if (AtSequenceItem()) {
          return Complain(pos_,
                          "a list cannot start on the line of its key; put each '- ' item "
                          "on a line of its own below the key");
        }
        if (LooksLikeKey()) {
          return Complain(pos_,
                          "a map cannot start on the line of its key; put its keys on "
                          "lines of their own below, indented");
        }
        if (!ReadInlineValue(&entry.value, depth + 1) || !EndLine()) return false;
      }
      out->entries.push_back(std::move(entry));
      if (eof_ || AtDocumentMarker("---") || AtDocumentMarker("...") || Column() < column) {
        return true;
      }
      if (Column() > column) {
        return Complain(pos_, "unexpected indentation; the keys of this map start at column " +
                                  std::to_string(column + 1));
      }
      if (!LooksLikeKey()) return Complain(pos_, "expected 'key: value'");
    }
  }

  // A block key and its ':'. REQUIRES: LooksLikeKey().
  bool ReadKey(std::string* key) {
    if (At(pos_) == '"' || At(pos_) == '\'') {
      if (!ReadQuoted(key)) return false;
      SkipInlineSpace();
    } else {
      const size_t start = pos_;
      while (!(text_[pos_] == ':' && (IsBlank(At(pos_ + 1)) || IsBreakOrEnd(At(pos_ + 1))))) ++pos_;
      size_t end = pos_;
      while (end > start && IsBlank(text_[end - 1])) --end;
      *key = std::string(text_.substr(start, end - start));
      if (key->empty()) return Complain(start, "empty key");
    }
    ++pos_;  // ':'
    return true;
  }

  // The message for a character that cannot start a value, or "" if it can.
  std::string Unsupported(size_t at) const {
    switch (At(at)) {
      case '&':
        return "anchors (&) are not supported; write the value out";
      case '*':
        return "aliases (*) are not supported; write the value out";
      case '!':
        return "tags (!) are not supported";
      case '|':
      case '>':
        return "block scalars (| and >) are not supported; use a quoted string";
      case '?':
        return "complex keys (?) are not supported";
      case '%':
      case '@':
      case '`':
        return "unexpected " + DescribeChar(text_, at) + "; put the value in quotes";
      case ']':
      case '}':
      case ',':
        return "unexpected " + DescribeChar(text_, at);
      default:
        return "";
    }
  }

  // A value on the current line: flow collection, quoted or plain scalar.
  bool ReadInlineValue(ConfigNode* out, int depth) {
    out->offset = pos_;
    const char c = At(pos_);
    if (c == '[' || c == '{') return ReadFlow(out, depth);
    if (c == '"' || c == '\'') {
      out->kind = ConfigNode::Kind::kScalar;
      return ReadQuoted(&out->text);
    }
    if (std::string message = Unsupported(pos_); !message.empty()) return Complain(pos_, message);
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '\n' &&
           !(text_[pos_] == '#' && pos_ > start && IsBlank(text_[pos_ - 1]))) {
      ++pos_;
    }
    size_t end = pos_;
    while (end > start && IsBlank(text_[end - 1])) --end;
    SetPlain(text_.substr(start, end - start), out);
    return true;
  }

  static void SetPlain(std::string_view text, ConfigNode* out) {
    if (text == "null" || text == "Null" || text == "NULL" || text == "~") {
      out->kind = ConfigNode::Kind::kNull;
      return;
    }
    out->kind = ConfigNode::Kind::kScalar;
    out->text = std::string(text);
  }

  // A quoted scalar ending on its line, at its opening quote.
  bool ReadQuoted(std::string* out) {
    const size_t start = pos_;
    const char quote = text_[pos_++];
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') {
        return Complain(start, "unterminated string; a quoted string must end on its line");
      }
      const char c = text_[pos_];
      if (c == quote) {
        if (quote == '\'' && At(pos_ + 1) == '\'') {
          out->push_back('\'');
          pos_ += 2;
          continue;
        }
        ++pos_;
        return true;
      }
      if (quote == '"' && c == '\\') {
        if (!ReadEscape(out)) return false;
        continue;
      }
      out->push_back(c);
      ++pos_;
    }
  }

  bool ReadEscape(std::string* out) {
    const size_t escape = pos_;
    const char e = At(pos_ + 1);
    pos_ += 2;
    int hex_digits = 0;
    switch (e) {
      case '0':
        out->push_back('\0');
        return true;
      case 'a':
        out->push_back('\a');
        return true;
      case 'b':
        out->push_back('\b');
        return true;
      case 't':
      case '\t':
        out->push_back('\t');
        return true;
      case 'n':
        out->push_back('\n');
        return true;
      case 'v':
        out->push_back('\v');
        return true;
      case 'f':
        out->push_back('\f');
        return true;
      case 'r':
        out->push_back('\r');
        return true;
      case 'e':
        out->push_back('\x1b');
        return true;
      case ' ':
        out->push_back(' ');
        return true;
      case '"':
        out->push_back('"');
        return true;
      case '/':
        out->push_back('/');
        return true;
      case '\\':
        out->push_back('\\');
        return true;
      case 'x':
        hex_digits = 2;
        break;
      case 'u':
        hex_digits = 4;
        break;
      case 'U':
        hex_digits = 8;
        break;
      default:
        if (IsBreakOrEnd(e)) {
          return Complain(escape, "unterminated string; a quoted string must end on its line");
        }
        return Complain(escape, "invalid escape " +
                                    DescribeChar(text_, escape + 1).insert(1, "\\") +
                                    "; valid: \\0 \\a \\b \\t \\n \\v \\f \\r \\e \\\" \\/ \\\\ "
                                    "\\xXX \\uXXXX \\UXXXXXXXX");
    }
    unsigned long code = 0;
    for (int i = 0; i < hex_digits; ++i) {
      const char h = At(pos_ + i);
      int digit = -1;
      if (h >= '0' && h <= '9') digit = h - '0';
      if (h >= 'a' && h <= 'f') digit = h - 'a' + 10;
      if (h >= 'A' && h <= 'F') digit = h - 'A' + 10;
      if (digit < 0) {
        return Complain(escape, "invalid \\" + std::string(1, e) + " escape; write \\" +
                                    std::string(1, e) + " and " + std::to_string(hex_digits) +
                                    " hex digits");
      }
      code = code * 16 + digit;
    }
    pos_ += hex_digits;
    if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return Complain(escape,
                      "invalid \\" + std::string(1, e) + " escape: not a Unicode character");
    }
    AppendUtf8(code, out);
    return true;
  }

  // Blanks, line breaks and comments inside a flow collection.
  void SkipFlowSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (IsBlank(c) || c == '\n') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  bool ReadFlow(ConfigNode* out, int depth) {
    if (depth >= kMaxNesting) {
      return Complain(pos_, "nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    const size_t open = pos_;
    const bool is_list = text_[pos_] == '[';
    const char close = is_list ? ']' : '}';
    out->kind = is_list ? ConfigNode::Kind::kList : ConfigNode::Kind::kMap;
    out->offset = pos_++;
    while (true) {
      SkipFlowSpace();
      if (pos_ >= text_.size()) {
        return Complain(open, std::string("unclosed '") + text_[open] + "'");
      }
      if (text_[pos_] == close) {
        ++pos_;
        return true;
      }
      if (is_list) {
        ConfigNode item;
        if (!ReadFlowValue(&item, depth + 1)) return false;
        out->items.push_back(std::move(item));
      } else {
        ConfigEntry entry;
        entry.key_offset = pos_;
        if (!ReadFlowKey(&entry.key)) return false;
        SkipFlowSpace();
        if (At(pos_) != ':') {
          return Complain(pos_, "expected ':' after the key, got " + DescribeChar(text_, pos_));
        }
        ++pos_;
        SkipFlowSpace();
        entry.value.offset = pos_;
        if (At(pos_) != ',' && At(pos_) != '}' && !ReadFlowValue(&entry.value, depth + 1)) {
          return false;
        }
        out->entries.push_back(std::move(entry));
      }
      SkipFlowSpace();
      if (At(pos_) == ',') {
        ++pos_;
        continue;
      }
      if (At(pos_) == close) {
        ++pos_;
        return true;
      }
      if (is_list && At(pos_) == ':') {
        return Complain(pos_, "'key: value' pairs inside [ ] are not supported; use { }");
      }
      if (pos_ >= text_.size()) {
        return Complain(open, std::string("unclosed '") + text_[open] + "'");
      }
      return Complain(
          pos_, std::string("expected ',' or '") + close + "', got " + DescribeChar(text_, pos_));
    }
  }

  // Where a plain scalar inside a flow collection ends.
  bool EndsFlowPlain(size_t i, size_t start, bool is_key) const {
    const char c = text_[i];
    if (c == '\n' || c == ',' || c == '[' || c == ']' || c == '{' || c == '}') return true;
    if (c == '#' && i > start && IsBlank(text_[i - 1])) return true;
    if (c == ':') {
      const char next = At(i + 1);
      return is_key || IsBlank(next) || IsBreakOrEnd(next) || next == ',' || next == ']' ||
             next == '}';
    }
    return false;
  }

  bool ReadFlowPlain(bool is_key, std::string_view* text) {
    if (std::string message = Unsupported(pos_); !message.empty()) return Complain(pos_, message);
    const size_t start = pos_;
    while (pos_ < text_.size() && !EndsFlowPlain(pos_, start, is_key)) ++pos_;
    size_t end = pos_;
    while (end > start && IsBlank(text_[end - 1])) --end;
    *text = text_.substr(start, end - start);
    if (text->empty()) {
      return Complain(start, std::string(is_key ? "expected a key" : "expected a value") +
                                 ", got " + DescribeChar(text_, start));
    }
    return true;
  }

  bool ReadFlowKey(std::string* key) {
    if (At(pos_) == '"' || At(pos_) == '\'') return ReadQuoted(key);
    if (At(pos_) == '[' || At(pos_) == '{') {
      return Complain(
          pos_, "a key must be a scalar, not " + std::string(At(pos_) == '[' ? "a list" : "a map"));
    }
    std::string_view text;
    if (!ReadFlowPlain(true, &text)) return false;
    *key = std::string(text);
    return true;
  }

  bool ReadFlowValue(ConfigNode* out, int depth) {
    out->offset = pos_;
    const char c = At(pos_);
    if (c == '[' || c == '{') return ReadFlow(out, depth);
    if (c == '"' || c == '\'') {
      out->kind = ConfigNode::Kind::kScalar;
      return ReadQuoted(&out->text);
    }
    std::string_view text;
    if (!ReadFlowPlain(false, &text)) return false;
    SetPlain(text, out);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  bool eof_ = false;
  ConfigError error_;
};

}  // namespace ppsim::config_internal

#endif  // PPSIM_MODELS_CONFIG_YAML_H_
