// Where the fields of a request were written, so that a message about a field starts where the
// user can fix it: "--pp" for a command-line flag, "e.yaml:3:5: base.pp" for an experiment file.
//
// Fields are named as the run request (experiments/run_config.proto) names them: "pp",
// "layers_per_stage", and "set.PATH" for a cluster setting ("set.nic.bandwidth"). Code below the
// request layer never knows command-line flags: it asks its Locator.
#ifndef PPSIM_BASE_LOCATOR_H_
#define PPSIM_BASE_LOCATOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace ppsim {

class Locator {
 public:
  virtual ~Locator() = default;

  // The start of a message about `field`, without the ": " that follows it: "--pp", or
  // "e.yaml:3:5: base.pp", or "e.yaml: base.pp" when the file does not set it.
  virtual std::string Where(std::string_view field) const = 0;

  // How a message names `field` in a hint ("more with --nodes", "give i and w"): "--nodes" on
  // the command line, "nodes" in a file.
  virtual std::string Name(std::string_view field) const = 0;

  // InvalidInput "WHERE: what".
  Status Invalid(std::string_view field, std::string_view what) const {
    return Status::InvalidInput(Where(field) + ": " + std::string(what));
  }
};

// `text` with each "{field}" replaced by names.Name(field): a sentence about request fields written
// once for every way they are given ("groups of {microbatch_group_size}" -> "groups of
// --microbatch-group-size"). A "{" without a closing "}" stays as it is.
std::string NameFields(std::string_view text, const Locator& names);

// Names every field as it is ("pp"), for code that builds requests itself (presets, tests).
class FieldNames : public Locator {
 public:
  std::string Where(std::string_view field) const override { return std::string(field); }
  std::string Name(std::string_view field) const override { return std::string(field); }
};

// Another locator's places behind a prefix: the fields of a request written inside one value of a
// file ("m.yaml:3:10: run: " + "--tp"). Names are the inner locator's.
class PrefixLocator : public Locator {
 public:
  PrefixLocator(std::string prefix, std::shared_ptr<const Locator> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}
  std::string Where(std::string_view field) const override {
    return prefix_ + inner_->Where(field);
  }
  std::string Name(std::string_view field) const override { return inner_->Name(field); }

 private:
  std::string prefix_;
  std::shared_ptr<const Locator> inner_;
};

}  // namespace ppsim

#endif  // PPSIM_BASE_LOCATOR_H_
