// Reading structured configuration files (profiles, models, clusters, experiments) into protobuf
// messages, from protobuf text format, JSON or YAML, with located errors.
//
// The format comes from the file name: .textproto, .pbtxt or .txtpb (protobuf text format), .json,
// .yaml or .yml. Field names are the proto's (snake_case); in JSON and YAML the lowerCamelCase
// json_name is accepted too. Every problem in the file is reported, one per line, in file order,
// each as
//   FILE:LINE:COL: FIELD.PATH: what is wrong; what is valid
// e.g. "p.yaml:3:5: stages[1].f_ms: unknown field; did you mean f_s?" or
// "m.json:2:12: mlp: unknown value 'SWIGLUE'; valid: GELU, SWIGLU (did you mean SWIGLU?)".
// A syntax error ends the reading (it is reported with the problems found before it); problems with
// values (types, ranges, unknown fields and enum values, duplicate keys) are all collected.
//
// JSON and YAML (read with yaml-cpp, see config_yaml.h) take the same values, by the rules of
// config_values.h, quoting never mattering except that a quoted "null" is a string:
//   messages  a map of fields; repeated fields a list; map<K, V> fields a map.
//   null      (YAML also ~ or nothing) leaves the field unset; it is an error inside a list.
// Their syntax errors are the readers' own: ours for JSON ("expected ',' or '}', got 'x'"),
// yaml-cpp's for YAML ("illegal map value").
//
// Text format is protobuf's own (TextFormat::Parser): its syntax, type, range and duplicate-field
// errors are protobuf's words ("m.textproto:1:9: Expected integer, got: 3.5"). On top of them:
// unknown fields get the did-you-mean message above, a proto3 enum written as a number must name
// a value, and a field without presence written twice is a duplicate even when its first value was
// the default (which protobuf cannot see).
//
// Positions are 1-based; columns count characters (UTF-8 code points, a tab being one).
#ifndef PPSIM_CONFIG_CONFIG_FILE_H_
#define PPSIM_CONFIG_CONFIG_FILE_H_

#include <google/protobuf/message.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "config/config_values.h"  // SetFieldFromText, SetScalarField, EnumValueNames

namespace ppsim {

enum class ConfigFormat { kTextProto, kJson, kYaml };

// Where each field of a parsed message was written, for messages about values that parse but are
// wrong (a negative time, say). Paths look like "stages[2].f_s" (repeated fields indexed from 0,
// nested fields joined with '.', map entries "field[key]" in JSON and YAML but "field[i]" in text
// format, where they are written as a repeated message), always with the proto's field names.
// Every value written is located: scalars, each message (at its '{' or first key), each element
// of a repeated field, and the repeated field itself (at its list, or its first element).
class ConfigLocations {
 public:
  // "FILE:LINE:COL" of the field's value (1-based), or "FILE" when the field was not written.
  std::string Where(const std::string& field_path) const;

  // Used by the readers.
  void Set(const std::string& field_path, int line, int column);
  void set_source(std::string source) { source_ = std::move(source); }

 private:
  std::string source_;
  std::map<std::string, std::pair<int, int>> positions_;
};

// The format of `path` from its extension (ignoring case); otherwise InvalidInput
// ("PATH: unknown configuration format; use .textproto, .pbtxt, .txtpb, .json, .yaml or .yml").
Status ConfigFormatOf(const std::string& path, ConfigFormat* format);

// Parses `text` (read from `source`, used in messages) into `message`, which is cleared first.
// A leading UTF-8 byte order mark is skipped. On failure returns InvalidInput whose message holds
// every error, one per line (no trailing newline), and leaves `message` cleared and `locations`
// without positions. `locations` may be null. Never throws or aborts; the same input gives the same
// result.
Status ParseConfig(std::string_view text, ConfigFormat format, const std::string& source,
                   google::protobuf::Message* message, ConfigLocations* locations);

// Configuration files are read up to 1 MiB: a parse of that takes under a second.
inline constexpr int64_t kMaxConfigBytes = 1 << 20;

// Reads the file at `path` and parses it by its extension, `path` being the source in messages.
// An unknown extension is reported before the file is opened; an unreadable file is InvalidInput
// ("PATH: cannot read: <strerror>").
Status ReadConfigFile(const std::string& path, google::protobuf::Message* message,
                      ConfigLocations* locations);

}  // namespace ppsim

#endif  // PPSIM_CONFIG_CONFIG_FILE_H_
