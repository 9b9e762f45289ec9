// DualPipeV as torch.distributed.pipelining's ScheduleDualPipeV builds it (pytorch/pytorch
// torch/distributed/pipelining/schedules.py @ cff2ecc8b32af684662aefe6fe058e41810e26ce,
// ScheduleDualPipeV._calculate_single_rank_operations), which follows DeepSeek's DualPipeV
// (deepseek-ai/DualPipe dualpipe/dualpipev.py; DeepSeek-V3 report, arXiv 2412.19437): DualPipe
// cut in half, so one model copy folds into a V over 2p stages.
//
// Each rank runs eight phases: chunk-0 forwards; chunk-0/chunk-1 forward pairs; I, W, F on
// chunk 1; the main phase of overlapped F&B pairs (chunk-0 forward with chunk-1 backward, then
// chunk-1 forward with chunk-0 backward; the last rank runs its first pair as two plain ops to
// shorten the bubble); a full chunk-1 backward before each remaining overlap; backwards of both
// chunks, switching from full backwards to split I/W halfway through; then the chunk-0 backwards
// and the weight-backwards left in the queue. A W always takes the oldest pending I (FIFO).
#include <array>
#include <deque>
#include <string>
#include <vector>

#include "schedules/generator.h"
#include "schedules/v_shape.h"

namespace ppsim {
namespace {

// The order of one rank, built phase by phase; microbatches are numbered per chunk and per kind.
class RankBuilder {
 public:
  RankBuilder(StageIndex chunk0, StageIndex chunk1, std::vector<Action>* order)
      : stages_{chunk0, chunk1}, order_(order) {}

  void Forward(int chunk) { order_->push_back(Action::Single(NextForward(chunk))); }

  // A full backward, or with `split` the input half, whose weight half joins the queue.
  void Backward(int chunk, bool split) {
    if (!split) {
      order_->push_back(Action::Single(NextBackward(chunk)));
      return;
    }
    Op input = NextBackward(chunk);
    input.kind = OpKind::kBackwardInput;
    order_->push_back(Action::Single(input));
    pending_weights_.push_back({OpKind::kBackwardWeight, input.stage, input.microbatch});
  }

  // The oldest pending weight-backward, if any.
  void WeightIfPending() {
    if (pending_weights_.empty()) return;
    order_->push_back(Action::Single(pending_weights_.front()));
    pending_weights_.pop_front();
  }

  void Overlap(int forward_chunk, int backward_chunk) {
    const Op forward = NextForward(forward_chunk);
    order_->push_back(Action::OverlapForwardBackward(forward, NextBackward(backward_chunk)));
  }

 private:
  Op NextForward(int chunk) {
    return {OpKind::kForward, stages_[chunk], MicrobatchIndex(next_forward_[chunk]++)};
  }
  Op NextBackward(int chunk) {
    return {OpKind::kBackward, stages_[chunk], MicrobatchIndex(next_backward_[chunk]++)};
  }

  std::array<StageIndex, 2> stages_;
  std::array<int32_t, 2> next_forward_ = {0, 0};
  std::array<int32_t, 2> next_backward_ = {0, 0};
  std::deque<Op> pending_weights_;
  std::vector<Action>* order_;
};

}  // namespace

Status GenerateDualPipeV(const ScheduleParams& params, Schedule* schedule) {
  RETURN_IF_ERROR(CheckVShapeParams("DualPipeV", params));
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
  if (m < 2 * p) {
    return ScheduleParamError(params, "microbatches",
                              "DualPipeV needs at least as many microbatches as stages (2 x pp = " +
                                  std::to_string(2 * p) + "); got " + std::to_string(m));
  }
  StartVShapeSchedule(params, schedule);

  for (int32_t r = 0; r < p; ++r) {
    const RankIndex rank(r);
    RankBuilder b(VShapeFirstStage(rank), VShapeSecondStage(p, rank), &schedule->orders[r]);
    const int32_t downstream = p - r - 1;  // Ranks after this one.

    for (int32_t i = 0; i < 2 * downstream; ++i) b.Forward(0);
    for (int32_t i = 0; i < r + 1; ++i) {
      b.Forward(0);
      b.Forward(1);
    }
    for (int32_t i = 0; i < downstream; ++i) {
      b.Backward(1, /*split=*/true);
      b.WeightIfPending();
      b.Forward(1);
    }
    for (int32_t i = 0; i < m - 2 * p + r + 1; ++i) {
      if (i == 0 && r == p - 1) {
        b.Forward(0);
        b.Backward(1, /*split=*/false);
      } else {
        b.Overlap(0, 1);
      }
      b.Overlap(1, 0);
    }
    for (int32_t i = 0; i < downstream; ++i) {
      b.Backward(1, /*split=*/false);
      b.Overlap(1, 0);
    }
    // Halfway through these r + 1 pairs the backwards switch to split I/W: before the chunk-1
    // backward on odd ranks, between the two on even ranks.
    bool split = false;
    const int32_t half = (r + 1) / 2;
    for (int32_t i = 0; i < r + 1; ++i) {
      if (i == half && r % 2 == 1) split = true;
      b.Backward(1, split);
      if (i == half && r % 2 == 0) split = true;
      b.Backward(0, split);
    }
    for (int32_t i = 0; i < downstream; ++i) {
      b.WeightIfPending();
      b.Backward(0, split);
    }
    for (int32_t i = 0; i < r + 1; ++i) b.WeightIfPending();
  }
  return Status();
}

}  // namespace ppsim
