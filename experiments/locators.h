// Where a run request's fields were written in an experiment file, possibly with some given again
// elsewhere (the command line's locator is cli/flag_locator.h).
#ifndef PPSIM_EXPERIMENTS_LOCATORS_H_
#define PPSIM_EXPERIMENTS_LOCATORS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/locator.h"
#include "experiments/experiment.h"

namespace ppsim {

// An experiment file. A field of a sweep point is located at the value the point took when it
// swept the field ("e.yaml:5:39: axes[2].values[0]"), else where the base run sets it
// ("e.yaml:3:5: base.pp"), else at the file ("e.yaml: base.pp"). Names are the file's ("pp").
// REQUIRES: `plan` (and `point`, which may be null for the base run) outlive the locator.
class FileLocator : public Locator {
 public:
  FileLocator(const ExperimentPlan& plan, const SweepPoint* point) : plan_(plan), point_(point) {}
  std::string Where(std::string_view field) const override;
  std::string Name(std::string_view field) const override { return std::string(field); }

 private:
  const ExperimentPlan& plan_;
  const SweepPoint* point_;
};

// An experiment file's run with some fields given again elsewhere (`ppsim run FILE --pp 8`): those
// fields are located and named as `given` does, the others as `file` locates them. REQUIRES: `file`
// and `given` outlive the locator.
class OverrideLocator : public Locator {
 public:
  OverrideLocator(const Locator& file, const Locator& given, std::vector<std::string> flag_fields)
      : file_(file), flags_(given), flag_fields_(std::move(flag_fields)) {}
  std::string Where(std::string_view field) const override;
  std::string Name(std::string_view field) const override;

 private:
  bool FromFlag(std::string_view field) const;
  const Locator& file_;
  const Locator& flags_;
  std::vector<std::string> flag_fields_;
};

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_LOCATORS_H_
