#include "models/config_file.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "models/config_json.h"
#include "models/config_tree.h"
#include "models/config_yaml.h"
#include "base/escape.h"
#include "base/names.h"

namespace ppsim {
namespace {

using config_internal::ConfigEntry;
using config_internal::ConfigError;
using config_internal::ConfigNode;
using config_internal::SourceText;
using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::OneofDescriptor;
using google::protobuf::Reflection;

// ---- Names and suggestions

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }


std::string FieldPath(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}

std::string IndexPath(const std::string& base, const std::string& index) {
  return base + "[" + index + "]";
}

std::string Quoted(std::string_view text) { return "'" + Printable(text) + "'"; }

// "unknown field; did you mean f_s?" or "unknown field; valid: f_s, i_s, ...".
std::string UnknownField(const Descriptor* type, std::string_view given) {
  if (type == nullptr) return "unknown field";
  std::vector<std::string> names;
  std::vector<std::string> candidates;
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    names.push_back(field->name());
    candidates.push_back(field->name());
    if (field->json_name() != field->name()) candidates.push_back(field->json_name());
  }
  if (names.empty()) return "unknown field; this message has no fields";
  const std::string best = ClosestName(given, candidates);
  if (!best.empty()) return "unknown field; did you mean " + best + "?";
  return "unknown field; valid: " + JoinNames(names);
}

}  // namespace

std::vector<std::string> EnumValueNames(const google::protobuf::EnumDescriptor* type) {
  std::vector<std::string> names;
  for (int i = 0; i < type->value_count(); ++i) {
    const EnumValueDescriptor* value = type->value(i);
    const std::string& name = value->name();
    const std::string_view suffix = "UNSPECIFIED";
    if (value->number() == 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      continue;
    }
    names.push_back(name);
  }
  return names;
}

namespace {

std::string UnknownEnumValue(const EnumDescriptor* type, std::string_view given) {
  const std::vector<std::string> names = EnumValueNames(type);
  const std::string best = ClosestName(given, names);
  return "unknown value " + Quoted(given) + "; valid: " + JoinNames(names) +
         (best.empty() ? "" : " (did you mean " + best + "?)");
}

// ---- Scalars

// An integer written in decimal, possibly with a fraction or an exponent that leave a whole
// number ("3.0", "1e9"), as the proto3 JSON mapping allows. Computed exactly, without floating
// point. Returns false if `text` is not such a number; sets *overflow past 2^64 - 1.
bool ParseExactInteger(std::string_view text, bool* negative, uint64_t* magnitude, bool* overflow) {
  *negative = false;
  *magnitude = 0;
  *overflow = false;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) *negative = text[i++] == '-';
  std::string digits;
  size_t fraction_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') digits.push_back(text[i++]);
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      digits.push_back(text[i++]);
      ++fraction_digits;
    }
  }
  if (digits.empty()) return false;
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    size_t exponent_digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (exponent < 1000000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
      ++exponent_digits;
    }
    if (exponent_digits == 0) return false;
    if (exponent_negative) exponent = -exponent;
  }
  if (i != text.size()) return false;
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return true;
  digits.erase(0, first);
  const long shift = exponent - static_cast<long>(fraction_digits);
  if (shift < 0) {
    const size_t drop = static_cast<size_t>(-shift);
    if (drop >= digits.size()) return false;
    if (digits.find_first_not_of('0', digits.size() - drop) != std::string::npos) return false;
    digits.resize(digits.size() - drop);
  } else {
    if (digits.size() + static_cast<size_t>(shift) > 20) {
      *overflow = true;
      return true;
    }
    digits.append(static_cast<size_t>(shift), '0');
  }
  uint64_t value = 0;
  for (char d : digits) {
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(d - '0'), &value)) {
      *overflow = true;
      return true;
    }
  }
  *magnitude = value;
  return true;
}

// What a field of this type takes, as "expected ...".
std::string Expected(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return "expected an integer";
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return "expected a number";
    case FieldDescriptor::CPPTYPE_BOOL:
      return "expected true or false";
    case FieldDescriptor::CPPTYPE_STRING:
      return "expected a string";
    case FieldDescriptor::CPPTYPE_ENUM:
      return "expected one of " + JoinNames(EnumValueNames(field->enum_type()));
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "expected a map of fields";
  }
  return "expected a value";
}

struct IntegerRange {
  bool is_signed;
  uint64_t max;  // Largest value; the smallest of a signed type is -(max + 1).
};

IntegerRange RangeOf(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return {true, std::numeric_limits<int32_t>::max()};
    case FieldDescriptor::CPPTYPE_INT64:
      return {true, std::numeric_limits<int64_t>::max()};
    case FieldDescriptor::CPPTYPE_UINT32:
      return {false, std::numeric_limits<uint32_t>::max()};
    default:
      return {false, std::numeric_limits<uint64_t>::max()};
  }
}

