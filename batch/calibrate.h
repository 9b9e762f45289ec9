// `ppsim calibrate`: the analytic model's per-GPU parameters fitted to a user's measurements.
//
// Each measurement is a run (a `ppsim run` command) and one measured value. The fit changes only
// per-GPU parameters, the same for every run — the rows of CalibrationParameters(), each a cluster
// field a user could `--set`, a bandwidth scale, or the memory reserve — never a factor per row.
// It minimises the sum of squared relative residuals log(predicted / measured) by
// Levenberg-Marquardt within each parameter's bounds, with forward-difference Jacobians, every
// prediction a simulation of the run in this process with the engine the run names.
//
// Before fitting, the Jacobian at the start (the preset's values) says what the data determine:
// a parameter no measurement depends on, or one whose effect on the predictions is (within 0.1%)
// a combination of earlier parameters' (in table order), is undetermined: it keeps its preset
// value and the report says why, naming the combination the data determine instead.
#ifndef PPSIM_BATCH_CALIBRATE_H_
#define PPSIM_BATCH_CALIBRATE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/run.h"
#include "platforms/calibration.h"

namespace ppsim {

enum class MeasuredKind { kIterationTime, kTokensPerS, kSamplesPerS, kMfu, kPeakMemory };

// "iteration_time", ...: the field of batch/measurements.proto.
const char* MeasuredKindName(MeasuredKind kind);

// One measurement, read and resolved.
struct Measurement {
  std::string where;  // "m.yaml:3:5": the entry
  std::string run;    // as written
  RunSpec spec;       // the run, resolved, located "m.yaml:3:10: run: --tp"
  MeasuredKind kind = MeasuredKind::kIterationTime;
  double value = 0;  // seconds, per second, a fraction, or bytes
  std::string gpu;   // the run's GPU (its cluster's gpu.name)
};

// Turns the words of one `run:` string into a resolved run (what `ppsim run` does with its
// arguments; the CLI provides it), every message about a field starting with `prefix`
// ("m.yaml:3:10: run: " then "--tp: ...").
using RunWordsResolver = std::function<Status(const std::vector<std::string>& words,
                                              const std::string& prefix, RunSpec* spec)>;

// Reads a measurements file (batch/measurements.proto). Every problem of every entry is reported,
// one per line, located in the file: unknown fields, an entry without or with two measured values
// ("m.yaml:7:5: measurements[2]: gives both iteration_time and mfu; give exactly one"), a run
// string that does not split or resolve ("m.yaml:3:10: run: --tpp: unknown option; ..."), a value
// that does not parse or is not positive, and runs on more than one GPU (naming the entries).
Status ReadMeasurements(const std::string& path, const RunWordsResolver& resolve,
                        std::vector<Measurement>* measurements);

// How a fitted parameter reaches a run.
enum class ParameterApplied {
  kSet,            // a cluster field, `set` PATH=VALUE (platforms/cluster.proto)
  kScale,          // a bandwidth scale on the cluster's value (platforms/calibration.proto)
  kMemoryReserve,  // the run's memory_reserve, bytes
};

// One fitted parameter: a row of the table. Adding a per-GPU parameter to the model and to the
// fit is adding its row to CalibrationParameters() (calibrate.cc).
struct CalibrationParameter {
  const char* name;  // "gpu.matmul_efficiency": the set path or scaled path, or "memory_reserve"
  ParameterApplied applied;
  double lower, upper;  // bounds of the value
  double unit;          // the value's unit for the fit's steps and the report: 1, or 1 GiB
  // The MeasuredKinds it can change (bit 1 << kind); the others' Jacobian entries are 0.
  unsigned affects;
  // Its value on a cluster before calibration (the preset's, or the file's).
  double (*start)(const PlatformSpec& platform);
  const char* what;  // one line for the report's help
};
const std::vector<CalibrationParameter>& CalibrationParameters();

struct ParameterFit {
  std::string name;
  double start = 0;  // the preset's
  double value = 0;  // fitted, or the start when undetermined
  bool determined = false;
  bool at_bound = false;
  std::string why;  // undetermined: why, and the combination determined instead
};

struct MeasurementFit {
  double before = 0;    // predicted with the preset's values
  double after = 0;     // predicted with the fitted values (as the calibration file rounds them)
  double residual = 0;  // after / measured - 1
};

struct CalibrationResult {
  std::string gpu;
  std::vector<ParameterFit> parameters;      // in CalibrationParameters() order
  std::vector<MeasurementFit> measurements;  // in file order
  int32_t iterations = 0;
  // The fit ended at a minimum (no step lowers the cost, or it no longer decreases); false when it
  // stopped at its iteration limit (60).
  bool converged = false;
  double condition = 0;           // of the determined parameters' Jacobian (columns in their units)
  LoadedCalibration calibration;  // what to write: the determined parameters
};

// Fits `measurements` (REQUIRES: at least one, all on one GPU). InvalidInput, located at the
// entry, for a run whose prediction is not positive (mfu of a run without a model).
Status Calibrate(const std::vector<Measurement>& measurements, CalibrationResult* result);

// Fit on one alone, predict the others: for each measurement i, the calibration from i alone and
// its relative errors on the others.
struct OneRowValidation {
  std::vector<std::vector<double>> errors;  // [i][j]: |predicted_j / measured_j - 1|; [i][i] = 0
  std::vector<double> mape;                 // [i]: the mean over j != i
  double mean_mape = 0;
};
Status ValidateFromEachRow(const std::vector<Measurement>& measurements,
                           OneRowValidation* validation);

// Outputs. The calibration file: the fitted values as settings, with comment lines giving the
// measurements file, each measurement's residual and the undetermined parameters.
std::string CalibrationFileText(const CalibrationResult& result,
                                const std::vector<Measurement>& measurements,
                                const std::string& measurements_file);
std::string CalibrationTable(const CalibrationResult& result,
                             const std::vector<Measurement>& measurements,
                             const OneRowValidation* validation);
std::string CalibrationJson(const CalibrationResult& result,
                            const std::vector<Measurement>& measurements,
                            const OneRowValidation* validation);

}  // namespace ppsim

#endif  // PPSIM_BATCH_CALIBRATE_H_
