// Results CSVs as `ppsim report` reads them (validated, charted, laid out as a page).
#include <string>

#include "experiments/html_report.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string html;
  ppsim::fuzz::ExpectReadable(
      ppsim::RenderHtmlReport(ppsim::fuzz::Text(data, size), "r.csv", &html), "r.csv");
  return 0;
}