std::string OutOfRange(const FieldDescriptor* field, std::string_view text) {
  const IntegerRange range = RangeOf(field);
  const std::string low = range.is_signed ? "-" + std::to_string(range.max + 1) : "0";
  return "expected an integer in [" + low + ", " + std::to_string(range.max) + "], got " +
         Quoted(text);
}

// Parses an integer for `field`; returns the complaint, or "" and the value (two's complement
// for negative ones).
std::string ToInteger(const FieldDescriptor* field, std::string_view text, uint64_t* bits) {
  bool negative;
  uint64_t magnitude;
  bool overflow;
  if (!ParseExactInteger(text, &negative, &magnitude, &overflow)) {
    return Expected(field) + ", got " + Quoted(text);
  }
  const IntegerRange range = RangeOf(field);
  if (negative && magnitude != 0) {
    if (overflow || !range.is_signed || magnitude - 1 > range.max) return OutOfRange(field, text);
    *bits = ~(magnitude - 1);
  } else {
    if (overflow || magnitude > range.max) return OutOfRange(field, text);
    *bits = magnitude;
  }
  return "";
}

// A decimal floating-point number, or inf / Infinity / .inf and nan / NaN / .nan with an
// optional sign. Returns false if `text` is none; sets *out_of_range when it overflows.
bool ParseNumber(std::string_view text, double* value, bool* out_of_range) {
  *out_of_range = false;
  std::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  for (std::string_view inf :
       {"inf", "Inf", "INF", ".inf", ".Inf", ".INF", "infinity", "Infinity"}) {
    if (body == inf) {
      *value = negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      return true;
    }
  }
  for (std::string_view nan : {"nan", "NaN", "NAN", ".nan", ".NaN", ".NAN"}) {
    if (body == nan) {
      *value = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
  }
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string_view::npos ||
      text.find_first_of("0123456789") == std::string_view::npos) {
    return false;
  }
  if (text[0] == '+') text.remove_prefix(1);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *value, std::chars_format::general);
  if (ptr != end) return false;
  if (ec == std::errc::result_out_of_range) *out_of_range = true;
  return ec == std::errc() || ec == std::errc::result_out_of_range;
}

// Sets (or, for a repeated field, adds) the scalar `text` to `field` of `message`. Returns the
// complaint, or "" if it was set.
std::string SetScalar(Message* message, const FieldDescriptor* field, std::string_view text) {
  const Reflection* reflection = message->GetReflection();
  const bool add = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t bits = 0;
      if (std::string complaint = ToInteger(field, text, &bits); !complaint.empty()) {
        return complaint;
      }
      switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32: {
          const auto value = static_cast<int32_t>(static_cast<int64_t>(bits));
          add ? reflection->AddInt32(message, field, value)
              : reflection->SetInt32(message, field, value);
          break;
        }
        case FieldDescriptor::CPPTYPE_INT64: {
          const auto value = static_cast<int64_t>(bits);
          add ? reflection->AddInt64(message, field, value)
              : reflection->SetInt64(message, field, value);
          break;
        }
        case FieldDescriptor::CPPTYPE_UINT32: {
          const auto value = static_cast<uint32_t>(bits);
          add ? reflection->AddUInt32(message, field, value)
              : reflection->SetUInt32(message, field, value);
          break;
        }
        default:
          add ? reflection->AddUInt64(message, field, bits)
              : reflection->SetUInt64(message, field, bits);
      }
      return "";
    }
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      double value = 0;
      bool out_of_range = false;
      if (!ParseNumber(text, &value, &out_of_range))
        return Expected(field) + ", got " + Quoted(text);
      const bool is_float = field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT;
      if (out_of_range || (is_float && std::isfinite(value) && std::fabs(value) > FLT_MAX)) {
        return Quoted(text) + " is out of range for a " + (is_float ? "float" : "double");
      }
      if (is_float) {
        add ? reflection->AddFloat(message, field, static_cast<float>(value))
            : reflection->SetFloat(message, field, static_cast<float>(value));
      } else {
        add ? reflection->AddDouble(message, field, value)
            : reflection->SetDouble(message, field, value);
      }
      return "";
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool value;
      if (text == "true" || text == "True" || text == "TRUE") {
        value = true;
      } else if (text == "false" || text == "False" || text == "FALSE") {
        value = false;
      } else {
        return Expected(field) + ", got " + Quoted(text);
      }
      add ? reflection->AddBool(message, field, value) : reflection->SetBool(message, field, value);
      return "";
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string value(text);
      add ? reflection->AddString(message, field, std::move(value))
          : reflection->SetString(message, field, std::move(value));
      return "";
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumValueDescriptor* value = field->enum_type()->FindValueByName(std::string(text));
      if (value == nullptr) return UnknownEnumValue(field->enum_type(), text);
      add ? reflection->AddEnum(message, field, value) : reflection->SetEnum(message, field, value);
      return "";
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return Expected(field);
}

