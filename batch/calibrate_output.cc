// The outputs of `ppsim calibrate` (batch/calibrate.h): the calibration file, the table, JSON.
#include <cstdio>

#include "base/json.h"
#include "base/numbers.h"
#include "batch/calibrate.h"
#include "config/units.h"

namespace ppsim {
namespace {

std::string Significant(double value, int digits = 4) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

std::string Percent(double fraction) {
  char text[48];
  std::snprintf(text, sizeof(text), "%+.2f%%", 100 * fraction);
  return text;
}

// A measured or predicted value with its unit.
std::string MeasuredText(MeasuredKind kind, double value) {
  switch (kind) {
    case MeasuredKind::kIterationTime:
      return HumanDuration(value);
    case MeasuredKind::kPeakMemory:
      return HumanBytes(value);
    case MeasuredKind::kMfu:
      return Significant(value);
    case MeasuredKind::kTokensPerS:
      return Significant(value, 6) + " tok/s";
    case MeasuredKind::kSamplesPerS:
      return Significant(value, 6) + " seq/s";
  }
  return "";
}

std::string ParameterText(size_t p, double value) {
  if (CalibrationParameters()[p].applied == ParameterApplied::kMemoryReserve) {
    return HumanBytes(value);
  }
  return Significant(value, 6);
}

std::string Padded(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

int32_t DeterminedCount(const CalibrationResult& r) {
  int32_t n = 0;
  for (const ParameterFit& p : r.parameters) n += p.determined ? 1 : 0;
  return n;
}

std::string Summary(const CalibrationResult& r, size_t measurements) {
  return "calibration of " + r.gpu + " from " + std::to_string(measurements) +
         (measurements == 1 ? " measurement: " : " measurements: ") +
         std::to_string(DeterminedCount(r)) + " of " + std::to_string(r.parameters.size()) +
         " parameters determined, " + std::to_string(r.iterations) + " iterations" +
         (r.converged ? "" : " (not converged: stopped at the limit)") +
         (DeterminedCount(r) > 0 ? ", condition " + Significant(r.condition, 3) : "");
}

std::string ParameterRows(const CalibrationResult& r) {
  std::string out = Padded("parameter", 26) + Padded("preset", 12) + Padded("fitted", 12) + "\n";
  for (size_t p = 0; p < r.parameters.size(); ++p) {
    const ParameterFit& f = r.parameters[p];
    out += Padded(f.name, 26) + Padded(ParameterText(p, f.start), 12) +
           Padded(f.determined ? ParameterText(p, f.value) : "-", 12) +
           (f.determined ? (f.at_bound ? "at its bound" : "") : "undetermined: " + f.why) + "\n";
  }
  return out;
}

std::string MeasurementRows(const CalibrationResult& r, const std::vector<Measurement>& ms,
                            const OneRowValidation* validation) {
  size_t width = 12;
  for (const Measurement& m : ms) width = std::max(width, m.where.size() + 2);
  std::string out = Padded("measurement", width) + Padded("kind", 16) + Padded("measured", 14) +
                    Padded("before", 14) + Padded("after", 14) + Padded("residual", 10) +
                    (validation != nullptr ? "MAPE fitted on it alone" : "") + "\n";
  for (size_t i = 0; i < ms.size(); ++i) {
    const MeasurementFit& f = r.measurements[i];
    out += Padded(ms[i].where, width) + Padded(MeasuredKindName(ms[i].kind), 16) +
           Padded(MeasuredText(ms[i].kind, ms[i].value), 14) +
           Padded(MeasuredText(ms[i].kind, f.before), 14) +
           Padded(MeasuredText(ms[i].kind, f.after), 14) + Padded(Percent(f.residual), 10) +
           (validation != nullptr ? Percent(validation->mape[i]).substr(1) : "") + "\n";
  }
  return out;
}

}  // namespace

std::string CalibrationFileText(const CalibrationResult& result, const std::vector<Measurement>& ms,
                                const std::string& measurements_file) {
  std::string header = "# ppsim calibrate: " + Summary(result, ms.size()) + ".\n" +
                       "# Apply with --calibration FILE (ppsim run, sweep, search); --set and "
                       "--memory-reserve given explicitly win.\n" +
                       "# Residuals after the fit (predicted / measured - 1):\n";
  for (size_t i = 0; i < ms.size(); ++i) {
    header += "#   " + ms[i].where + " " + MeasuredKindName(ms[i].kind) + ": measured " +
              MeasuredText(ms[i].kind, ms[i].value) + ", predicted " +
              MeasuredText(ms[i].kind, result.measurements[i].after) + " (" +
              Percent(result.measurements[i].residual) + ")\n";
  }
  for (const ParameterFit& p : result.parameters) {
    if (!p.determined)
      header += "# Undetermined, left at the preset's: " + p.name + ": " + p.why + "\n";
  }
  proto::Calibration calibration = result.calibration.calibration;
  calibration.set_measurements(measurements_file);
  return CalibrationText(calibration, header);
}

std::string CalibrationTable(const CalibrationResult& result, const std::vector<Measurement>& ms,
                             const OneRowValidation* validation) {
  std::string out = Summary(result, ms.size()) + "\n\n" + ParameterRows(result) + "\n" +
                    MeasurementRows(result, ms, validation);
  if (validation != nullptr) {
    out += "\nfit on each measurement alone, predict the others: mean MAPE " +
           Percent(validation->mean_mape).substr(1) + "\n";
  }
  return out;
}

std::string CalibrationJson(const CalibrationResult& result, const std::vector<Measurement>& ms,
                            const OneRowValidation* validation) {
  nlohmann::ordered_json j;
  j["gpu"] = result.gpu;
  j["iterations"] = result.iterations;
  j["converged"] = result.converged;
  j["condition"] = JsonNumber(result.condition);
  nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
  for (const ParameterFit& p : result.parameters) {
    nlohmann::ordered_json o;
    o["name"] = p.name;
    o["start"] = JsonNumber(p.start);
    o["value"] = JsonNumber(p.value);
    o["determined"] = p.determined;
    o["at_bound"] = p.at_bound;
    if (!p.determined) o["why"] = p.why;
    parameters.push_back(o);
  }
  j["parameters"] = parameters;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < ms.size(); ++i) {
    nlohmann::ordered_json o;
    o["where"] = ms[i].where;
    o["run"] = ms[i].run;
    o["kind"] = MeasuredKindName(ms[i].kind);
    o["measured"] = JsonNumber(ms[i].value);
    o["before"] = JsonNumber(result.measurements[i].before);
    o["after"] = JsonNumber(result.measurements[i].after);
    o["residual"] = JsonNumber(result.measurements[i].residual);
    if (validation != nullptr) o["mape_fitted_alone"] = JsonNumber(validation->mape[i]);
    rows.push_back(o);
  }
  j["measurements"] = rows;
  if (validation != nullptr) j["mean_mape_fitted_alone"] = JsonNumber(validation->mean_mape);
  return FormatJsonPretty(j) + "\n";
}

}  // namespace ppsim
