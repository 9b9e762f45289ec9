// Protobuf text format read with protobuf's own parser (TextFormat::Parser), its errors located,
// and the checks it does not make. Internal to the configuration reader (config_file.cc).
#ifndef PPSIM_CONFIG_CONFIG_TEXTPROTO_H_
#define PPSIM_CONFIG_CONFIG_TEXTPROTO_H_

#include <google/protobuf/message.h>

#include <vector>

#include "config/config_file.h"
#include "config/config_tree.h"

namespace ppsim::config_internal {

// Parses `source`'s text into *message and appends every problem to *errors:
//   - protobuf's errors, verbatim, where protobuf reports them (the first ends the parse);
//   - each unknown field as "PATH.name: unknown field; did you mean X?" at its name, or protobuf's
//     warning verbatim when the field cannot be placed in a message (after a failed parse, inside
//     a message left open);
//   - when the parse succeeded: an enum written as a number no value has ("mlp: unknown value
//     '7'; valid: GELU, SWIGLU"), and a singular field written twice (protobuf misses it when the
//     first value was the default of a field without presence), "PATH: duplicate key; first at
//     L:C" at the second.
// Records in *locations where each value was written: a scalar at its first token (a negative
// number at its '-'), a message at its '{' or '<', a repeated field at its first value or '['.
// Messages nest at most kMaxNesting deep (protobuf's recursion limit).
void ReadTextProto(const SourceText& source, google::protobuf::Message* message,
                   ConfigLocations* locations, std::vector<ConfigError>* errors);

}  // namespace ppsim::config_internal

#endif  // PPSIM_CONFIG_CONFIG_TEXTPROTO_H_
