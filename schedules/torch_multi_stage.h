// Shared pieces of torch.distributed.pipelining's multi-stage ("loop" placement) schedules:
// Interleaved1F1B, LoopedBFS and InterleavedZeroBubble.
//
// Source: pytorch/pytorch @ cff2ecc8b32af684662aefe6fe058e41810e26ce,
// torch/distributed/pipelining/schedules.py (_get_warmup_ops, _get_1f1b_rank_ops and the
// _calculate_single_rank_operations of ScheduleInterleaved1F1B and ScheduleInterleavedZeroBubble).
//
// torch's pipeline_order pads each rank with None bubble slots so that all ranks advance in
// lockstep; those slots carry no work and the runtime's order (with SEND/RECV inserted) has the
// same compute sequence, so the helpers here produce only the compute actions.
#ifndef PPSIM_SCHEDULES_TORCH_MULTI_STAGE_H_
#define PPSIM_SCHEDULES_TORCH_MULTI_STAGE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/generator.h"

namespace ppsim {

// The stages per rank torch's multi-stage schedules get when params leave it at 0.
inline constexpr int32_t kTorchDefaultStagesPerRank = 2;

// Checks p >= 1, m >= 1 and v >= 1 (v = 0 meaning the default, 2) and sets up `schedule` with
// p * v stages, stage s on rank s % p, and p empty orders. Sets *stages_per_rank to the v used.
// `name` goes in messages.
inline Status StartTorchMultiStage(std::string_view name, const ScheduleParams& params,
                                   Schedule* schedule, int32_t* stages_per_rank) {
  const std::string who(name);
  if (params.num_ranks < 1) {
    return ScheduleParamError(
        params, "pp", who + " needs at least 1 rank; got " + std::to_string(params.num_ranks));
  }
  if (params.num_microbatches < 1) {
    return ScheduleParamError(
        params, "microbatches",
        who + " needs at least 1 microbatch; got " + std::to_string(params.num_microbatches));
  }
  if (params.stages_per_rank < 0) {
    return ScheduleParamError(
        params, "stages_per_rank",
        who + " needs at least 1 stage per rank; got " + std::to_string(params.stages_per_rank));
  }
  const int32_t v =
      params.stages_per_rank == 0 ? kTorchDefaultStagesPerRank : params.stages_per_rank;
  const int32_t p = params.num_ranks;
  *schedule = Schedule();
  schedule->num_ranks = p;
  schedule->num_stages = p * v;
  schedule->num_microbatches = params.num_microbatches;
  for (int32_t stage = 0; stage < p * v; ++stage) {
    schedule->stage_to_rank.push_back(RankIndex(stage % p));
  }
  schedule->orders.resize(p);
  *stages_per_rank = v;
  return Status();
}

// torch's flexible rounds: rounds = max(1, m // p) and m must be a multiple of rounds (torch
// raises ValueError otherwise). REQUIRES: p >= 1, m >= 1.
inline int32_t TorchRounds(int32_t num_ranks, int32_t num_microbatches) {
  return std::max(1, num_microbatches / num_ranks);
}

// InvalidInput naming the rounds rule when m is not a multiple of TorchRounds(p, m).
inline Status CheckTorchRounds(std::string_view name, const ScheduleParams& params) {
  const int32_t rounds = TorchRounds(params.num_ranks, params.num_microbatches);
  if (params.num_microbatches % rounds == 0) return Status();
  return ScheduleParamError(
      params, "microbatches",
      std::string(name) + " needs microbatches to be a multiple of rounds = max(1, m // pp) = " +
          std::to_string(rounds) + "; got " + std::to_string(params.num_microbatches));
}

// The compute order torch's _get_1f1b_rank_ops gives rank `rank` of an interleaved schedule with
// p ranks, v stages per rank and m microbatches, grouped into rounds of m / rounds microbatches.
//
// Warmup runs (v - 1) * per_round + factor * (p - 1 - rank) forwards (at most m * v), factor 2
// for Interleaved1F1B and 1 for zero bubble; the steady phase pairs each further forward with a
// backward; the cooldown runs the remaining backwards. Forwards visit the rank's chunks in order
// and backwards in reverse, switching chunk every per_round ops. With `zero_bubble` the backward
// is I, and from the rank-th steady pair on each I is followed by the W of the oldest I still
// without one; the W left over at the end follow in order.
// REQUIRES: p, v, m >= 1, 0 <= rank < p, m a multiple of TorchRounds(p, m).
inline void AppendTorchInterleavedOrder(int32_t num_ranks, int32_t stages_per_rank,
                                        int32_t num_microbatches, int32_t rank, bool zero_bubble,
                                        std::vector<Action>* order) {
  const int32_t p = num_ranks;
  const int32_t v = stages_per_rank;
  const int32_t m = num_microbatches;
  const int32_t per_round = m / TorchRounds(p, m);
  const int32_t hop_factor = zero_bubble ? 1 : 2;
  const int32_t warmup = std::min((v - 1) * per_round + hop_factor * (p - 1 - rank), m * v);
  const int32_t steady = m * v - warmup;
  const int32_t total = warmup + steady + warmup;  // The cooldown has as many ops as the warmup.
  // Zero bubble starts emitting W after this many steady pairs (torch: num_1f1b_microbatches).
  const int32_t pairs_before_w = rank;

  auto forward_chunk = [&](int32_t step) { return (step / per_round) % v; };
  auto backward_chunk = [&](int32_t step) { return v - 1 - ((step - warmup) / per_round) % v; };

  // Next microbatch per local chunk, separately for F, for B or I, and for W.
  std::vector<int32_t> next_forward(v, 0), next_backward(v, 0), next_weight(v, 0);
  auto emit = [&](OpKind kind, int32_t chunk, std::vector<int32_t>& next) {
    const StageIndex stage(chunk * p + rank);
    order->push_back(Action::Single({kind, stage, MicrobatchIndex(next[chunk]++)}));
  };
  const OpKind backward_kind = zero_bubble ? OpKind::kBackwardInput : OpKind::kBackward;

  std::vector<int32_t> backward_steps;  // The step of every backward emitted so far.
  size_t weights_done = 0;
  auto emit_backward = [&](int32_t step) {
    emit(backward_kind, backward_chunk(step), next_backward);
    backward_steps.push_back(step);
    if (zero_bubble && step - warmup >= pairs_before_w) {
      emit(OpKind::kBackwardWeight, backward_chunk(backward_steps[weights_done++]), next_weight);
    }
  };

  for (int32_t step = 0; step < total; ++step) {
    if (step < warmup + steady) emit(OpKind::kForward, forward_chunk(step), next_forward);
    if (step >= warmup) emit_backward(step);
  }
  while (zero_bubble && weights_done < backward_steps.size()) {
    emit(OpKind::kBackwardWeight, backward_chunk(backward_steps[weights_done++]), next_weight);
  }
}

// Interleaved1F1B (zero_bubble false) or InterleavedZeroBubble (true): the checks, placement and
// order above for every rank. `name` goes in messages.
inline Status GenerateTorchInterleaved(std::string_view name, bool zero_bubble,
                                       const ScheduleParams& params, Schedule* schedule) {
  int32_t v = 0;
  RETURN_IF_ERROR(StartTorchMultiStage(name, params, schedule, &v));
  RETURN_IF_ERROR(CheckTorchRounds(name, params));
  for (int32_t rank = 0; rank < params.num_ranks; ++rank) {
    AppendTorchInterleavedOrder(params.num_ranks, v, params.num_microbatches, rank, zero_bubble,
                                &schedule->orders[rank]);
  }
  return Status();
}

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_TORCH_MULTI_STAGE_H_
