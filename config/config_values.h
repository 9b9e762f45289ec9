// Configuration values as users write them, one set of rules for files (JSON, YAML) and command
// lines (--set, experiment axes): the one scalar setter, the paths --set takes, and the messages
// about unknown fields and values.
//
// Scalars, quoting never mattering:
//   integers  decimal; a whole number may be written 1e9 or 3.0 (not 3.5); range-checked.
//   floats    decimal or exponent notation; inf, Infinity, .inf, nan, NaN, .nan with a sign
//             (command lines take finite numbers only).
//   bools     true, True, TRUE, false, False, FALSE.
//   enums     a value's name, case-sensitive (not its number).
//   strings   as they are.
#ifndef PPSIM_CONFIG_CONFIG_VALUES_H_
#define PPSIM_CONFIG_CONFIG_VALUES_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// Sets `field` of `message` from `text` written by a user (for a repeated field, appends it).
// Returns "" when set, else the complaint, leaving `message` as it was: "expected an integer,
// got '3.5'", "expected an integer in [-2147483648, 2147483647], got '3000000000'", "'1e999' is
// out of range for a double", "expected true or false, got 'yes'", "unknown value 'SWIGLUE';
// valid: GELU, SWIGLU (did you mean SWIGLU?)". REQUIRES: `field` belongs to `message`'s type and
// is not a message field.
std::string SetScalarField(google::protobuf::Message* message,
                           const google::protobuf::FieldDescriptor* field, std::string_view text);

// What a value of `field` must be, as a complaint starts: "expected an integer", "expected a
// number", "expected true or false", "expected a string", "expected one of GELU, SWIGLU",
// "expected a map of fields".
std::string ExpectedValue(const google::protobuf::FieldDescriptor* field);

// The message for a field name `type` does not have: "unknown field; did you mean f_s?" when a
// name (or lowerCamelCase json_name) is close, else "unknown field; valid: f_s, i_s, ...".
std::string UnknownField(const google::protobuf::Descriptor* type, std::string_view given);

// The names of an enum's values a user may write, in declaration order: every value but a zero
// value whose name ends in UNSPECIFIED (only the proto3 default).
std::vector<std::string> EnumValueNames(const google::protobuf::EnumDescriptor* type);

// Every scalar field path of `type` ("gpu.memory", "nic.bandwidth", ...), nested messages joined
// with '.', in schema order. Repeated scalar fields are included; repeated messages are not.
std::vector<std::string> ScalarFieldPaths(const google::protobuf::Descriptor* type);

// Sets the scalar field at `path` (dot-separated, see ScalarFieldPaths) of `message` from `value`
// by SetScalarField's rules, but floating-point numbers must be finite; a repeated field gets
// `value` appended. Messages start with `where` (e.g. "--set nic.bandwidth"): "unknown key;
// valid: ... (did you mean ...?)", "expected an integer, got 'x'", "expected a finite number, got
// 'inf'", "unknown value 'X'; valid: ...".
Status SetFieldFromText(std::string_view path, std::string_view value, const std::string& where,
                        google::protobuf::Message* message);

}  // namespace ppsim

#endif  // PPSIM_CONFIG_CONFIG_VALUES_H_