// ---- JSON and YAML: the located tree into a message, by reflection

std::string Describe(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::kNull:
      return "null";
    case ConfigNode::Kind::kScalar:
      return Quoted(node.text);
    case ConfigNode::Kind::kList:
      return "a list";
    case ConfigNode::Kind::kMap:
      return "a map";
  }
  return "";
}

const FieldDescriptor* FindField(const Descriptor* type, const std::string& key) {
  if (const FieldDescriptor* field = type->FindFieldByName(key)) return field;
  for (int i = 0; i < type->field_count(); ++i) {
    if (type->field(i)->json_name() == key) return type->field(i);
  }
  return nullptr;
}

class TreeFiller {
 public:
  TreeFiller(const SourceText& source, ConfigLocations* locations, std::vector<ConfigError>* errors)
      : source_(source), locations_(locations), errors_(errors) {}

  void FillMessage(const ConfigNode& node, Message* message, const std::string& path) {
    if (node.kind == ConfigNode::Kind::kNull) return;
    if (node.kind != ConfigNode::Kind::kMap) {
      Complain(node.offset, path, "expected a map of fields, got " + Describe(node));
      return;
    }
    const Descriptor* type = message->GetDescriptor();
    std::map<const FieldDescriptor*, size_t> seen;
    std::map<const OneofDescriptor*, const FieldDescriptor*> oneofs_seen;
    for (const ConfigEntry& entry : node.entries) {
      const FieldDescriptor* field = FindField(type, entry.key);
      if (field == nullptr) {
        Complain(entry.key_offset, FieldPath(path, Printable(entry.key)),
                 UnknownField(type, entry.key));
        continue;
      }
      const std::string field_path = FieldPath(path, field->name());
      if (const auto [it, inserted] = seen.emplace(field, entry.key_offset); !inserted) {
        Complain(entry.key_offset, field_path, "duplicate key; first at " + LineColumn(it->second));
        continue;
      }
      if (entry.value.kind == ConfigNode::Kind::kNull) continue;
      if (const OneofDescriptor* oneof = field->real_containing_oneof()) {
        const auto [it, inserted] = oneofs_seen.emplace(oneof, field);
        if (!inserted) {
          std::vector<std::string> members;
          for (int i = 0; i < oneof->field_count(); ++i) members.push_back(oneof->field(i)->name());
          Complain(entry.key_offset, field_path,
                   "only one of " + JoinNames(members) + " may be set; " + it->second->name() +
                       " is set at " + LineColumn(seen[it->second]));
          continue;
        }
      }
      FillField(entry.value, message, field, field_path);
    }
  }

 private:
  std::string LineColumn(size_t offset) const {
    const auto [line, column] = source_.LineColumn(offset);
    return std::to_string(line) + ":" + std::to_string(column);
  }

  void Complain(size_t offset, const std::string& path, const std::string& what) {
    errors_->push_back({offset, path.empty() ? what : path + ": " + what});
  }

  void Record(const std::string& path, size_t offset) {
    const auto [line, column] = source_.LineColumn(offset);
    locations_->Set(path, line, column);
  }

  // REQUIRES: value is not null.
  void FillField(const ConfigNode& value, Message* message, const FieldDescriptor* field,
                 const std::string& path) {
    if (field->is_map()) {
      FillMap(value, message, field, path);
      return;
    }
    if (field->is_repeated()) {
      if (value.kind != ConfigNode::Kind::kList) {
        Complain(value.offset, path, "expected a list, got " + Describe(value));
        return;
      }
      Record(path, value.offset);
      for (size_t i = 0; i < value.items.size(); ++i) {
        FillOne(value.items[i], message, field, IndexPath(path, std::to_string(i)),
                "null is not allowed in a list");
      }
      return;
    }
    FillOne(value, message, field, path, "");
  }

