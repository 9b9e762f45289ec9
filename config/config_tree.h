// The located document tree the JSON and YAML readers build (config_json.h, config_yaml.h) and
// config_file.cc turns into a protobuf message, and the map from byte offsets to the lines and
// columns messages show. Internal to the configuration reader.
#ifndef PPSIM_CONFIG_CONFIG_TREE_H_
#define PPSIM_CONFIG_CONFIG_TREE_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ppsim::config_internal {

// How deep a document may nest, rather than risking the stack on hostile input: in JSON and YAML
// a collection inside kMaxNesting others is rejected; for text format it is protobuf's recursion
// limit (kMaxNesting messages may nest below the top one).
inline constexpr int kMaxNesting = 100;

struct ConfigEntry;

// A value of the document. Scalars keep their text as written (after unquoting): whether "3" is
// a number or a string is decided by the proto field it lands in, so quoting never matters except
// that a quoted "null" is the string, not the absence of a value.
struct ConfigNode {
  enum class Kind { kNull, kScalar, kList, kMap };
  Kind kind = Kind::kNull;
  size_t offset = 0;                 // Byte offset of the value's first character in the text.
  std::string text;                  // kScalar.
  std::vector<ConfigNode> items;     // kList.
  std::vector<ConfigEntry> entries;  // kMap, in document order; duplicates kept.
};

struct ConfigEntry {
  std::string key;
  size_t key_offset = 0;
  ConfigNode value;
};

// A field's path as ConfigLocations and messages write it: "stages[1].f_s".
inline std::string FieldPath(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}
inline std::string IndexPath(const std::string& base, const std::string& index) {
  return base + "[" + index + "]";
}

// A problem found at a byte offset; `message` is "FIELD.PATH: what; valid" or just "what".
struct ConfigError {
  size_t offset = 0;
  std::string message;
};

// Maps byte offsets to 1-based lines and columns. Columns count characters (UTF-8 code points),
// a tab being one.
class SourceText {
 public:
  explicit SourceText(std::string_view text) : text_(text) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
      if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continuations_.push_back(i);
    }
  }

  std::string_view text() const { return text_; }

  std::pair<int, int> LineColumn(size_t offset) const {
    offset = std::min(offset, text_.size());
    const size_t line =
        std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin();
    // Characters, not bytes: the bytes since the line's start less the UTF-8 continuation bytes
    // among them, counted by binary search (a one-line document of many values stays linear).
    const size_t start = line_starts_[line - 1];
    const size_t continuations =
        std::lower_bound(continuations_.begin(), continuations_.end(), offset) -
        std::lower_bound(continuations_.begin(), continuations_.end(), start);
    return {static_cast<int>(line), static_cast<int>(offset - start - continuations) + 1};
  }

  // The offset of a position reported by protobuf's io::Tokenizer: 0-based line, and a 0-based
  // column in which a tab advances to the next multiple of 8.
  size_t OffsetOfTokenizerPosition(int line, int column) const {
    if (line < 0) return 0;
    if (static_cast<size_t>(line) >= line_starts_.size()) return text_.size();
    size_t i = line_starts_[line];
    int at = 0;
    while (i < text_.size() && text_[i] != '\n' && at < column) {
      at = text_[i] == '\t' ? at + 8 - at % 8 : at + 1;
      ++i;
    }
    return i;
  }

 private:
  std::string_view text_;
  std::vector<size_t> line_starts_;
  std::vector<size_t> continuations_;  // offsets of UTF-8 continuation bytes
};

}  // namespace ppsim::config_internal

#endif  // PPSIM_CONFIG_CONFIG_TREE_H_
