#include "interop/torch_schedule_csv.h"

#include <vector>

#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

bool IsCsvSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::string FormatScheduleTorchCsv(const Schedule& schedule) {
  std::string out;
  for (const auto& order : schedule.orders) {
    for (size_t i = 0; i < order.size(); ++i) {
      if (i > 0) out += ",";
      out += FormatAction(order[i]);
    }
    out += "\n";
  }
  return out;
}

Status ParseScheduleTorchCsv(std::string_view text, const std::string& source,
                             Schedule* schedule) {
  schedule->orders.clear();
  Status status = ForEachScheduleLine(text, [&](std::string_view line, size_t line_number) -> Status {
    if (IsBlankOrCommentLine(line)) return Status();
    std::vector<Action> order;
    size_t start = 0;
    while (true) {
      size_t end = line.find(',', start);
      if (end == std::string_view::npos) end = line.size();
      size_t b = start;
      size_t e = end;
      while (b < e && IsCsvSpace(line[b])) ++b;
      while (e > b && IsCsvSpace(line[e - 1])) --e;
      if (b < e) {  // An empty cell is a bubble slot.
        Action action;
        bool is_compute;
        RETURN_IF_ERROR(ParseScheduleWord(line.substr(b, e - b), source, line_number, b + 1,
                                          &action, &is_compute));
        if (is_compute) order.push_back(action);
      }
      if (end == line.size()) break;
      start = end + 1;
    }
    schedule->orders.push_back(std::move(order));
    return Status();
  });
  if (!status.ok()) return status;
  if (schedule->orders.empty()) {
    return Status::InvalidInput(source + ": no ranks; expected one CSV row per rank");
  }
  return FinishParsedSchedule(source, schedule);
}

}  // namespace ppsim