  // One value of `field`: the field itself, or an element of a repeated one.
  void FillOne(const ConfigNode& value, Message* message, const FieldDescriptor* field,
               const std::string& path, const std::string& null_complaint) {
    if (value.kind == ConfigNode::Kind::kNull) {
      Complain(value.offset, path, null_complaint);
      return;
    }
    const Reflection* reflection = message->GetReflection();
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (value.kind != ConfigNode::Kind::kMap) {
        Complain(value.offset, path, "expected a map of fields, got " + Describe(value));
        return;
      }
      Record(path, value.offset);
      FillMessage(value,
                  field->is_repeated() ? reflection->AddMessage(message, field)
                                       : reflection->MutableMessage(message, field),
                  path);
      return;
    }
    if (value.kind != ConfigNode::Kind::kScalar) {
      Complain(value.offset, path, Expected(field) + ", got " + Describe(value));
      return;
    }
    if (std::string complaint = SetScalar(message, field, value.text); !complaint.empty()) {
      Complain(value.offset, path, complaint);
      return;
    }
    Record(path, value.offset);
  }

  // A map<K, V> field, written as a map from keys to values. Paths are "field[key]".
  void FillMap(const ConfigNode& value, Message* message, const FieldDescriptor* field,
               const std::string& path) {
    if (value.kind != ConfigNode::Kind::kMap) {
      Complain(value.offset, path, "expected a map, got " + Describe(value));
      return;
    }
    Record(path, value.offset);
    const FieldDescriptor* key_field = field->message_type()->map_key();
    const FieldDescriptor* value_field = field->message_type()->map_value();
    std::map<std::string, size_t> seen;
    for (const ConfigEntry& entry : value.entries) {
      const std::string entry_path = IndexPath(path, Printable(entry.key));
      if (const auto [it, inserted] = seen.emplace(entry.key, entry.key_offset); !inserted) {
        Complain(entry.key_offset, entry_path, "duplicate key; first at " + LineColumn(it->second));
        continue;
      }
      Message* pair = message->GetReflection()->AddMessage(message, field);
      if (std::string complaint = SetScalar(pair, key_field, entry.key); !complaint.empty()) {
        Complain(entry.key_offset, entry_path, "invalid key: " + complaint);
        continue;
      }
      FillOne(entry.value, pair, value_field, entry_path, "null is not allowed as a map value");
    }
  }

  const SourceText& source_;
  ConfigLocations* locations_;
  std::vector<ConfigError>* errors_;
};

// ---- Protobuf text format
//
// TextFormat::Parser does the parsing. Its ParseInfoTree records where each field's *name*
// starts and one range for a whole "f: [a, b]" list, and its errors name neither the field's path
// nor the offending value's start, so a light walk over the tokens (guided by the descriptors, as
// the parser is) supplies value positions, paths and the context of each error.

struct TextToken {
  enum class Kind { kWord, kString, kPunct };
  Kind kind;
  size_t begin;
  size_t end;
  bool Is(char c, std::string_view text) const { return kind == Kind::kPunct && text[begin] == c; }
};

