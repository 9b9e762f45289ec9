#include "config/config_yaml.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/emitterstyle.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ppsim::config_internal {
namespace {

std::string TooDeep() { return "nested deeper than " + std::to_string(kMaxNesting) + " levels"; }

// yaml-cpp's marks hold a byte offset (pos) and a 0-based line and column, which agree on every
// input tried (the column counting bytes); messages take the offset and let SourceText count
// characters.
size_t OffsetOf(const YAML::Mark& mark) { return mark.pos < 0 ? 0 : static_cast<size_t>(mark.pos); }

// What YAML::Node does not keep: where each document starts (at its "---" when it has one), and
// the first collection nested kMaxNesting deep. yaml-cpp's own depth guard stops at 500 nested
// values with "bad file" located wherever its scanner had read to (often the end of the file),
// so a failed parse is retraced with these events to report our limit where it is crossed.
class Outline : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    document_starts_.push_back(OffsetOf(mark));
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Open(mark);
  }
  void OnMapEnd() override { --depth_; }

  // Parses `input` until its second document has started or a syntax error stops it (the caller
  // has that error already).
  void Trace(const std::string& input) {
    std::istringstream stream(input);
    YAML::Parser parser(stream);
    try {
      while (document_starts_.size() < 2 && parser.HandleNextDocument(*this)) {
      }
    } catch (const YAML::Exception&) {
    }
  }

  const std::vector<size_t>& document_starts() const { return document_starts_; }
  const std::optional<size_t>& too_deep() const { return too_deep_; }

 private:
  void Open(const YAML::Mark& mark) {
    if (depth_ >= kMaxNesting && !too_deep_) too_deep_ = OffsetOf(mark);
    ++depth_;
  }

  std::vector<size_t> document_starts_;
  std::optional<size_t> too_deep_;
  int depth_ = 0;
};

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "null";
  }
}

// Copies a loaded document into the located tree. Aliased values are copied once per alias.
class TreeBuilder {
 public:
  bool Build(const YAML::Node& document, ConfigNode* root, ConfigError* error) {
    document_offset_ = OffsetOf(document.Mark());
    if (Copy(document, root, 0)) return true;
    *error = std::move(error_);
    return false;
  }

 private:
  bool Fail(size_t offset, std::string message) {
    error_ = {offset, std::move(message)};
    return false;
  }

  bool Copy(const YAML::Node& node, ConfigNode* out, int depth) {
    out->offset = OffsetOf(node.Mark());
    // A whole-document problem: the value that crosses the line is an arbitrary one.
    if (++values_ > kMaxYamlValues) {
      return Fail(document_offset_, "more than " + std::to_string(kMaxYamlValues) +
                                        " values once aliases are expanded");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out->kind = ConfigNode::Kind::kNull;
        return true;
      case YAML::NodeType::Scalar:
        out->kind = ConfigNode::Kind::kScalar;
        out->text = node.Scalar();
        return true;
      case YAML::NodeType::Sequence:
        if (depth >= kMaxNesting) return Fail(out->offset, TooDeep());
        out->kind = ConfigNode::Kind::kList;
        for (const YAML::Node& item : node) {
          out->items.emplace_back();
          if (!Copy(item, &out->items.back(), depth + 1)) return false;
        }
        return true;
      case YAML::NodeType::Map:
        if (depth >= kMaxNesting) return Fail(out->offset, TooDeep());
        out->kind = ConfigNode::Kind::kMap;
        for (const auto& pair : node) {
          const YAML::Node& key = pair.first;
          const size_t key_offset = OffsetOf(key.Mark());
          if (!key.IsScalar()) {
            return Fail(key_offset, "expected a name as the key, got " + Describe(key));
          }
          // Only a plain << is a merge key; its tag is "?" as for every plain scalar.
          if (key.Scalar() == "<<" && key.Tag() == "?") {
            return Fail(key_offset,
                        "merge keys (<<) are not supported; alias the whole value (key: *name) "
                        "or write its fields out");
          }
          ConfigEntry& entry = out->entries.emplace_back();
          entry.key = key.Scalar();
          entry.key_offset = key_offset;
          if (!Copy(pair.second, &entry.value, depth + 1)) return false;
        }
        return true;
    }
    return true;
  }

  size_t document_offset_ = 0;
  size_t values_ = 0;
  ConfigError error_;
};

}  // namespace

bool ReadYaml(std::string_view text, ConfigNode* root, ConfigError* error) {
  std::string input(text);
  // yaml-cpp 0.7 accepts a quoted scalar left open when only blanks and line breaks follow it,
  // taking the rest of the file as its text. A final comment line makes such a scalar reach the
  // end of the file, where yaml-cpp reports it ("illegal EOF in scalar"); to a valid document the
  // comment changes nothing. A file not ending in a line break cannot hit the bug.
  if (!input.empty() && input.back() == '\n') input += '#';
  // The events first, stopping at a second document: yaml-cpp 0.7's LoadAll never returns on
  // some inputs (",A" starts a new empty document forever), and a configuration file holds one.
  Outline outline;
  outline.Trace(input);
  if (outline.document_starts().size() > 1) {
    *error = {outline.document_starts()[1], "a second document; a configuration file holds one"};
    return false;
  }
  YAML::Node document;
  try {
    document = YAML::Load(input);
  } catch (const YAML::Exception& e) {
    if (outline.too_deep()) {
      *error = {*outline.too_deep(), TooDeep()};
    } else {
      *error = {OffsetOf(e.mark), e.msg};
    }
    return false;
  }
  *root = ConfigNode();
  return TreeBuilder().Build(document, root, error);
}

}  // namespace ppsim::config_internal
