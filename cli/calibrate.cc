// `ppsim calibrate MEASUREMENTS -o CALIBRATION.textproto`: the analytic model's per-GPU
// parameters fitted to a user's measurements (batch/calibrate.h).
#include "batch/calibrate.h"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "base/files.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage =
    "usage: ppsim calibrate MEASUREMENTS.yaml [-o CALIBRATION.textproto] [--format table|json]\n"
    "                       [--fit-one-predict-rest]\n"
    "\n"
    "Fits the analytic model's per-GPU parameters (never a factor per measurement) to measured\n"
    "runs by least squares on log(predicted / measured), simulating every run. MEASUREMENTS:\n"
    "  measurements:\n"
    "    - run: \"--model llama3-70b --platform dgx-h100 --nodes 8 --tp 8 --pp 4 ...\"\n"
    "      iteration_time: 7.4s   # or tokens_per_s, samples_per_s, mfu (0.41), peak_memory "
    "(71.3GiB)\n"
    "All runs on one GPU. Parameters no measurement determines keep the preset's value and are\n"
    "reported as undetermined. Apply the file with --calibration FILE (run, sweep, search);\n"
    "--set and --memory-reserve given explicitly win over it.\n\n";

po::options_description CalibrateOptions() {
  po::options_description options("ppsim calibrate options", 100);
  options.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                        "write the calibration (.textproto) for --calibration")(
      "format", po::value<std::string>()->value_name("NAME"), "table (default) or json")(
      "fit-one-predict-rest",
      "also fit on each measurement alone and predict the others: their mean absolute "
      "percentage error (how well one measured run of a setup predicts the rest)");
  return options;
}

// The fitted parameters, one line each, for --help.
std::string FittedParameters() {
  std::string text = "\nFitted parameters (per GPU):\n";
  for (const CalibrationParameter& p : CalibrationParameters()) {
    text += std::string("  ") + p.name + ": " + p.what + "\n";
  }
  return text;
}

// The folder of `path` for its relative paths: "" or ending in '/'.
std::string FolderOf(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return folder.empty() ? "" : folder + "/";
}

int Calibrate(const std::string& path, const ParsedArgs& parsed, std::ostream& out,
              std::ostream& err) {
  const std::string format = parsed.values.count("format") ? OptionText(parsed, "format") : "table";
  if (format != "table" && format != "json") {
    return Fail(
        err, Status::InvalidInput("--format: unknown format '" + format + "'; valid: table, json"));
  }
  const std::string output = OptionText(parsed, "output");
  Status status = output.empty() ? Status() : CheckNotAnInput("-o", output, {path});
  std::vector<Measurement> measurements;
  const std::string folder = FolderOf(path);
  auto resolve = [&folder](const std::vector<std::string>& words, const std::string& prefix,
                           RunSpec* spec) { return ResolveRunWords(words, prefix, folder, spec); };
  if (status.ok()) status = ReadMeasurements(path, resolve, &measurements);
  CalibrationResult result;
  if (status.ok()) status = ppsim::Calibrate(measurements, &result);
  OneRowValidation validation;
  const bool validate = parsed.values.count("fit-one-predict-rest") > 0;
  if (status.ok() && validate) status = ValidateFromEachRow(measurements, &validation);
  if (status.ok() && !output.empty()) {
    status = WriteWholeFile("-o", output, CalibrationFileText(result, measurements, path));
  }
  if (!status.ok()) return Fail(err, status);
  const OneRowValidation* shown = validate ? &validation : nullptr;
  out << (format == "json" ? CalibrationJson(result, measurements, shown)
                           : CalibrationTable(result, measurements, shown));
  if (!output.empty() && format == "table") out << "\nwrote " << output << "\n";
  return kExitOk;
}

}  // namespace

int CalibrateCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = CalibrateOptions();
  ParsedArgs parsed;
  Status status = ParseArgs("calibrate", args, options, 1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kUsage << options << FittedParameters();
    return kExitOk;
  }
  if (parsed.positional.empty()) {
    return Fail(err, Status::InvalidInput("ppsim calibrate: give the measurements file; see "
                                          "'ppsim calibrate --help'"));
  }
  return Calibrate(parsed.positional[0], parsed, out, err);
}

}  // namespace ppsim::cli
