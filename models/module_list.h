// Lists of Megatron module names (--recompute-modules, --offload-modules) as bit sets.
#ifndef PPSIM_MODELS_MODULE_LIST_H_
#define PPSIM_MODELS_MODULE_LIST_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/names.h"
#include "base/status.h"

namespace ppsim {

// Names separated by commas or spaces into the OR of their bits. Errors start with `what`: an
// unknown name (ParseNamed's message), a name listed twice, an empty list (listing the valid
// names).
template <size_t N>
Status ParseModuleList(const NamedValue<uint32_t> (&table)[N], std::string_view what,
                       std::string_view text, uint32_t* modules) {
  *modules = 0;
  std::string list(text);
  std::replace(list.begin(), list.end(), ',', ' ');
  size_t at = 0;
  while ((at = list.find_first_not_of(' ', at)) != std::string::npos) {
    const size_t end = std::min(list.find(' ', at), list.size());
    uint32_t module = 0;
    RETURN_IF_ERROR(
        ParseNamed(table, "module", what, std::string_view(list).substr(at, end - at), &module));
    if (*modules & module) {
      return Status::InvalidInput(std::string(what) + ": " + list.substr(at, end - at) +
                                  " is listed twice; give each module once");
    }
    *modules |= module;
    at = end;
  }
  if (*modules == 0) {
    std::string valid;
    for (const auto& entry : table) valid += (valid.empty() ? "" : ", ") + std::string(entry.name);
    return Status::InvalidInput(std::string(what) + ": empty; give one or more of " + valid);
  }
  return Status();
}

// The names of the bits set in `modules`, comma-separated in the table's order.
template <size_t N>
std::string ModuleListName(const NamedValue<uint32_t> (&table)[N], uint32_t modules) {
  std::string names;
  for (const auto& module : table) {
    if (modules & module.value) names += (names.empty() ? "" : ",") + std::string(module.name);
  }
  return names;
}

}  // namespace ppsim

#endif  // PPSIM_MODELS_MODULE_LIST_H_
