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

// A run request read from a file of its own (a JSON body of run fields, say), or held at `prefix`
// in one ("base." in an experiment file): "F:1:9: pp", "F:3:5: base.set[1]", or "F: pp" when the
// field is not written. Names are the file's ("pp").
// REQUIRES: `config` and `locations` outlive the locator.
class ConfigLocator : public Locator {
 public:
  ConfigLocator(const proto::RunConfig& config, const ConfigLocations& locations,
                std::string prefix = "")
      : config_(config), locations_(locations), prefix_(std::move(prefix)) {}
  std::string Where(std::string_view field) const override;
  std::string Name(std::string_view field) const override { return std::string(field); }

 private:
  const proto::RunConfig& config_;
  const ConfigLocations& locations_;
  std::string prefix_;
};

// An experiment file. A field of a sweep point is located at the value the point took when it
// swept the field ("e.yaml:5:39: axes[2].values[0]"), else where the base run sets it
// ("e.yaml:3:5: base.pp"), else at the file ("e.yaml: base.pp"). Names are the file's ("pp").
// REQUIRES: `plan` (and `point`, which may be null for the base run) outlive the locator.
class FileLocator : public Locator {
 public:
  FileLocator(const ExperimentPlan& plan, const SweepPoint* point)
      : plan_(plan), point_(point), base_(plan.experiment.base(), plan.locations, "base.") {}
  std::string Where(std::string_view field) const override;
  std::string Name(std::string_view field) const override { return std::string(field); }

 private:
  const ExperimentPlan& plan_;
  const SweepPoint* point_;
  ConfigLocator base_;
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
