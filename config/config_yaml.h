// YAML read with yaml-cpp into the located document tree (config_tree.h). Internal to the
// configuration reader (config_file.cc).
//
// The whole of YAML 1.2 as yaml-cpp 0.7 reads it: block and flow collections, plain, quoted and
// block (| and >) scalars, comments, anchors (&name) and aliases (*name), tags (ignored: the proto
// field decides how a scalar is read), directives and "---" / "..." markers. Not supported: merge
// keys (<<), which yaml-cpp 0.7 reads as an ordinary key, and more than one document per file.
#ifndef PPSIM_CONFIG_CONFIG_YAML_H_
#define PPSIM_CONFIG_CONFIG_YAML_H_

#include <string_view>

#include "config/config_tree.h"

namespace ppsim::config_internal {

// The most values a document may hold once its aliases are expanded. An alias stands for a copy
// of the value it names, so a few lines of aliases of aliases could otherwise ask for billions.
inline constexpr size_t kMaxYamlValues = 1000000;

// Reads `text` (one YAML document; none is a null root) into *root. Plain ~, null, Null, NULL and
// empty values are null nodes; every other scalar, quoted "null" included, keeps its text.
// Returns false with *error at the first problem:
//   - yaml-cpp's syntax errors in its own words, at its mark ("illegal map value");
//   - a collection inside kMaxNesting others ("nested deeper than 100 levels"), also when aliases
//     make the document cyclic;
//   - a second document (at its "---");
//   - a key that is not a scalar, or a merge key;
//   - more than kMaxYamlValues values once aliases are expanded (at the document's start).
bool ReadYaml(std::string_view text, ConfigNode* root, ConfigError* error);

}  // namespace ppsim::config_internal

#endif  // PPSIM_CONFIG_CONFIG_YAML_H_
