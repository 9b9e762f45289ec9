// V-Half and V-Min: Qi, Wan, Amar, Lin, "Pipeline Parallelism with Controllable Memory",
// NeurIPS 2024 (arXiv 2405.15362), built as the authors' implementation builds them:
// sail-sg/zero-bubble-pipeline-parallelism, tag zero-bubble-v0.1.0
// (93af65c60b335eeaece94464a45e5ab0c03dc4cd), megatron/core/pipeline_parallel/v_schedule_greedy.py,
// PipelineGraph(p, m, "half" or "min", 1000, 1000, 1000, 1).get_schedule(), the call
// zb_schedules.py makes for --zero-bubble-v-schedule-mem-setup half / min.
//
// The reference lays passes on a grid of unit slots whatever the real costs, so the order does not
// depend on F, I or W. Its steps, each reproduced here:
//   1. A building block per rank (stable_pattern_v_half / _v_min): the slots of F and I of both
//      chunks of microbatch 0, repeated every 6 slots for each further microbatch. The block's
//      lifespan sets the live activations of the stable phase, hence the memory of the schedule.
//   2. put_w: W passes go into the free slots of the grid, oldest backward first.
//   3. reorder (the paper's squeeze and reorder), twice: passes of the warm-up (first time only,
//      with the W in place) and of the cool-down move to the earliest free slot their dependencies
//      allow, as long as the rank's live activations stay within the largest peak any rank had
//      before (the stable phase's); the stable phase, from rank 0's first chunk-0 backward to
//      rank 0's last chunk-0 forward, stays put.
//      Each reorder ends with an as-soon-as-possible replay at unit cost (eager_execution_time).
//   4. The W are dropped and put back per chunk (chunk 1 first), and each rank runs its passes in
//      slot order: the reference's final replay with f = b = w = 1000, c = 1 keeps that order.
// Live activations are counted as the reference counts them: +1 for each chunk forward, -1 for a
// W (or, without W in the grid, for each free slot while a backward's W is due).
//
// The reference accepts any p >= 1 and m >= 1; so does this file (the V rules of v_shape.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "schedules/generator.h"
#include "schedules/v_shape.h"

