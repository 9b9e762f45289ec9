#include "experiments/locators.h"

#include <algorithm>

namespace ppsim {
namespace {

constexpr std::string_view kSetPrefix = "set.";

}  // namespace

std::string FileLocator::Where(std::string_view field) const {
  if (point_ != nullptr) {
    for (size_t c = 0; c < plan_.columns.size(); ++c) {
      if (plan_.columns[c] == field) return point_->value_locations[c];
    }
  }
  if (field.starts_with(kSetPrefix)) {
    // The base's `set` entry for this path, when it has one.
    const std::string prefix = std::string(field.substr(kSetPrefix.size())) + "=";
    const auto& sets = plan_.experiment.base().set();
    for (int k = sets.size() - 1; k >= 0; --k) {
      if (sets.Get(k).rfind(prefix, 0) == 0) {
        const std::string path = "base.set[" + std::to_string(k) + "]";
        return plan_.locations.Where(path) + ": " + path;
      }
    }
    return plan_.locations.Where("base.set") + ": base.set";
  }
  const std::string path = "base." + std::string(field);
  return plan_.locations.Where(path) + ": " + path;
}

bool OverrideLocator::FromFlag(std::string_view field) const {
  for (const std::string& given : flag_fields_) {
    if (given == field) return true;
  }
  return false;
}

std::string OverrideLocator::Where(std::string_view field) const {
  return FromFlag(field) ? flags_.Where(field) : file_.Where(field);
}

std::string OverrideLocator::Name(std::string_view field) const {
  return FromFlag(field) ? flags_.Name(field) : file_.Name(field);
}

}  // namespace ppsim
