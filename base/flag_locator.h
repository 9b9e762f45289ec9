// Where a request's fields were written on the command line: a field is its flag, underscores as
// dashes ("--layers-per-stage"), and a cluster setting "set.PATH" is "--set PATH". The one place
// that knows how flags are spelled; every layer below the CLI is given a Locator (base/locator.h).
#ifndef PPSIM_BASE_FLAG_LOCATOR_H_
#define PPSIM_BASE_FLAG_LOCATOR_H_

#include <string>
#include <string_view>

#include "base/locator.h"

namespace ppsim {

class FlagLocator : public Locator {
 public:
  std::string Where(std::string_view field) const override { return Name(field); }
  std::string Name(std::string_view field) const override;
};

}  // namespace ppsim

#endif  // PPSIM_BASE_FLAG_LOCATOR_H_