bool IsWordStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::vector<TextToken> TokenizeTextProto(std::string_view text) {
  std::vector<TextToken> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') {
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const size_t begin = i++;
      while (i < text.size() && text[i] != c && text[i] != '\n') i += text[i] == '\\' ? 2 : 1;
      i = std::min(text.size(), i + (i < text.size() && text[i] == c ? 1 : 0));
      tokens.push_back({TextToken::Kind::kString, begin, i});
    } else if (IsWordStart(c) ||
               (c == '.' && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9')) {
      const size_t begin = i++;
      const bool number = (c >= '0' && c <= '9') || c == '.';
      while (i < text.size() && (IsWordStart(text[i]) || text[i] == '.' ||
                                 (number && (text[i] == '+' || text[i] == '-') &&
                                  (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
        ++i;
      }
      tokens.push_back({TextToken::Kind::kWord, begin, i});
    } else {
      tokens.push_back({TextToken::Kind::kPunct, i, i + 1});
      ++i;
    }
  }
  return tokens;
}

// What the walk learned: every value of a known field, duplicated singular fields, and the
// context where it stopped.
struct TextWalk {
  struct Value {
    std::string path;
    const FieldDescriptor* field;
    size_t begin;
    size_t end;
  };
  struct Duplicate {
    std::string path;
    size_t offset;
    size_t first;
  };
  std::vector<Value> values;
  std::vector<Duplicate> duplicates;

  // At the stop: the field being written (its name, its path, the message type holding it) and
  // its value, either the one about to start at the stop or the last one read.
  const Descriptor* parent = nullptr;
  std::string name;
  size_t name_offset = 0;
  const FieldDescriptor* field = nullptr;
  std::string path;
  size_t value_begin = 0;
  size_t value_end = 0;
  bool pending = false;
};

// Walks `tokens` from the start until one begins at or after `stop`.
TextWalk WalkTextProto(std::string_view text, const std::vector<TextToken>& tokens,
                       const Descriptor* root, size_t stop) {
  struct Frame {
    bool is_list = false;
    const Descriptor* type = nullptr;  // Message frames; null inside unknown fields.
    std::string path;
    std::map<std::string, int> counts;  // Values so far of each repeated field.
    std::map<std::string, size_t> first;
  };
  struct Current {
    size_t frame = 0;  // The message frame holding the field.
    std::string name;
    size_t name_offset = 0;
    const FieldDescriptor* field = nullptr;
    std::string base;  // Path without the index.
  };
  enum class State { kName, kColon, kValue, kListElement, kListSeparator };

  TextWalk walk;
  std::vector<Frame> frames(1);
  frames[0].type = root;
  // The fields being written around the innermost frame, so that closing a frame restores them.
  std::vector<Current> currents(1);
  State state = State::kName;
  auto element_path = [&](bool consume) {
    const Current& current = currents.back();
    if (current.field == nullptr || !current.field->is_repeated()) return current.base;
    int& count = frames[current.frame].counts[current.name];
    const std::string path = IndexPath(current.base, std::to_string(count));
    if (consume) ++count;
    return path;
  };
  // Where the scalar value starting at token i ends (exclusive), or i if none starts there.
  auto scalar_end = [&](size_t i) {
    if (i >= tokens.size()) return i;
    if (tokens[i].Is('-', text)) {
      return i + 1 < tokens.size() && tokens[i + 1].kind == TextToken::Kind::kWord ? i + 2 : i;
    }
    if (tokens[i].kind == TextToken::Kind::kWord) return i + 1;
    if (tokens[i].kind != TextToken::Kind::kString) return i;
    while (i < tokens.size() && tokens[i].kind == TextToken::Kind::kString) ++i;
    return i;
  };
  auto record = [&](const std::string& path, size_t begin, size_t end) {
    walk.values.push_back({path, currents.back().field, begin, end});
    walk.path = path;
    walk.field = currents.back().field;
    walk.value_begin = begin;
    walk.value_end = end;
  };
  auto open_message = [&](size_t i) {
    const std::string path = element_path(true);
    record(path, tokens[i].begin, tokens[i].end);
    Frame frame;
    const FieldDescriptor* field = currents.back().field;
    frame.type = field != nullptr ? field->message_type() : nullptr;
    frame.path = path;
    frames.push_back(std::move(frame));
    currents.push_back({frames.size() - 1, "", 0, nullptr, ""});
    state = State::kName;
  };

  size_t i = 0;
  while (i < tokens.size() && tokens[i].begin < stop) {
    const TextToken& token = tokens[i];
    const bool opens_message = token.Is('{', text) || token.Is('<', text);
    switch (state) {
      case State::kName: {
        if (token.Is('}', text) || token.Is('>', text)) {
          if (frames.size() > 1 && !frames.back().is_list) {
            frames.pop_back();
            currents.pop_back();
            state = frames.back().is_list ? State::kListSeparator : State::kName;
          }
          ++i;
        } else if (token.kind == TextToken::Kind::kWord || token.Is('[', text)) {
          Current& current = currents.back();
          Frame& frame = frames[current.frame];
          current.name_offset = token.begin;
          if (token.kind == TextToken::Kind::kWord) {
            current.name = std::string(text.substr(token.begin, token.end - token.begin));
            ++i;
          } else {  // An extension or Any type URL: [full.name]
            size_t close = i;
            while (close < tokens.size() && !tokens[close].Is(']', text)) ++close;
            const size_t end = close < tokens.size() ? tokens[close].end : text.size();
            current.name = std::string(text.substr(token.begin, end - token.begin));
            i = std::min(close + 1, tokens.size());
          }
          current.field = frame.type != nullptr && token.kind == TextToken::Kind::kWord
                              ? frame.type->FindFieldByName(current.name)
                              : nullptr;
          current.base = FieldPath(frame.path, current.name);
          if (current.field != nullptr && !current.field->is_repeated()) {
            const auto [it, inserted] = frame.first.emplace(current.name, token.begin);
            if (!inserted) walk.duplicates.push_back({current.base, token.begin, it->second});
          }
          state = State::kColon;
        } else {
          ++i;  // ';' or ',' between fields, or something the parser reports.
        }
        break;
      }
      case State::kColon:
        state = State::kValue;
        if (token.Is(':', text)) ++i;
        break;
      case State::kValue: {
        const FieldDescriptor* field = currents.back().field;
        if (opens_message) {
          open_message(i++);
        } else if (token.Is('[', text) && (field == nullptr || field->is_repeated())) {
          record(currents.back().base, token.begin, token.end);
          Frame list;
          list.is_list = true;
          frames.push_back(std::move(list));
          state = State::kListElement;
          ++i;
        } else if (const size_t end = scalar_end(i); end > i) {
          record(element_path(true), token.begin, tokens[end - 1].end);
          i = end;
          state = State::kName;
        } else {
          state = State::kName;
        }
        break;
      }
      case State::kListElement:
      case State::kListSeparator: {
        if (token.Is(']', text)) {
          frames.pop_back();
          state = State::kName;
          ++i;
        } else if (token.Is(',', text)) {
          state = State::kListElement;
          ++i;
        } else if (opens_message) {
          open_message(i++);
        } else if (const size_t end = scalar_end(i); end > i) {
          record(element_path(true), token.begin, tokens[end - 1].end);
          i = end;
          state = State::kListSeparator;
        } else {
          ++i;
        }
        break;
      }
    }
  }

  const Current& current = currents.back();
  walk.parent = frames[current.frame].type;
  walk.name = current.name;
  walk.name_offset = current.name_offset;
  if (state == State::kColon || state == State::kValue || state == State::kListElement) {
    walk.pending = true;
    walk.field = current.field;
    walk.path = element_path(false);
    walk.value_begin = i < tokens.size() ? tokens[i].begin : text.size();
    const size_t end = scalar_end(i);
    walk.value_end = end > i ? tokens[end - 1].end : walk.value_begin;
  }
  return walk;
}

class TextErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  struct Report {
    int line;
    int column;
    std::string message;
    bool warning;
  };
  void AddError(int line, int column, const std::string& message) override {
    reports.push_back({line, column, message, false});
  }
  void AddWarning(int line, int column, const std::string& message) override {
    reports.push_back({line, column, message, true});
  }
  std::vector<Report> reports;
};

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The parser's own words, in our style: lower case, no final period, the end of the file named.
std::string PolishParserMessage(std::string message, bool at_end) {
  if (!message.empty() && message.back() == '.') message.pop_back();
  if (message.size() > 1 && message[0] >= 'A' && message[0] <= 'Z' && message[1] >= 'a' &&
      message[1] <= 'z') {
    message[0] = Lower(message[0]);
  }
  if (at_end && message.size() >= 5 && message.compare(message.size() - 5, 5, "got: ") == 0) {
    message.replace(message.size() - 5, 5, "got the end of the file");
  }
  if (at_end && message.size() >= 9 && message.compare(message.size() - 9, 9, "found \"\"") == 0) {
    message.replace(message.size() - 9, 9, "found the end of the file");
  }
  return message;
}

// "expected an integer, got '3.5'" and the like for a value the parser rejected.
std::string TextValueComplaint(const FieldDescriptor* field, std::string_view value,
                               const std::string& parser_message) {
  const bool quoted = !value.empty() && (value[0] == '"' || value[0] == '\'');
  const std::string shown = quoted ? std::string(value) : Quoted(value);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
    if (quoted) return Expected(field) + " (without quotes), got " + shown;
    return UnknownEnumValue(field->enum_type(), value);
  }
  const bool integer = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
                       field->cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                       field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32 ||
                       field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
  if (integer && StartsWith(parser_message, "Integer out of range")) {
    return OutOfRange(field, value);
  }
  return Expected(field) + ", got " + shown;
}

