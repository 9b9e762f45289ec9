// The schedule IR's unit: an action a rank executes, in PyTorch's text form.
//
//   0F0                    forward of microbatch 0 on virtual stage 0
//   1I2, 2W3, 3B1          backward for inputs, backward for weights, full backward
//   (0F7;7B3)OVERLAP_F_B   a forward and a full backward executed as one overlapped op
//
// Stages are global virtual-stage indices.
#ifndef PPSIM_SCHEDULES_ACTION_H_
#define PPSIM_SCHEDULES_ACTION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "schedules/index.h"
#include "base/status.h"

namespace ppsim {

enum class OpKind : uint8_t {
  kForward,         // F
  kBackwardInput,   // I: gradient with respect to the stage's input
  kBackwardWeight,  // W: gradient with respect to the stage's weights
  kBackward,        // B: I and W as one op
};

// 'F', 'I', 'W' or 'B'.
char OpKindLetter(OpKind kind);

// One unit of compute on one (stage, microbatch).
struct Op {
  OpKind kind = OpKind::kForward;
  StageIndex stage;
  MicrobatchIndex microbatch;

  friend bool operator==(const Op&, const Op&) = default;
};

// An entry of a rank's order: a single op, or an overlapped forward and full backward.
class Action {
 public:
  Action() = default;
  static Action Single(Op op) { return Action(op); }
  // REQUIRES: forward.kind == kForward and backward.kind == kBackward.
  static Action OverlapForwardBackward(Op forward, Op backward) {
    Action a(forward);
    a.ops_[1] = backward;
    a.num_ops_ = 2;
    return a;
  }

  bool is_overlap() const { return num_ops_ == 2; }
  int num_ops() const { return num_ops_; }
  // REQUIRES: 0 <= i < num_ops(). For an overlap, op(0) is the forward and op(1) the backward.
  const Op& op(int i) const { return ops_[i]; }

  friend bool operator==(const Action&, const Action&) = default;

 private:
  explicit Action(Op op) : ops_{op, Op{}}, num_ops_(1) {}

  Op ops_[2] = {};
  int num_ops_ = 1;
};

// "0F0", "1I2", "(0F7;7B3)OVERLAP_F_B".
std::string FormatOp(const Op& op);
std::string FormatAction(const Action& action);

// Parses one compute action, the whole of `text` (no surrounding whitespace). On failure returns
// InvalidInput with a message that quotes `text` and says what is valid, and sets *error_offset
// (if not null) to the offset in `text` where the problem starts.
Status ParseAction(std::string_view text, Action* action, size_t* error_offset = nullptr);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_ACTION_H_
