#include "base/csv.h"

namespace ppsim {
namespace {

bool AtLineEnd(std::string_view text, size_t i) {
  return text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n'));
}

}  // namespace

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

Status ReadCsv(std::string_view text, const std::string& source, std::vector<CsvRecord>* records) {
  auto where = [&](int64_t line) { return source + ":" + std::to_string(line) + ": "; };
  size_t i = 0;
  int64_t line = 1;
  while (i < text.size()) {
    CsvRecord record;
    record.line = line;
    while (true) {
      std::string field;
      const size_t column = record.fields.size() + 1;
      if (i < text.size() && text[i] == '"') {
        const int64_t quote_line = line;
        ++i;
        while (true) {
          if (i >= text.size()) {
            return Status::InvalidInput(where(quote_line) +
                                        "unterminated quoted field; a quoted field ends with \" "
                                        "and a quote inside it is written \"\"");
          }
          const char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < text.size() && text[i] != ',' && !AtLineEnd(text, i)) {
          return Status::InvalidInput(
              where(line) + "'" + std::string(1, text[i]) + "' after the closing quote of field " +
              std::to_string(column) + "; a quoted field ends at a comma or the end of the line");
        }
      } else {
        while (i < text.size() && text[i] != ',' && !AtLineEnd(text, i)) {
          if (text[i] == '"') {
            return Status::InvalidInput(where(line) + "quote inside unquoted field " +
                                        std::to_string(column) +
                                        "; quote the whole field and double the quotes in it");
          }
          field += text[i++];
        }
      }
      record.fields.push_back(std::move(field));
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == '\r') ++i;
      if (i < text.size() && text[i] == '\n') {
        ++i;
        ++line;
      }
      break;
    }
    records->push_back(std::move(record));
  }
  return Status();
}

}  // namespace ppsim
