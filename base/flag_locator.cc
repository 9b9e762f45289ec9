#include "base/flag_locator.h"

#include <algorithm>

namespace ppsim {

std::string FlagLocator::Name(std::string_view field) const {
  constexpr std::string_view kSetPrefix = "set.";
  if (field.starts_with(kSetPrefix)) return "--set " + std::string(field.substr(kSetPrefix.size()));
  std::string flag = "--" + std::string(field);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace ppsim
