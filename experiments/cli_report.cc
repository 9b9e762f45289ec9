// `ppsim report RESULTS.csv -o REPORT.html`: a sweep's results CSV as one self-contained HTML page.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "experiments/cli_flags.h"
#include "experiments/html_report.h"
#include "base/files.h"

namespace ppsim::cli {
namespace {

constexpr const char* kReportUsage = "usage: ppsim report RESULTS.csv -o REPORT.html";

constexpr const char* kReportHelp =
    "usage: ppsim report RESULTS.csv -o REPORT.html\n"
    "\n"
    "Writes one self-contained HTML page (no network references) from a sweep's results CSV: the\n"
    "swept axes, charts of makespan, bubble over makespan and peak memory (lines over the first\n"
    "numeric axis that varies, one per combination of the other varying axes; bar charts when no\n"
    "numeric axis varies or no line would join two points), and the whole results table.\n"
    "\n"
    "options:\n"
    "  -o, --output REPORT.html   where to write the page (required)\n"
    "  -h, --help                 this text\n";

Status ReadWholeFile(const std::string& path, std::string* text) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::InvalidInput(path + ": cannot read: " + std::strerror(errno));
  }
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text->append(buffer, n);
  const int error = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (error != 0) return Status::InvalidInput(path + ": cannot read: " + std::strerror(error));
  return Status();
}

std::string Plural(int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

int ReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string input;
  std::string output;
  bool have_output = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out << kReportHelp;
      return kExitOk;
    }
    if (a == "-o" || a == "--output") {
      if (have_output) return Usage(err, "ppsim report: " + a + " given twice; " + kReportUsage);
      if (i + 1 == args.size() || args[i + 1].empty()) {
        return Usage(err, "ppsim report: " + a + " needs a file name; " + kReportUsage);
      }
      output = args[++i];
      have_output = true;
    } else if (a.rfind("--output=", 0) == 0) {
      if (have_output)
        return Usage(err, "ppsim report: --output given twice; " + std::string(kReportUsage));
      output = a.substr(9);
      if (output.empty()) {
        return Usage(err, "ppsim report: --output needs a file name; " + std::string(kReportUsage));
      }
      have_output = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return Usage(err, "ppsim report: unknown option '" + a + "'; " + kReportUsage);
    } else if (input.empty()) {
      input = a;
      if (input.empty())
        return Usage(err, std::string("ppsim report: empty file name; ") + kReportUsage);
    } else {
      return Usage(err, "ppsim report: unexpected argument '" + a + "'; " + kReportUsage);
    }
  }
  if (input.empty())
    return Usage(err, std::string("ppsim report: missing RESULTS.csv; ") + kReportUsage);
  if (!have_output)
    return Usage(err, std::string("ppsim report: missing -o REPORT.html; ") + kReportUsage);

  std::string csv;
  Status status = ReadWholeFile(input, &csv);
  if (!status.ok()) return Fail(err, status);
  std::string html;
  HtmlReportSummary summary;
  status = RenderHtmlReport(csv, input, &html, &summary);
  if (!status.ok()) return Fail(err, status);
  status = WriteWholeFile("", output, html);
  if (!status.ok()) return Fail(err, status);
  out << "wrote " << output << " (" << Plural(summary.points, "point") << ", "
      << Plural(summary.charts, "chart") << ")\n";
  return kExitOk;
}

}  // namespace ppsim::cli