namespace ppsim {

namespace {

// The reference's pass kinds ('FfBbWw'): forwards of chunks 0 and 1, input-backwards of chunks 1
// and 0 (backwards run up the V in reverse), then one W list, or two (chunk 1, chunk 0) once split.
constexpr int kF0 = 0;
constexpr int kF1 = 1;
constexpr int kI1 = 2;
constexpr int kI0 = 3;
constexpr int kW = 4;  // kW1 when split.
constexpr int kW0 = 5;

enum class Block { kHalf, kMin };

using Slots = std::vector<int32_t>;   // A kind's slot per microbatch, increasing.
using RankPlan = std::vector<Slots>;  // One per kind.
using Plan = std::vector<RankPlan>;   // One per rank.

// Slots of F0, F1, I1, I0 for microbatch 0 on `rank` (stable_pattern_v_half / _v_min).
std::array<int32_t, 4> BlockSlots(Block block, int32_t p, int32_t rank) {
  if (block == Block::kHalf) {
    const int32_t gap = p % 2 == 0 ? 3 : 0;
    return {2 * rank, 3 * p - rank - 2, 3 * p + gap + 2 * rank - 1, 6 * p + gap - rank - 2};
  }
  const int32_t gap = p % 3 == 0 ? 2 : 0;
  return {rank, 2 * p - rank - 1, 2 * p + gap + rank, 4 * p + gap - rank - 1};
}

int32_t LastSlot(const RankPlan& rank) {
  int32_t last = 0;
  for (const Slots& slots : rank) last = std::max(last, slots.back());
  return last;
}

// The kind whose next unvisited pass has the earliest slot (ties: the lower kind) among the first
// `kinds` lists, or -1 when all are done.
int EarliestKind(const RankPlan& rank, const std::vector<size_t>& next, int kinds) {
  int best = -1;
  for (int k = 0; k < kinds; ++k) {
    if (next[k] < rank[k].size() && (best < 0 || rank[k][next[k]] < rank[best][next[best]])) {
      best = k;
    }
  }
  return best;
}

// put_w: walks the slots up to the last F or I; each free slot takes a pending W (with `split`,
// chunk 1's first), and the Ws still pending follow the last slot.
void PutW(RankPlan* rank, bool split) {
  const int32_t last = LastSlot(*rank);
  rank->resize(split ? 6 : 5);
  std::array<int32_t, 2> pending = {0, 0};
  std::vector<size_t> next(4, 0);
  for (int32_t slot = 0; slot <= last; ++slot) {
    const int k = EarliestKind(*rank, next, 4);
    if (k >= 0 && (*rank)[k][next[k]] == slot) {
      ++next[k];
      if (k == kI1 || k == kI0) ++pending[split ? k - kI1 : 0];
      continue;
    }
    for (int w = 0; w < 2; ++w) {
      if (pending[w] == 0) continue;
      (*rank)[kW + w].push_back(slot);
      --pending[w];
      break;
    }
  }
  int32_t slot = last;
  for (int w = 0; w < 2; ++w) {
    for (; pending[w] > 0; --pending[w]) (*rank)[kW + w].push_back(++slot);
  }
}

// Each kind's change of the live chunk activations: F0 and F1 add one, I1 and I0 none, W frees
// one (without W lists, a pending W frees it in the next free slot).
constexpr std::array<int32_t, 5> kDelta = {1, 1, 0, 0, -1};

// mem_of_stage: the peak of live chunk activations over the rank's slots; the walk stops as soon
// as the live activations exceed `stop_above` (the peak returned is then above it too).
int32_t LivePeak(const RankPlan& rank, int32_t stop_above = std::numeric_limits<int32_t>::max()) {
  const int kinds = static_cast<int>(rank.size());
  const bool has_w = kinds > 4;
  std::vector<size_t> next(kinds, 0);
  int32_t live = 0, peak = 0, pending = 0;
  const int32_t last = LastSlot(rank);
  for (int32_t slot = 0; slot <= last; ++slot) {
    const int k = EarliestKind(rank, next, kinds);
    if (k >= 0 && rank[k][next[k]] == slot) {
      ++next[k];
      live += kDelta[k];
      if (k == kI1 || k == kI0) ++pending;
    } else if (!has_w && pending > 0) {
      --live;
      --pending;
    }
    peak = std::max(peak, live);
    if (peak > stop_above) break;
  }
  return peak;
}

// A rank with W lists: its live chunk activations after each slot up to its last, each pass
// counted at its own slot (mem_of_stage's walk, slot by slot).
std::vector<int32_t> LiveBySlot(const RankPlan& rank) {
  std::vector<int32_t> live(static_cast<size_t>(LastSlot(rank)) + 1, 0);
  for (size_t k = 0; k < rank.size(); ++k) {
    for (int32_t slot : rank[k]) live[slot] += kDelta[k];
  }
  for (size_t s = 1; s < live.size(); ++s) live[s] += live[s - 1];
  return live;
}

struct Pass {
  int32_t rank;
  int kind;
  int32_t microbatch;
  int32_t slot;
};

// Visits every pass in the reference's order: repeatedly the least (slot, rank, kind, microbatch)
// among each list's next pass. `visit` may move the pass it is given; later choices see the move.
template <class Visit>
void ForEachBySlot(Plan* plan, Visit visit) {
  const int32_t ranks = static_cast<int32_t>(plan->size());
  const int kinds = static_cast<int>((*plan)[0].size());
  std::vector<std::vector<size_t>> next(ranks, std::vector<size_t>(kinds, 0));
  size_t remaining = 0;
  for (const RankPlan& rank : *plan) {
    for (const Slots& slots : rank) remaining += slots.size();
  }
  for (; remaining > 0; --remaining) {
    Pass best{-1, 0, 0, std::numeric_limits<int32_t>::max()};
    for (int32_t r = 0; r < ranks; ++r) {
      const int k = EarliestKind((*plan)[r], next[r], kinds);
      if (k >= 0 && (*plan)[r][k][next[r][k]] < best.slot) {
        best = {r, k, static_cast<int32_t>(next[r][k]), (*plan)[r][k][next[r][k]]};
      }
    }
    ++next[best.rank][best.kind];
    visit(best);
  }
}

// eager_execution_time at unit cost and no communication time: each pass, in slot order, starts as
// soon as its inputs, its own previous microbatch and the rank's previous pass are done. Returns
// the start slots.
Plan Squeeze(Plan plan) {
  const int32_t ranks = static_cast<int32_t>(plan.size());
  Plan end = plan;
  std::vector<int32_t> rank_free(ranks, 0);
  ForEachBySlot(&plan, [&](const Pass& pass) {
    const int32_t r = pass.rank, j = pass.microbatch;
    const int k = pass.kind;
    int32_t ready = rank_free[r];
    if ((k == kF0 || k == kI1) && r > 0) ready = std::max(ready, end[r - 1][k][j]);
    if ((k == kF1 || k == kI0) && r + 1 < ranks) ready = std::max(ready, end[r + 1][k][j]);
    if (k > kF0 && k < kW) ready = std::max(ready, end[r][k - 1][j]);
    if (j > 0) ready = std::max(ready, end[r][k][j - 1]);
    end[r][k][j] = ready + 1;
    rank_free[r] = ready + 1;
  });
  for (RankPlan& rank : end) {
    for (Slots& slots : rank) {
      for (int32_t& slot : slots) --slot;
    }
  }
  return end;
}

// reorder: with `with_w`, places the W first and also moves warm-up passes. Returns the squeezed
// plan, W included (one list).
Plan Reorder(Plan plan, bool with_w, int32_t m) {
  if (with_w) {
    for (RankPlan& rank : plan) PutW(&rank, /*split=*/false);
  }
  const int32_t ranks = static_cast<int32_t>(plan.size());
  int32_t budget = 0;
  std::vector<std::vector<bool>> occupied;
  // With W lists, each slot's live activations (after it) per rank: every pass counts at its
  // own slot, so a pass moved from slot b to a changes the slots [a, b) by its delta alone.
  std::vector<std::vector<int32_t>> live;
  for (const RankPlan& rank : plan) {
    budget = std::max(budget, LivePeak(rank));
    occupied.emplace_back(LastSlot(rank) + 1, false);
    if (with_w) live.push_back(LiveBySlot(rank));
  }
  enum class Phase { kWarmup, kStable, kCooldown } phase = Phase::kWarmup;
  ForEachBySlot(&plan, [&](const Pass& pass) {
    const int32_t r = pass.rank, j = pass.microbatch;
    const int k = pass.kind;
    RankPlan& rank = plan[r];
    if (phase == Phase::kWarmup && k == kI0 && r == 0) phase = Phase::kStable;
    if (phase == Phase::kStable) {
      if (k == kF0 && j == m - 1) phase = Phase::kCooldown;
      occupied[r][pass.slot] = true;
      return;
    }
    if (phase == Phase::kWarmup && !with_w) {
      occupied[r][pass.slot] = true;
      return;
    }
    int32_t earliest = -1;
    if ((k == kF0 || k == kI1) && r > 0) earliest = std::max(earliest, plan[r - 1][k][j]);
    if ((k == kF1 || k == kI0) && r + 1 < ranks) earliest = std::max(earliest, plan[r + 1][k][j]);
    if (k > kF0 && k < kW) earliest = std::max(earliest, rank[k - 1][j]);
    if (k == kW) {
      // The W of the j-th backward of either chunk, in slot order.
      Slots backwards = rank[kI1];
      backwards.insert(backwards.end(), rank[kI0].begin(), rank[kI0].end());
      std::sort(backwards.begin(), backwards.end());
      earliest = std::max(earliest, backwards[j]);
    }
    if (j > 0) earliest = std::max(earliest, rank[k][j - 1]);
    bool moved = false;
    if (with_w) {
      // The rank's peak is within the budget: a move that adds nothing is taken at the first
      // free slot; a forward (+1) where the slots it passes stay below the budget. The slots
      // tried rise, so the highest live count over [slot, pass.slot) is kept from the top down.
      const int32_t delta = kDelta[k];
      const int32_t first = earliest + 1;
      std::vector<int32_t> highest(std::max(0, pass.slot - first) + 1,
                                   std::numeric_limits<int32_t>::min());
      for (int32_t s = pass.slot - 1; s >= first; --s) {
        highest[s - first] = std::max(highest[s - first + 1], live[r][s]);
      }
      for (int32_t slot = first; slot < pass.slot && !moved; ++slot) {
        if (occupied[r][slot]) continue;
        moved = delta <= 0 || highest[slot - first] + delta <= budget;
        if (moved) {
          rank[k][j] = slot;
          for (int32_t s = slot; s < pass.slot; ++s) live[r][s] += delta;
        }
      }
    } else {
      for (int32_t slot = earliest + 1; slot < pass.slot && !moved; ++slot) {
        if (occupied[r][slot]) continue;
        rank[k][j] = slot;
        moved = LivePeak(rank, budget) <= budget;
      }
    }
    if (!moved) rank[k][j] = pass.slot;
    occupied[r][rank[k][j]] = true;
  });
  if (!with_w) {
    for (RankPlan& rank : plan) PutW(&rank, /*split=*/false);
  }
  return Squeeze(std::move(plan));
}

void DropW(Plan* plan) {
  for (RankPlan& rank : *plan) rank.resize(4);
}

Status GenerateVGreedy(std::string_view name, Block block, const ScheduleParams& params,
                       Schedule* schedule) {
  RETURN_IF_ERROR(CheckVShapeParams(name, params));
  StartVShapeSchedule(params, schedule);
  const int32_t p = params.num_ranks;
  const int32_t m = params.num_microbatches;

  Plan plan(p, RankPlan(4));
  for (int32_t r = 0; r < p; ++r) {
    const std::array<int32_t, 4> first = BlockSlots(block, p, r);
    for (int k = 0; k < 4; ++k) {
      for (int32_t j = 0; j < m; ++j) plan[r][k].push_back(first[k] + 6 * j);
    }
  }
  plan = Reorder(std::move(plan), /*with_w=*/true, m);
  DropW(&plan);
  plan = Reorder(std::move(plan), /*with_w=*/false, m);
  DropW(&plan);

  for (int32_t r = 0; r < p; ++r) {
    RankPlan& rank = plan[r];
    PutW(&rank, /*split=*/true);
    std::vector<std::tuple<int32_t, int, int32_t>> passes;  // (slot, kind, microbatch)
    for (int k = 0; k < static_cast<int>(rank.size()); ++k) {
      for (int32_t j = 0; j < m; ++j) passes.emplace_back(rank[k][j], k, j);
    }
    std::sort(passes.begin(), passes.end());
    const StageIndex chunk0 = VShapeFirstStage(RankIndex(r));
    const StageIndex chunk1 = VShapeSecondStage(p, RankIndex(r));
    for (const auto& [slot, kind, j] : passes) {
      static constexpr std::array<OpKind, 6> kOp = {
          OpKind::kForward,       OpKind::kForward,        OpKind::kBackwardInput,
          OpKind::kBackwardInput, OpKind::kBackwardWeight, OpKind::kBackwardWeight};
      const bool on_chunk0 = kind == kF0 || kind == kI0 || kind == kW0;
      schedule->orders[r].push_back(
          Action::Single({kOp[kind], on_chunk0 ? chunk0 : chunk1, MicrobatchIndex(j)}));
    }
  }
  return Status();
}

}  // namespace

Status GenerateVHalf(const ScheduleParams& params, Schedule* schedule) {
  return GenerateVGreedy("V-Half", Block::kHalf, params, schedule);
}

Status GenerateVMin(const ScheduleParams& params, Schedule* schedule) {
  return GenerateVGreedy("V-Min", Block::kMin, params, schedule);
}

}  // namespace ppsim
