// `ppsim report RESULTS.csv -o REPORT.html`: a sweep's results CSV (or a run's CSV) as one
// self-contained page.
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <filesystem>
#include <string>

#include "base/files.h"
#include "base/names.h"
#include "batch/journal.h"
#include "batch/results.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "report/html_report.h"
#include "report/report_about.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kReportUsage =
    "usage: ppsim report RESULTS.csv -o REPORT.html [--baseline POINT]";

constexpr const char* kReportHelp =
    "Writes one self-contained HTML page (no network references) from a sweep's results CSV or a\n"
    "'ppsim run --format csv' file: the best point that fits in memory, the swept axes (columns\n"
    "moving together are one), charts of throughput (tokens/s, else samples/s), MFU when known,\n"
    "peak memory against the GPU capacity and the bubble (bubble_over_makespan), points out of\n"
    "memory marked in each (lines over the first numeric axis that varies, one per combination of\n"
    "the other varying axes; bar charts when no numeric axis varies or no line would join two\n"
    "points), and the results table with rounded values. Its header says what was simulated and\n"
    "how: from RESULTS.about.json and RESULTS.jsonl beside a sweep's CSV (ppsim sweep writes\n"
    "them), from the columns of a run's CSV.\n";

// The header's facts: the about file and JSON lines beside a sweep's CSV, or a run CSV's columns.
Status ReadAbout(const std::string& input, const std::string& csv, ReportAbout* about) {
  std::string_view text = csv;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (text.starts_with("schedule,")) {
    SimulatedFromRunCsv(text, about);
    return Status();
  }
  std::error_code error;
  const std::string about_path = AboutPath(input);
  if (std::filesystem::exists(about_path, error)) {
    RETURN_IF_ERROR(ReadAboutFile(about_path, about));
  }
  const std::string lines_path = JsonLinesPath(input);
  if (std::filesystem::exists(lines_path, error)) {
    std::string lines;
    RETURN_IF_ERROR(ReadFile(lines_path, &lines, kMaxResultsBytes, "results"));
    SimulatedFromJsonLines(lines, about);
  }
  return Status();
}

}  // namespace

int ReportCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ppsim report options", 100);
  options.add_options()("output,o", po::value<std::string>()->value_name("REPORT.html"),
                        "where to write the page (required)")(
      "baseline", po::value<std::string>()->value_name("POINT"),
      "a point number (or a run CSV's schedule) to compare every point's throughput with: a "
      "speed-up chart (default: the experiment's baseline, when it names one)");
  ParsedArgs parsed;
  Status status = ParseArgs("report", args, options, 1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kReportUsage << "\n\n" << kReportHelp << "\n" << options;
    return kExitOk;
  }
  if (parsed.positional.empty()) {
    return Fail(err, Status::InvalidInput("ppsim report: missing RESULTS.csv; " +
                                          std::string(kReportUsage)));
  }
  if (OptionText(parsed, "output").empty()) {
    return Fail(err, Status::InvalidInput("ppsim report: missing -o REPORT.html; " +
                                          std::string(kReportUsage)));
  }
  const std::string& input = parsed.positional[0];
  const std::string output = OptionText(parsed, "output");
  status = CheckNotAnInput("-o", output, {input});
  if (!status.ok()) return Fail(err, status);
  std::string csv;
  status = ReadFile(input, &csv, kMaxResultsBytes, "results");
  if (!status.ok()) return Fail(err, status);
  ReportOptions report;
  status = ReadAbout(input, csv, &report.about);
  if (!status.ok()) return Fail(err, status);
  report.baseline = OptionText(parsed, "baseline");
  report.baseline_where = "--baseline";
  if (!parsed.values.count("baseline") && !report.about.baseline.empty()) {
    // The experiment's own (its sweep wrote it into the about file).
    report.baseline = report.about.baseline;
    report.baseline_where = AboutPath(input) + ": baseline";
  }
  std::string html;
  HtmlReportSummary summary;
  status = RenderHtmlReport(csv, input, report, &html, &summary);
  if (!status.ok()) return Fail(err, status);
  status = WriteWholeFile("", output, html);
  if (!status.ok()) return Fail(err, status);
  out << "wrote " << output << " (" << Plural(summary.points, "point") << ", "
      << Plural(summary.charts, "chart") << ")\n";
  return kExitOk;
}

}  // namespace ppsim::cli
