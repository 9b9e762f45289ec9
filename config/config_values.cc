#include "config/config_values.h"

#include <google/protobuf/reflection.h>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/names.h"

namespace ppsim {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;


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
    return ExpectedValue(field) + ", got " + Quoted(text);
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

// Appends the scalar field paths of `type` (see ScalarFieldPaths), each after `prefix`.
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

std::string ExpectedValue(const FieldDescriptor* field) {
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

std::string SetScalarField(Message* message, const FieldDescriptor* field, std::string_view text) {
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
      if (!ParseNumber(text, &value, &out_of_range)) {
        return ExpectedValue(field) + ", got " + Quoted(text);
      }
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
        return ExpectedValue(field) + ", got " + Quoted(text);
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
      if (value == nullptr) return UnknownName("value", text, EnumValueNames(field->enum_type()));
      add ? reflection->AddEnum(message, field, value) : reflection->SetEnum(message, field, value);
      return "";
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return ExpectedValue(field);
}

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
  // --set and experiment axes take finite numbers only; files may also write infinities.
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT ||
      field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
    double number = 0;
    bool out_of_range = false;
    if (ParseNumber(value, &number, &out_of_range) && !out_of_range && !std::isfinite(number)) {
      return Status::InvalidInput(where + ": expected a finite number, got " + Quoted(value));
    }
  }
  if (std::string complaint = SetScalarField(message, field, value); !complaint.empty()) {
    return Status::InvalidInput(where + ": " + complaint);
  }
  return Status();
}

}  // namespace ppsim