void ReadTextProto(const SourceText& source, Message* message, ConfigLocations* locations,
                   std::vector<ConfigError>* errors) {
  const std::string_view text = source.text();
  TextErrorCollector collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  // Unknown fields become warnings and the parse goes on, so all of them are reported.
  parser.AllowUnknownField(true);
  const bool parsed = parser.ParseFromString(std::string(text), message);

  const Descriptor* root = message->GetDescriptor();
  const std::vector<TextToken> tokens = TokenizeTextProto(text);
  size_t fatal = text.size() + 1;
  for (const TextErrorCollector::Report& report : collector.reports) {
    const size_t offset = source.OffsetOfTokenizerPosition(report.line, report.column);
    if (report.warning) {
      if (StartsWith(report.message, "Message type \"")) {
        const TextWalk walk = WalkTextProto(text, tokens, root, offset);
        errors->push_back(
            {walk.name_offset, walk.path + ": " + UnknownField(walk.parent, walk.name)});
      } else if (StartsWith(report.message, "Ignoring extension")) {
        errors->push_back({offset, PolishParserMessage(report.message, false)});
      }
      continue;
    }
    fatal = std::min(fatal, offset);
    // Reported below, with where the field was first set.
    if (StartsWith(report.message, "Non-repeated field")) continue;
    const TextWalk walk = WalkTextProto(text, tokens, root, offset);
    const bool after_value = StartsWith(report.message, "Unknown enumeration value") ||
                             StartsWith(report.message, "Invalid value for boolean field");
    const bool about_value = after_value || StartsWith(report.message, "Expected integer") ||
                             StartsWith(report.message, "Expected double") ||
                             StartsWith(report.message, "Expected string") ||
                             StartsWith(report.message, "Expected identifier") ||
                             StartsWith(report.message, "Integer out of range");
    const bool at_value =
        walk.pending || (offset >= walk.value_begin && offset < walk.value_end) || after_value;
    if (about_value && at_value && walk.field != nullptr &&
        walk.field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      const std::string_view value =
          text.substr(walk.value_begin, walk.value_end - walk.value_begin);
      errors->push_back({walk.value_begin,
                         walk.path + ": " + TextValueComplaint(walk.field, value, report.message)});
    } else {
      errors->push_back({offset, PolishParserMessage(report.message, offset >= text.size())});
    }
  }

  const TextWalk walk = WalkTextProto(text, tokens, root, text.size() + 1);
  for (const TextWalk::Duplicate& duplicate : walk.duplicates) {
    if (duplicate.offset >= fatal) continue;
    const auto [line, column] = source.LineColumn(duplicate.first);
    errors->push_back({duplicate.offset, duplicate.path + ": duplicate key; first at " +
                                             std::to_string(line) + ":" + std::to_string(column)});
  }
  if (!parsed) return;
  std::set<std::string> located;
  for (const TextWalk::Value& value : walk.values) {
    if (value.field == nullptr) continue;
    const std::string_view written = text.substr(value.begin, value.end - value.begin);
    // proto3 enums are open: the parser takes any number, but only named values are valid.
    if (value.field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM && !written.empty() &&
        (written[0] == '-' || (written[0] >= '0' && written[0] <= '9'))) {
      bool negative;
      uint64_t magnitude;
      bool overflow;
      bool named = false;
      if (ParseExactInteger(written, &negative, &magnitude, &overflow) && !overflow &&
          magnitude <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
        const int number = static_cast<int>(magnitude);
        named = value.field->enum_type()->FindValueByNumber(negative ? -number : number) != nullptr;
      }
      if (!named) {
        errors->push_back(
            {value.begin, value.path + ": " + UnknownEnumValue(value.field->enum_type(), written)});
        continue;
      }
    }
    const auto [line, column] = source.LineColumn(value.begin);
    // A repeated field is located at its first value, or at its list's '['.
    if (value.field->is_repeated() && !value.path.empty() && value.path.back() == ']') {
      const std::string base = value.path.substr(0, value.path.rfind('['));
      if (located.insert(base).second) locations->Set(base, line, column);
    }
    if (located.insert(value.path).second) locations->Set(value.path, line, column);
  }
}

}  // namespace

