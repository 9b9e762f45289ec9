// DualPipe: DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv 2412.19437), and the reference
// implementation deepseek-ai/DualPipe dualpipe/dualpipe.py (DualPipe.step, commit bb214e82).
//
// Two copies of the model run in opposite directions: copy A's stage k on rank k, copy B's stage
// k on rank p - 1 - k. In the IR copy A is stages 0..p-1 with microbatches 0..m/2-1 and copy B is
// stages p..2p-1 (stage p + k on rank p - 1 - k) with microbatches m/2..m-1, so rank r holds
// stages r and 2p - 1 - r. Each rank's order follows step() phase by phase: a rank in the first
// half calls copy A "phase 0", one in the second half calls copy B "phase 0". A backward run with
// zero-bubble enabled is an I whose W waits in a first-in first-out queue until a weight step
// pops it; an overlapped forward-backward chunk is an OVERLAP_F_B of a forward and a full backward.
#include <deque>
#include <string>

#include "schedules/generator.h"

namespace ppsim {
namespace {

class DualPipeRank {
 public:
  DualPipeRank(int32_t p, int32_t m, int32_t rank, std::vector<Action>* order)
      : p_(p), half_chunks_(m / 2), rank_(rank), second_half_(rank >= p / 2), order_(order) {}

  // A forward of the phase's next chunk.
  void Forward(int phase) { order_->push_back(Action::Single(NextForward(phase))); }

  // A backward of the phase's next chunk: a full B, or with zero bubble an I whose W is queued.
  void Backward(int phase, bool zero_bubble) {
    Op op = NextBackward(phase);
    if (zero_bubble) {
      op.kind = OpKind::kBackwardInput;
      weights_.push_back(Op{OpKind::kBackwardWeight, op.stage, op.microbatch});
    }
    order_->push_back(Action::Single(op));
  }

  // The oldest queued W.
  void Weight() {
    order_->push_back(Action::Single(weights_.front()));
    weights_.pop_front();
  }

  void ForwardBackward(int forward_phase, int backward_phase) {
    const Op forward = NextForward(forward_phase);
    order_->push_back(Action::OverlapForwardBackward(forward, NextBackward(backward_phase)));
  }

 private:
  // Copy A (0) or B (1) of a phase.
  int Copy(int phase) const { return phase ^ (second_half_ ? 1 : 0); }
  StageIndex Stage(int copy) const { return StageIndex(copy == 0 ? rank_ : 2 * p_ - 1 - rank_); }
  MicrobatchIndex Microbatch(int copy, int32_t chunk) const {
    return MicrobatchIndex(copy == 0 ? chunk : half_chunks_ + chunk);
  }
  Op NextForward(int phase) {
    const int copy = Copy(phase);
    return Op{OpKind::kForward, Stage(copy), Microbatch(copy, next_forward_[copy]++)};
  }
  Op NextBackward(int phase) {
    const int copy = Copy(phase);
    return Op{OpKind::kBackward, Stage(copy), Microbatch(copy, next_backward_[copy]++)};
  }

  int32_t p_;
  int32_t half_chunks_;
  int32_t rank_;
  bool second_half_;
  std::vector<Action>* order_;
  int32_t next_forward_[2] = {0, 0};
  int32_t next_backward_[2] = {0, 0};
  std::deque<Op> weights_;
};

}  // namespace

Status GenerateDualPipe(const ScheduleParams& params, Schedule* schedule) {
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
  if (p < 2 || p % 2 != 0) {
    return ScheduleParamError(
        params, "pp",
        "DualPipe needs an even number of ranks (at least 2); got " + std::to_string(p));
  }
  if (params.stages_per_rank != 0 && params.stages_per_rank != 2) {
    return ScheduleParamError(params, "stages_per_rank",
                              "DualPipe holds 2 stages per rank, one of each model copy; got " +
                                  std::to_string(params.stages_per_rank));
  }
  if (m < 2 * p || m % 2 != 0) {
    return ScheduleParamError(params, "microbatches",
                              "DualPipe needs an even number of microbatches, at least 2 x pp = " +
                                  std::to_string(2 * p) + "; got " + std::to_string(m));
  }
  *schedule = Schedule();
  schedule->num_ranks = p;
  schedule->num_stages = 2 * p;
  schedule->num_microbatches = m;
  for (int32_t stage = 0; stage < 2 * p; ++stage) {
    schedule->stage_to_rank.push_back(RankIndex(stage < p ? stage : 2 * p - 1 - stage));
  }
  schedule->pipelines = {Pipeline{0, p - 1, 0, m / 2 - 1}, Pipeline{p, 2 * p - 1, m / 2, m - 1}};
  schedule->orders.resize(p);

  const int32_t half_ranks = p / 2;
  const int32_t half_chunks = m / 2;
  for (int32_t rank = 0; rank < p; ++rank) {
    DualPipeRank r(p, m, rank, &schedule->orders[rank]);
    const int32_t h = std::min(rank, p - 1 - rank);
    const bool middle = rank == half_ranks - 1 || rank == half_ranks;
    // Step 1: warm up phase 0.
    for (int32_t i = 0; i < (half_ranks - h - 1) * 2; ++i) r.Forward(0);
    // Step 2: F0 F1 pairs.
    for (int32_t i = 0; i < h + 1; ++i) {
      r.Forward(0);
      r.Forward(1);
    }
    // Step 3: B1 (zero bubble) W1 F1.
    for (int32_t i = 0; i < half_ranks - h - 1; ++i) {
      r.Backward(1, true);
      r.Weight();
      r.Forward(1);
    }
    // Step 4, the main step: (F0, B1) then (F1, B0) overlapped; the middle ranks do not overlap
    // their first pair.
    for (int32_t i = 0; i < half_chunks - p + h + 1; ++i) {
      if (i == 0 && middle) {
        r.Forward(0);
        r.Backward(1, false);
      } else {
        r.ForwardBackward(0, 1);
      }
      r.ForwardBackward(1, 0);
    }
    // Step 5: B1 then (F1, B0) overlapped.
    for (int32_t i = 0; i < half_ranks - h - 1; ++i) {
      r.Backward(1, false);
      r.ForwardBackward(1, 0);
    }
    // Step 6: B1 B0, the second half of them with zero bubble.
    bool zero_bubble = false;
    for (int32_t i = 0; i < h + 1; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
      r.Backward(1, zero_bubble);
      if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
      r.Backward(0, zero_bubble);
    }
    // Step 7: W then B0 with zero bubble.
    for (int32_t i = 0; i < half_ranks - h - 1; ++i) {
      r.Weight();
      r.Backward(0, true);
    }
    // Step 8: the remaining W.
    for (int32_t i = 0; i < h + 1; ++i) r.Weight();
  }
  return Status();
}

}  // namespace ppsim
