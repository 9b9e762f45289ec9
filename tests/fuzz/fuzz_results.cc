// Results files as ppsim reads them back: a results CSV (or a run's CSV) as `ppsim report` reads
// it (validated, charted, laid out as a page), a results CSV as `--resume` reads a journal (bad
// rows dropped), a run's CSV alone, and the same bytes as a JSON lines file (merge and resume).
#include <string>
#include <vector>

#include "report/html_report.h"
#include "batch/results.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = ppsim::fuzz::Text(data, size);
  std::string html;
  ppsim::fuzz::ExpectReadable(ppsim::RenderHtmlReport(text, "r.csv", &html), "r.csv");
  ppsim::ResultsTable table;
  std::vector<std::string> dropped;
  ppsim::fuzz::ExpectReadable(ppsim::ReadResultsCsv(text, "r.csv", &table, &dropped), "r.csv");
  ppsim::fuzz::ExpectReadable(ppsim::ReadRunCsv(text, "r.csv", &table), "r.csv");
  std::vector<std::string> axes;
  std::vector<ppsim::ResultJsonRow> rows;
  ppsim::fuzz::ExpectReadable(ppsim::ReadResultsJsonLines(text, "r.jsonl", &axes, &rows),
                              "r.jsonl");
  return 0;
}