std::string ConfigLocations::Where(const std::string& field_path) const {
  const auto it = positions_.find(field_path);
  if (it == positions_.end()) return source_;
  return source_ + ":" + std::to_string(it->second.first) + ":" + std::to_string(it->second.second);
}

void ConfigLocations::Set(const std::string& field_path, int line, int column) {
  positions_[field_path] = {line, column};
}

Status ConfigFormatOf(const std::string& path, ConfigFormat* format) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  std::string extension = dot == std::string::npos ? "" : name.substr(dot);
  for (char& c : extension) c = Lower(c);
  if (extension == ".textproto" || extension == ".pbtxt" || extension == ".txtpb") {
    *format = ConfigFormat::kTextProto;
  } else if (extension == ".json") {
    *format = ConfigFormat::kJson;
  } else if (extension == ".yaml" || extension == ".yml") {
    *format = ConfigFormat::kYaml;
  } else {
    return Status::InvalidInput(path +
                                ": unknown configuration format; use .textproto, .pbtxt, .txtpb, "
                                ".json, .yaml or .yml");
  }
  return Status();
}

Status ParseConfig(std::string_view text, ConfigFormat format, const std::string& source,
                   google::protobuf::Message* message, ConfigLocations* locations) {
  message->Clear();
  if (StartsWith(text, "\xEF\xBB\xBF")) text.remove_prefix(3);  // A UTF-8 byte order mark.
  const SourceText source_text(text);
  ConfigLocations found;
  found.set_source(source);
  std::vector<ConfigError> errors;
  if (format == ConfigFormat::kTextProto) {
    ReadTextProto(source_text, message, &found, &errors);
  } else {
    ConfigNode root;
    ConfigError error;
    const bool read = format == ConfigFormat::kJson
                          ? config_internal::JsonReader(text).Read(&root, &error)
                          : config_internal::YamlReader(text).Read(&root, &error);
    if (read) {
      TreeFiller(source_text, &found, &errors).FillMessage(root, message, "");
    } else {
      errors.push_back(error);
    }
  }
  if (locations != nullptr) {
    *locations = ConfigLocations();
    locations->set_source(source);
  }
  if (errors.empty()) {
    if (locations != nullptr) *locations = std::move(found);
    return Status();
  }
  message->Clear();
  std::stable_sort(errors.begin(), errors.end(),
                   [](const ConfigError& a, const ConfigError& b) { return a.offset < b.offset; });
  std::string all;
  std::string previous;
  for (const ConfigError& error : errors) {
    const auto [line, column] = source_text.LineColumn(error.offset);
    const std::string one =
        source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + error.message;
    if (one == previous) continue;
    all += (all.empty() ? "" : "\n") + one;
    previous = one;
  }
  return Status::InvalidInput(all);
}

