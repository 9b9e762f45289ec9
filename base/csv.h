// CSV as RFC 4180 has it: a field may be quoted with "", a quote inside one is doubled, and a
// quoted field may hold commas and line breaks. Records end at LF or CRLF outside quotes.
#ifndef PPSIM_BASE_CSV_H_
#define PPSIM_BASE_CSV_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string CsvField(std::string_view s);

struct CsvRecord {
  int64_t line = 0;  // the 1-based line the record starts on
  std::vector<std::string> fields;
};

// Splits `text` (read from `source`, named in messages) into records; a final line break ends
// the last record. InvalidInput "SOURCE:LINE: ..." for an unterminated quoted field, a quote
// inside an unquoted field, or text after a closing quote.
Status ReadCsv(std::string_view text, const std::string& source, std::vector<CsvRecord>* records);

}  // namespace ppsim

#endif  // PPSIM_BASE_CSV_H_
