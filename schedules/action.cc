#include "schedules/action.h"

#include <limits>

#include "base/escape.h"

namespace ppsim {
namespace {

constexpr std::string_view kValidActions =
    "expected <stage><F|I|B|W>[<microbatch>] or (<a>;<b>)OVERLAP_F_B";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads a run of digits at text[*pos] into *value. False when there is none or it overflows int32.
bool ReadNumber(std::string_view text, size_t* pos, int32_t* value) {
  size_t start = *pos;
  int64_t v = 0;
  while (*pos < text.size() && IsDigit(text[*pos])) {
    v = v * 10 + (text[*pos] - '0');
    if (v > std::numeric_limits<int32_t>::max()) return false;
    ++*pos;
  }
  *value = static_cast<int32_t>(v);
  return *pos > start;
}

bool KindFromLetter(char c, OpKind* kind) {
  switch (c) {
    case 'F': *kind = OpKind::kForward; return true;
    case 'I': *kind = OpKind::kBackwardInput; return true;
    case 'W': *kind = OpKind::kBackwardWeight; return true;
    case 'B': *kind = OpKind::kBackward; return true;
    default: return false;
  }
}

// Parses "<stage><kind><microbatch>" that spans all of `text`.
bool ParseOp(std::string_view text, Op* op) {
  size_t pos = 0;
  int32_t stage = 0;
  int32_t microbatch = 0;
  if (!ReadNumber(text, &pos, &stage)) return false;
  if (pos >= text.size() || !KindFromLetter(text[pos], &op->kind)) return false;
  ++pos;
  if (!ReadNumber(text, &pos, &microbatch) || pos != text.size()) return false;
  op->stage = StageIndex(stage);
  op->microbatch = MicrobatchIndex(microbatch);
  return true;
}

Status Invalid(std::string_view text) {
  return Status::InvalidInput("invalid action " + Quoted(text) + "; " +
                              std::string(kValidActions));
}

}  // namespace

char OpKindLetter(OpKind kind) {
  switch (kind) {
    case OpKind::kForward: return 'F';
    case OpKind::kBackwardInput: return 'I';
    case OpKind::kBackwardWeight: return 'W';
    case OpKind::kBackward: return 'B';
  }
  return '?';
}

std::string FormatOp(const Op& op) {
  return std::to_string(op.stage.value()) + OpKindLetter(op.kind) +
         std::to_string(op.microbatch.value());
}

std::string FormatAction(const Action& action) {
  if (!action.is_overlap()) return FormatOp(action.op(0));
  return "(" + FormatOp(action.op(0)) + ";" + FormatOp(action.op(1)) + ")OVERLAP_F_B";
}

Status ParseAction(std::string_view text, Action* action, size_t* error_offset) {
  if (error_offset != nullptr) *error_offset = 0;
  constexpr std::string_view kOverlapSuffix = ")OVERLAP_F_B";
  if (!text.empty() && text.front() == '(') {
    size_t semicolon = text.find(';');
    bool shaped = text.size() > kOverlapSuffix.size() + 1 &&
                  text.substr(text.size() - kOverlapSuffix.size()) == kOverlapSuffix &&
                  semicolon != std::string_view::npos &&
                  semicolon < text.size() - kOverlapSuffix.size();
    Op forward;
    Op backward;
    if (!shaped || !ParseOp(text.substr(1, semicolon - 1), &forward) ||
        !ParseOp(text.substr(semicolon + 1, text.size() - kOverlapSuffix.size() - semicolon - 1),
                 &backward)) {
      return Invalid(text);
    }
    if (forward.kind != OpKind::kForward || backward.kind != OpKind::kBackward) {
      if (error_offset != nullptr) *error_offset = forward.kind != OpKind::kForward ? 1 : semicolon + 1;
      return Status::InvalidInput("invalid action " + Quoted(text) +
                                  "; an OVERLAP_F_B pairs a forward with a full backward, "
                                  "(<stage>F<microbatch>;<stage>B<microbatch>)OVERLAP_F_B");
    }
    *action = Action::OverlapForwardBackward(forward, backward);
    return Status();
  }
  Op op;
  if (!ParseOp(text, &op)) return Invalid(text);
  *action = Action::Single(op);
  return Status();
}

}  // namespace ppsim
