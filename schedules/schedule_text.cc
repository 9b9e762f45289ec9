#include "schedules/schedule_text.h"

#include <functional>
#include <vector>

namespace ppsim {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string Where(const std::string& source, size_t line, size_t col) {
  return source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
}

}  // namespace

Status ForEachScheduleLine(std::string_view text,
                           const std::function<Status(std::string_view, size_t)>& fn) {
  size_t line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_number;
    RETURN_IF_ERROR(fn(text.substr(start, end - start), line_number));
    if (end == text.size()) break;
    start = end + 1;
  }
  return Status();
}

namespace {

// Prefixes a message that does not already name the file with "source: ".
Status WithSource(const std::string& source, Status status) {
  if (status.ok() || status.message().rfind(source + ":", 0) == 0) return status;
  return Status::InvalidInput(source + ": " + status.message());
}

// torch's communication and bookkeeping actions (compute+comms format): `0SEND_F1`, `1RECV_B0`,
// `2UNSHARD`, `0REDUCE_GRAD`. They do not change the compute order.
bool IsBookkeepingAction(std::string_view token) {
  size_t i = 0;
  while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
  if (i == 0 || i > 9) return false;
  const std::string_view rest = token.substr(i);
  for (std::string_view kind : {"SEND_F", "RECV_F", "SEND_B", "RECV_B"}) {
    if (rest.substr(0, kind.size()) != kind) continue;
    const std::string_view microbatch = rest.substr(kind.size());
    return !microbatch.empty() && microbatch.size() <= 9 &&
           microbatch.find_first_not_of("0123456789") == std::string_view::npos;
  }
  return rest == "UNSHARD" || rest == "RESHARD" || rest == "REDUCE_GRAD";
}

}  // namespace

Status ParseScheduleWord(std::string_view word, const std::string& source, size_t line,
                         size_t col, Action* action, bool* is_compute) {
  *is_compute = !IsBookkeepingAction(word);
  if (!*is_compute) return Status();
  size_t offset = 0;
  Status status = ParseAction(word, action, &offset);
  if (!status.ok()) return Status::InvalidInput(Where(source, line, col + offset) + status.message());
  return Status();
}

bool IsBlankOrCommentLine(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsSpace(line[i])) ++i;
  return i == line.size() || line[i] == '#';
}

Status FinishParsedSchedule(const std::string& source, Schedule* schedule) {
  return WithSource(source, InferScheduleShape(schedule));
}

std::string FormatScheduleText(const Schedule& schedule) {
  std::string out;
  for (size_t rank = 0; rank < schedule.orders.size(); ++rank) {
    out += "rank " + std::to_string(rank) + ":";
    for (const Action& action : schedule.orders[rank]) out += " " + FormatAction(action);
    out += "\n";
  }
  return out;
}

Status ParseScheduleText(std::string_view text, const std::string& source, Schedule* schedule) {
  schedule->orders.clear();
  Status status = ForEachScheduleLine(text, [&](std::string_view line, size_t line_number) -> Status {
    if (IsBlankOrCommentLine(line)) return Status();
    size_t pos = 0;
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    const std::string expected_rank = "rank " + std::to_string(schedule->orders.size()) + ":";
    if (line.substr(pos, expected_rank.size()) != expected_rank) {
      return Status::InvalidInput(Where(source, line_number, pos + 1) + "expected '" +
                                  expected_rank + "'; each line is 'rank <r>: <actions>' with " +
                                  "ranks in order from 0");
    }
    pos += expected_rank.size();
    std::vector<Action> order;
    while (true) {
      while (pos < line.size() && IsSpace(line[pos])) ++pos;
      if (pos == line.size()) break;
      size_t end = pos;
      while (end < line.size() && !IsSpace(line[end])) ++end;
      Action action;
      bool is_compute;
      RETURN_IF_ERROR(ParseScheduleWord(line.substr(pos, end - pos), source, line_number, pos + 1,
                                        &action, &is_compute));
      if (is_compute) order.push_back(action);
      pos = end;
    }
    schedule->orders.push_back(std::move(order));
    return Status();
  });
  if (!status.ok()) return status;
  if (schedule->orders.empty()) {
    return Status::InvalidInput(source + ": no ranks; expected lines 'rank <r>: <actions>'");
  }
  return FinishParsedSchedule(source, schedule);
}

}  // namespace ppsim
