// JSON (RFC 8259) read into the located document tree (config_tree.h), keeping the offset of
// every value and key. Internal to the configuration reader (config_file.cc).
#ifndef PPSIM_CONFIG_CONFIG_JSON_H_
#define PPSIM_CONFIG_CONFIG_JSON_H_

#include <string_view>

#include "config/config_tree.h"

namespace ppsim::config_internal {

// Reads the whole of `text` as one JSON value into *root: numbers, true and false as scalars
// holding their text, null as a null node. Returns false with *error at the first syntax error
// (JSON cannot be read past one), e.g. "expected ',' or '}', got 'x'"; a collection nested
// kMaxNesting deep is one ("nested deeper than 100 levels").
bool ReadJson(std::string_view text, ConfigNode* root, ConfigError* error);

}  // namespace ppsim::config_internal

#endif  // PPSIM_CONFIG_CONFIG_JSON_H_
