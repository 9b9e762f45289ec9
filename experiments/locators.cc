#include "experiments/locators.h"

#include <algorithm>

namespace ppsim {
namespace {

constexpr std::string_view kSetPrefix = "set.";

}  // namespace

std::string ConfigLocator::Where(std::string_view field) const {
  if (field.starts_with(kSetPrefix)) {
    // The `set` entry for this path, when there is one.
    const std::string prefix = std::string(field.substr(kSetPrefix.size())) + "=";
    const auto& sets = config_.set();
    for (int k = sets.size() - 1; k >= 0; --k) {
      if (sets.Get(k).rfind(prefix, 0) == 0) {
        const std::string path = prefix_ + "set[" + std::to_string(k) + "]";
        return locations_.Where(path) + ": " + path;
      }
    }
    return locations_.Where(prefix_ + "set") + ": " + prefix_ + "set";
  }
  const std::string path = prefix_ + std::string(field);
  return locations_.Where(path) + ": " + path;
}

std::string FileLocator::Where(std::string_view field) const {
  if (point_ != nullptr) {
    for (size_t c = 0; c < plan_.columns.size(); ++c) {
      if (plan_.columns[c] == field) return point_->value_locations[c];
    }
  }
  return base_.Where(field);
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