Status ReadConfigFile(const std::string& path, google::protobuf::Message* message,
                      ConfigLocations* locations) {
  ConfigFormat format;
  if (Status status = ConfigFormatOf(path, &format); !status.ok()) return status;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::InvalidInput(path + ": cannot read: " + std::strerror(errno));
  }
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) return Status::InvalidInput(path + ": cannot read: " + std::strerror(error));
  return ParseConfig(text, format, path, message, locations);
}

namespace {

void CollectScalarPaths(const Descriptor* type, const std::string& prefix,
                        std::vector<std::string>* paths) {
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      if (!field->is_repeated()) {
        CollectScalarPaths(field->message_type(), prefix + field->name() + ".", paths);
      }
    } else {
      paths->push_back(prefix + field->name());
    }
  }
}

}  // namespace

std::vector<std::string> ScalarFieldPaths(const Descriptor* type) {
  std::vector<std::string> paths;
  CollectScalarPaths(type, "", &paths);
  return paths;
}

Status SetFieldFromText(std::string_view path, std::string_view value, const std::string& where,
                        Message* message) {
  // Resolve the whole path before changing anything.
  std::vector<const FieldDescriptor*> fields;
  const Descriptor* type = message->GetDescriptor();
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    const FieldDescriptor* field = type == nullptr ? nullptr : type->FindFieldByName(part);
    const bool last = dot == std::string_view::npos;
    const bool nested = field != nullptr && field->type() == FieldDescriptor::TYPE_MESSAGE;
    if (field == nullptr || last == nested || (nested && field->is_repeated())) {
      const std::vector<std::string> paths = ScalarFieldPaths(message->GetDescriptor());
      const std::string best = ClosestName(path, paths);
      return Status::InvalidInput(where + ": unknown key; valid: " + JoinNames(paths) +
                                  (best.empty() ? "" : " (did you mean " + best + "?)"));
    }
    fields.push_back(field);
    if (last) break;
    type = field->message_type();
    start = dot + 1;
  }
  for (size_t i = 0; i + 1 < fields.size(); ++i) {
    message = message->GetReflection()->MutableMessage(message, fields[i]);
  }
  const FieldDescriptor* field = fields.back();
  const google::protobuf::Reflection* reflection = message->GetReflection();
  const std::string text(value);
  const bool repeated = field->is_repeated();
  auto invalid = [&](const char* kind, const std::string& help) {
    return Status::InvalidInput(where + ": invalid " + kind + " '" + text + "'; " + help);
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      repeated ? reflection->AddString(message, field, text)
               : reflection->SetString(message, field, text);
      return Status();
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t n = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      const bool is32 = field->cpp_type() == FieldDescriptor::CPPTYPE_INT32;
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
          (is32 && (n < INT32_MIN || n > INT32_MAX))) {
        return invalid("integer", "give a whole number, e.g. " + std::string(path) + "=4");
      }
      if (is32) {
        repeated ? reflection->AddInt32(message, field, static_cast<int32_t>(n))
                 : reflection->SetInt32(message, field, static_cast<int32_t>(n));
      } else {
        repeated ? reflection->AddInt64(message, field, n) : reflection->SetInt64(message, field, n);
      }
      return Status();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x)) {
        return invalid("number", "give a finite number, e.g. " + std::string(path) + "=2");
      }
      repeated ? reflection->AddDouble(message, field, x) : reflection->SetDouble(message, field, x);
      return Status();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (text != "true" && text != "false") return invalid("bool", "valid: true, false");
      repeated ? reflection->AddBool(message, field, text == "true")
               : reflection->SetBool(message, field, text == "true");
      return Status();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const std::vector<std::string> names = EnumValueNames(field->enum_type());
      const EnumValueDescriptor* e = field->enum_type()->FindValueByName(text);
      if (e == nullptr || std::find(names.begin(), names.end(), text) == names.end()) {
        return Status::InvalidInput(where + ": " + UnknownEnumValue(field->enum_type(), text));
      }
      repeated ? reflection->AddEnum(message, field, e) : reflection->SetEnum(message, field, e);
      return Status();
    }
    default:
      return Status::Internal(where + ": fields of this type cannot be set from text");
  }
}

}  // namespace ppsim
