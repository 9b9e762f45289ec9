// ReadMeasurements (batch/calibrate.h): the measurements file, each entry's run and value.
#include <map>

#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "base/shell_words.h"
#include "batch/calibrate.h"
#include "batch/measurements.pb.h"
#include "config/config_file.h"
#include "config/units.h"
#include "platforms/cluster.h"

namespace ppsim {
namespace {

// The one measured value of entry `m`, or an error naming what is wrong at `where`.
Status MeasuredValue(const proto::Measurement& m, const ConfigLocations& locations,
                     const std::string& path, Measurement* out) {
  std::vector<std::string> given;
  if (!m.iteration_time().empty()) given.push_back("iteration_time");
  if (m.has_tokens_per_s()) given.push_back("tokens_per_s");
  if (m.has_samples_per_s()) given.push_back("samples_per_s");
  if (m.has_mfu()) given.push_back("mfu");
  if (!m.peak_memory().empty()) given.push_back("peak_memory");
  if (given.size() != 1) {
    const std::string valid = "iteration_time, tokens_per_s, samples_per_s, mfu or peak_memory";
    return Status::InvalidInput(
        locations.Where(path) + ": " + path + ": " +
        (given.empty() ? "no measured value; give one of " + valid
                       : "gives both " + given[0] + " and " + given[1] + "; give exactly one"));
  }
  const std::string field = path + "." + given[0];
  const std::string at = locations.Where(field) + ": " + field;
  if (given[0] == "iteration_time") {
    out->kind = MeasuredKind::kIterationTime;
    RETURN_IF_ERROR(ParseDuration(at, m.iteration_time(), &out->value));
  } else if (given[0] == "peak_memory") {
    out->kind = MeasuredKind::kPeakMemory;
    int64_t bytes = 0;
    RETURN_IF_ERROR(ParseSize(at, m.peak_memory(), &bytes));
    out->value = static_cast<double>(bytes);
  } else {
    out->kind = given[0] == "mfu"            ? MeasuredKind::kMfu
                : given[0] == "tokens_per_s" ? MeasuredKind::kTokensPerS
                                             : MeasuredKind::kSamplesPerS;
    out->value = m.has_mfu()            ? m.mfu()
                 : m.has_tokens_per_s() ? m.tokens_per_s()
                                        : m.samples_per_s();
  }
  if (!(out->value > 0 && out->value < 1e30) ||
      (out->kind == MeasuredKind::kMfu && out->value > 1)) {
    return Status::InvalidInput(at + ": " + Printable(FormatNumber(out->value)) +
                                (out->kind == MeasuredKind::kMfu
                                     ? " is not a fraction of peak; give a value in (0, 1]"
                                     : " is not a measured value; give a positive one"));
  }
  return Status();
}

// The run of entry `m`: split, resolved and its GPU found.
Status MeasuredRun(const proto::Measurement& m, const ConfigLocations& locations,
                   const std::string& path, const RunWordsResolver& resolve, Measurement* out) {
  const std::string at = locations.Where(path + ".run") + ": run: ";
  if (m.run().empty()) {
    return Status::InvalidInput(locations.Where(path) + ": " + path +
                                ": run: required; the arguments of the `ppsim run` command "
                                "measured, e.g. run: \"--model llama3-8b --tp 8 ...\"");
  }
  out->run = m.run();
  std::vector<std::string> words;
  Status status = SplitShellWords(m.run(), &words);
  if (status.ok()) {
    status = resolve(words, at, &out->spec);
  }
  if (!status.ok()) {
    const std::string& message = status.message();
    return status.WithMessage(message.starts_with(at) ? message : at + message);
  }
  if (!out->spec.platform.calibration_file.empty()) {
    return Status::InvalidInput(out->spec.where->Where("calibration") +
                                ": a measured run is fitted from the preset's values; remove it");
  }
  PlatformSpec platform;
  RETURN_IF_ERROR(LoadCluster(out->spec.platform, *out->spec.where, &platform));
  out->gpu = platform.gpu.name;
  return Status();
}

// InvalidInput when the measurements are of more than one GPU, naming each GPU's entries.
Status OneGpu(const std::string& path, const std::vector<Measurement>& measurements) {
  std::map<std::string, std::string> entries;  // GPU -> "m.yaml:2:5, m.yaml:4:5"
  std::vector<std::string> order;
  for (const Measurement& m : measurements) {
    std::string& list = entries[m.gpu];
    if (list.empty()) order.push_back(m.gpu);
    list += (list.empty() ? "" : ", ") + m.where;
  }
  if (order.size() <= 1) return Status();
  std::string text;
  for (const std::string& gpu : order) {
    text += (text.empty() ? "" : "; ") + Printable(gpu) + " (" + entries[gpu] + ")";
  }
  return Status::InvalidInput(path + ": measurements on " + std::to_string(order.size()) +
                              " GPUs: " + text +
                              "; a calibration is of one GPU: give each GPU a file of its own");
}

}  // namespace

const char* MeasuredKindName(MeasuredKind kind) {
  switch (kind) {
    case MeasuredKind::kIterationTime:
      return "iteration_time";
    case MeasuredKind::kTokensPerS:
      return "tokens_per_s";
    case MeasuredKind::kSamplesPerS:
      return "samples_per_s";
    case MeasuredKind::kMfu:
      return "mfu";
    case MeasuredKind::kPeakMemory:
      return "peak_memory";
  }
  return "";
}

Status ReadMeasurements(const std::string& path, const RunWordsResolver& resolve,
                        std::vector<Measurement>* measurements) {
  measurements->clear();
  proto::Measurements file;
  ConfigLocations locations;
  RETURN_IF_ERROR(ReadConfigFile(path, &file, &locations));
  if (file.measurements().empty()) {
    return Status::InvalidInput(path +
                                ": measurements: none; give a list of entries, each a run "
                                "and one measured value");
  }
  ErrorList errors;
  for (int i = 0; i < file.measurements_size(); ++i) {
    const std::string entry = "measurements[" + std::to_string(i) + "]";
    Measurement m;
    m.where = locations.Where(entry);
    Status status = MeasuredValue(file.measurements(i), locations, entry, &m);
    if (status.ok()) status = MeasuredRun(file.measurements(i), locations, entry, resolve, &m);
    errors.Check(status);
    if (status.ok()) measurements->push_back(std::move(m));
  }
  RETURN_IF_ERROR(errors.ToStatus());
  return OneGpu(path, *measurements);
}

}  // namespace ppsim
