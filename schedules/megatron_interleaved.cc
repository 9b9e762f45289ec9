// Megatron-LM's interleaved 1F1B (Narayanan et al., "Efficient Large-Scale Language Model Training
// on GPU Clusters Using Megatron-LM", SC 2021), as NVIDIA/Megatron-LM
// megatron/core/pipeline_parallel/schedules.py runs it (forward_backward_pipelining_with_
// interleaving, get_schedule_table, get_pp_rank_microbatches; read at commit 00611e6e).
//
// Stage c * p + r is chunk c of rank r. Every rank walks the same table of (microbatch, chunk)
// entries: microbatches in groups of g, each group through chunk 0, then chunk 1, ... The k-th
// forward is entry k; the k-th backward is entry k with the chunk mirrored (v - 1 - c). Rank r
// warms up with (p - r - 1) * 2 + (v - 1) * g forwards (at most m * v), then alternates one
// forward and one backward, then runs the remaining backwards.
//
// With --overlap-moe-expert-parallel-comm (ScheduleParams::moe_a2a_overlap) Megatron warms up with
// one forward more ("to ensure the forward and backward computations are independent in all 1f1b
// steps": get_pp_rank_microbatches, read at commit d98e8a64) and runs each steady-state step's
// forward k + warmup and backward k as one combined step (forward_backward_helper_wrapper calls
// combined_1f1b_schedule_for_interleaved_pipelining, combined_1f1b.py): an OVERLAP_F_B pair.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "schedules/generator.h"

namespace ppsim {

Status GenerateMegatronInterleaved(const ScheduleParams& params, Schedule* schedule) {
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;
  const int32_t v = params.stages_per_rank == 0 ? 2 : params.stages_per_rank;
  const int32_t g = params.microbatch_group_size == 0 ? p : params.microbatch_group_size;
  if (p < 2) {
    return ScheduleParamError(
        params, "pp",
        "Megatron-Interleaved needs at least 2 ranks (Megatron runs pp = 1 without pipelining); "
        "got " +
            std::to_string(p));
  }
  if (v < 1) {
    return ScheduleParamError(
        params, "stages_per_rank",
        "Megatron-Interleaved needs at least 1 stage per rank; got " + std::to_string(v));
  }
  if (m < 1) {
    return ScheduleParamError(
        params, "microbatches",
        "Megatron-Interleaved needs at least 1 microbatch; got " + std::to_string(m));
  }
  if (g < p || g > m) {
    return ScheduleParamError(
        params, "microbatch_group_size",
        "Megatron-Interleaved needs the microbatch group size in [pp, m] = [" + std::to_string(p) +
            ", " + std::to_string(m) + "]; got " + std::to_string(g));
  }
  if (m % g != 0 && m % g < p) {
    return ScheduleParamError(
        params, "microbatch_group_size",
        "Megatron-Interleaved needs the last microbatch group (m % g = " + std::to_string(m % g) +
            ") to be empty or at least pp = " + std::to_string(p) + " microbatches");
  }

  // The (microbatch, chunk) table every rank walks.
  std::vector<std::pair<int32_t, int32_t>> table;
  for (int32_t first = 0; first < m; first += g) {
    const int32_t end = first + g >= m ? m : first + g;
    for (int32_t chunk = 0; chunk < v; ++chunk) {
      for (int32_t j = first; j < end; ++j) table.emplace_back(j, chunk);
    }
  }
  const int32_t total = m * v;

  *schedule = Schedule();
  schedule->num_ranks = p;
  schedule->num_stages = p * v;
  schedule->num_microbatches = m;
  for (int32_t stage = 0; stage < p * v; ++stage) {
    schedule->stage_to_rank.push_back(RankIndex(stage % p));
  }
  schedule->orders.resize(p);
  for (int32_t rank = 0; rank < p; ++rank) {
    auto& order = schedule->orders[rank];
    auto forward = [&](int32_t k) {
      const auto [j, chunk] = table[k];
      order.push_back(
          Action::Single({OpKind::kForward, StageIndex(chunk * p + rank), MicrobatchIndex(j)}));
    };
    auto backward = [&](int32_t k) {
      const auto [j, chunk] = table[k];
      order.push_back(Action::Single(
          {OpKind::kBackward, StageIndex((v - 1 - chunk) * p + rank), MicrobatchIndex(j)}));
    };
    const int32_t extra = params.moe_a2a_overlap ? 1 : 0;
    const int32_t warmup = std::min((p - rank - 1) * 2 + (v - 1) * g + extra, total);
    for (int32_t k = 0; k < warmup; ++k) forward(k);
    for (int32_t k = 0; k < total - warmup; ++k) {
      forward(k + warmup);
      backward(k);
      if (params.moe_a2a_overlap) {  // the two as one combined step
        const Action b = order.back();
        order.pop_back();
        const Action f = order.back();
        order.back() = Action::OverlapForwardBackward(f.op(0), b.op(0));
      }
    }
    for (int32_t k = total - warmup; k < total; ++k) backward(k);
  }
  return Status();
}

}  // namespace ppsim
