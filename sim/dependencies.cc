#include "sim/dependencies.h"

namespace ppsim {

int NeedsOf(const Op& op, const Schedule& schedule, Need* need) {
  const int32_t s = op.stage.value();
  const int32_t j = op.microbatch.value();
  const Pipeline pipeline = schedule.PipelineOf(op.microbatch);
  switch (op.kind) {
    case OpKind::kForward:
      if (s == pipeline.first_stage) return 0;
      *need = {Output::kActivation, s - 1, j};
      return 1;
    case OpKind::kBackwardInput:
    case OpKind::kBackward:
      *need = s < pipeline.last_stage ? Need{Output::kGradient, s + 1, j}
                                      : Need{Output::kActivation, s, j};
      return 1;
    case OpKind::kBackwardWeight:
      *need = {Output::kInputGradient, s, j};
      return 1;
  }
  return 0;
}

Producers::Producers(const Schedule& schedule) : num_microbatches_(schedule.num_microbatches) {
  const size_t cells = static_cast<size_t>(schedule.num_stages) * schedule.num_microbatches;
  for (std::vector<uint32_t>& a : actions_) a.assign(cells, 0);
}

void Producers::Add(const Op& op, uint32_t action) {
  const size_t cell = Cell(op.stage.value(), op.microbatch.value());
  switch (op.kind) {
    case OpKind::kForward: actions_[static_cast<int>(Output::kActivation)][cell] = action; break;
    case OpKind::kBackward: actions_[static_cast<int>(Output::kGradient)][cell] = action; break;
    case OpKind::kBackwardInput:
      actions_[static_cast<int>(Output::kGradient)][cell] = action;
      actions_[static_cast<int>(Output::kInputGradient)][cell] = action;
      break;
    case OpKind::kBackwardWeight: break;
  }
}

uint32_t Producers::Of(const Need& need) const {
  return actions_[static_cast<int>(need.output)][Cell(need.stage, need.microbatch)];
}

}  // namespace ppsim
