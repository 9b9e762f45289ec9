// Random feasible schedules for property tests.
#ifndef PPSIM_TESTS_SUPPORT_RANDOM_SCHEDULE_H_
#define PPSIM_TESTS_SUPPORT_RANDOM_SCHEDULE_H_

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "schedules/schedule.h"

namespace ppsim {

// p ranks, s stages (each rank holds at least one, the rest placed at random), m microbatches.
// Each (stage, microbatch) uses a full B or a split I + W at random. The orders are the
// projection of a random topological order of the ops, so the schedule never deadlocks; with
// probability overlap_probability a ready F is fused with a ready full B of another microbatch on
// the same rank into an OVERLAP_F_B.
inline Schedule RandomSchedule(std::mt19937_64& rng, int32_t p, int32_t s, int32_t m,
                               double overlap_probability) {
  Schedule sched;
  sched.num_ranks = p;
  sched.num_stages = s;
  sched.num_microbatches = m;
  std::vector<int32_t> ranks(p);
  std::iota(ranks.begin(), ranks.end(), 0);
  std::shuffle(ranks.begin(), ranks.end(), rng);
  for (int32_t stage = 0; stage < s; ++stage) {
    const int32_t rank = stage < p ? ranks[stage] : static_cast<int32_t>(rng() % p);
    sched.stage_to_rank.push_back(RankIndex(rank));
  }
  std::vector<bool> split(static_cast<size_t>(s) * m);
  for (size_t i = 0; i < split.size(); ++i) split[i] = rng() % 2 == 0;
  sched.orders.resize(p);

  std::vector<Op> ready;
  for (int32_t j = 0; j < m; ++j) ready.push_back({OpKind::kForward, StageIndex(0), MicrobatchIndex(j)});
  auto backward_kind = [&](int32_t stage, int32_t j) {
    return split[static_cast<size_t>(stage) * m + j] ? OpKind::kBackwardInput : OpKind::kBackward;
  };
  // Makes the ops that `op` enables ready.
  auto emitted = [&](const Op& op) {
    const int32_t stage = op.stage.value();
    const int32_t j = op.microbatch.value();
    switch (op.kind) {
      case OpKind::kForward:
        if (stage + 1 < s) {
          ready.push_back({OpKind::kForward, StageIndex(stage + 1), MicrobatchIndex(j)});
        } else {
          ready.push_back({backward_kind(stage, j), StageIndex(stage), MicrobatchIndex(j)});
        }
        break;
      case OpKind::kBackwardInput:
        ready.push_back({OpKind::kBackwardWeight, StageIndex(stage), MicrobatchIndex(j)});
        [[fallthrough]];
      case OpKind::kBackward:
        if (stage > 0) {
          ready.push_back({backward_kind(stage - 1, j), StageIndex(stage - 1), MicrobatchIndex(j)});
        }
        break;
      case OpKind::kBackwardWeight: break;
    }
  };
  std::uniform_real_distribution<double> unit(0, 1);
  while (!ready.empty()) {
    const size_t pick = rng() % ready.size();
    const Op op = ready[pick];
    ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
    const int32_t rank = sched.stage_to_rank[op.stage.value()].value();
    if (op.kind == OpKind::kForward && unit(rng) < overlap_probability) {
      auto partner = std::find_if(ready.begin(), ready.end(), [&](const Op& b) {
        return b.kind == OpKind::kBackward && b.microbatch != op.microbatch &&
               sched.stage_to_rank[b.stage.value()].value() == rank;
      });
      if (partner != ready.end()) {
        const Op backward = *partner;
        ready.erase(partner);
        sched.orders[rank].push_back(Action::OverlapForwardBackward(op, backward));
        emitted(op);
        emitted(backward);
        continue;
      }
    }
    sched.orders[rank].push_back(Action::Single(op));
    emitted(op);
  }
  return sched;
}

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_RANDOM_SCHEDULE_H_
