#include "schedules/schedule.h"

#include <algorithm>

namespace ppsim {
namespace {

std::string StageMicrobatch(int32_t stage, int32_t microbatch) {
  return "stage " + std::to_string(stage) + ", microbatch " + std::to_string(microbatch);
}

// Where each kind of op for one (stage, microbatch) was seen: rank and index, or none.
struct Seen {
  int32_t rank = -1;
  size_t index = 0;
};

// Consecutive stages that see the same microbatches form a pipeline. With one such run, or runs
// whose microbatches are not disjoint contiguous ranges, the schedule keeps the single default
// pipeline (and CheckSchedule reports what is missing).
void InferPipelines(Schedule* s) {
  s->pipelines.clear();
  std::vector<std::vector<int32_t>> seen(s->num_stages);
  for (const auto& order : s->orders) {
    for (const Action& action : order) {
      for (int k = 0; k < action.num_ops(); ++k) {
        seen[action.op(k).stage.value()].push_back(action.op(k).microbatch.value());
      }
    }
  }
  for (auto& microbatches : seen) {
    std::sort(microbatches.begin(), microbatches.end());
    microbatches.erase(std::unique(microbatches.begin(), microbatches.end()), microbatches.end());
  }
  std::vector<Pipeline> pipelines;
  std::vector<bool> taken(s->num_microbatches, false);
  for (int32_t first = 0; first < s->num_stages;) {
    int32_t last = first;
    while (last + 1 < s->num_stages && seen[last + 1] == seen[first]) ++last;
    const auto& microbatches = seen[first];
    if (microbatches.empty() ||
        microbatches.back() - microbatches.front() + 1 !=
            static_cast<int32_t>(microbatches.size())) {
      return;
    }
    for (int32_t j : microbatches) {
      if (taken[j]) return;
      taken[j] = true;
    }
    pipelines.push_back(Pipeline{first, last, microbatches.front(), microbatches.back()});
    first = last + 1;
  }
  if (pipelines.size() > 1) s->pipelines = std::move(pipelines);
}

}  // namespace

Pipeline Schedule::PipelineOf(MicrobatchIndex microbatch) const {
  for (const Pipeline& p : pipelines) {
    if (microbatch.value() >= p.first_microbatch && microbatch.value() <= p.last_microbatch) {
      return p;
    }
  }
  return Pipeline{0, num_stages - 1, 0, num_microbatches - 1};
}

std::vector<Pipeline> Schedule::AllPipelines() const {
  if (!pipelines.empty()) return pipelines;
  return {Pipeline{0, num_stages - 1, 0, num_microbatches - 1}};
}

size_t Schedule::NumActions() const {
  size_t n = 0;
  for (const auto& order : orders) n += order.size();
  return n;
}

std::string DescribeActionAt(int32_t rank, size_t index, const Action& action) {
  return "rank " + std::to_string(rank) + ", position " + std::to_string(index + 1) + " (" +
         FormatAction(action) + ")";
}

Status CheckSchedule(const Schedule& s) {
  if (s.num_ranks < 1) return Status::InvalidInput("schedule: no ranks; need at least 1");
  if (static_cast<int32_t>(s.orders.size()) != s.num_ranks) {
    return Status::InvalidInput("schedule: " + std::to_string(s.orders.size()) +
                                " rank orders for " + std::to_string(s.num_ranks) + " ranks");
  }
  if (s.num_stages < 1) return Status::InvalidInput("schedule: no stages; need at least 1");
  if (s.num_microbatches < 1) {
    return Status::InvalidInput("schedule: no microbatches; need at least 1");
  }
  if (static_cast<int32_t>(s.stage_to_rank.size()) != s.num_stages) {
    return Status::InvalidInput("schedule: stage-to-rank map has " +
                                std::to_string(s.stage_to_rank.size()) + " entries for " +
                                std::to_string(s.num_stages) + " stages");
  }
  for (int32_t stage = 0; stage < s.num_stages; ++stage) {
    int32_t rank = s.stage_to_rank[stage].value();
    if (rank < 0 || rank >= s.num_ranks) {
      return Status::InvalidInput("schedule: stage " + std::to_string(stage) + " maps to rank " +
                                  std::to_string(rank) + "; ranks are 0.." +
                                  std::to_string(s.num_ranks - 1));
    }
  }

  if (!s.pipelines.empty()) {
    int32_t next_stage = 0;
    std::vector<bool> covered(s.num_microbatches, false);
    for (const Pipeline& p : s.pipelines) {
      if (p.first_stage != next_stage || p.last_stage < p.first_stage ||
          p.first_microbatch < 0 || p.last_microbatch < p.first_microbatch ||
          p.last_microbatch >= s.num_microbatches) {
        return Status::InvalidInput("schedule: pipelines must cover stages 0.." +
                                    std::to_string(s.num_stages - 1) +
                                    " in order, each with a range of microbatches");
      }
      for (int32_t j = p.first_microbatch; j <= p.last_microbatch; ++j) {
        if (covered[j]) {
          return Status::InvalidInput("schedule: microbatch " + std::to_string(j) +
                                      " is in two pipelines; each flows through one");
        }
        covered[j] = true;
      }
      next_stage = p.last_stage + 1;
    }
    if (next_stage != s.num_stages ||
        std::find(covered.begin(), covered.end(), false) != covered.end()) {
      return Status::InvalidInput("schedule: pipelines must cover every stage and microbatch");
    }
  }

  const size_t cells = static_cast<size_t>(s.num_stages) * s.num_microbatches;
  // Indexed by OpKind, then stage * num_microbatches + microbatch.
  std::vector<Seen> seen[4] = {std::vector<Seen>(cells), std::vector<Seen>(cells),
                               std::vector<Seen>(cells), std::vector<Seen>(cells)};
  for (int32_t rank = 0; rank < s.num_ranks; ++rank) {
    const auto& order = s.orders[rank];
    for (size_t index = 0; index < order.size(); ++index) {
      const Action& action = order[index];
      for (int k = 0; k < action.num_ops(); ++k) {
        const Op& op = action.op(k);
        const int32_t stage = op.stage.value();
        const int32_t microbatch = op.microbatch.value();
        // Formatted only for a message: this loop visits every op of every schedule checked.
        const auto where = [&] { return DescribeActionAt(rank, index, action); };
        if (stage >= s.num_stages) {
          return Status::InvalidInput(where() + ": stage " + std::to_string(stage) +
                                      " is out of range; stages are 0.." +
                                      std::to_string(s.num_stages - 1));
        }
        if (microbatch >= s.num_microbatches) {
          return Status::InvalidInput(where() + ": microbatch " + std::to_string(microbatch) +
                                      " is out of range; microbatches are 0.." +
                                      std::to_string(s.num_microbatches - 1));
        }
        const Pipeline pipeline = s.PipelineOf(op.microbatch);
        if (stage < pipeline.first_stage || stage > pipeline.last_stage) {
          return Status::InvalidInput(where() + ": microbatch " + std::to_string(microbatch) +
                                      " flows through stages " +
                                      std::to_string(pipeline.first_stage) + ".." +
                                      std::to_string(pipeline.last_stage) + ", not stage " +
                                      std::to_string(stage));
        }
        if (s.stage_to_rank[stage].value() != rank) {
          return Status::InvalidInput(where() + ": stage " + std::to_string(stage) +
                                      " belongs to rank " +
                                      std::to_string(s.stage_to_rank[stage].value()) +
                                      "; an action runs on the rank that holds its stage");
        }
        Seen& slot = seen[static_cast<int>(op.kind)][static_cast<size_t>(stage) *
                                                         s.num_microbatches +
                                                     microbatch];
        if (slot.rank >= 0) {
          return Status::InvalidInput(
              where() + ": " + FormatOp(op) + " is repeated; it already appears at " +
              DescribeActionAt(slot.rank, slot.index, s.orders[slot.rank][slot.index]));
        }
        slot = Seen{rank, index};
      }
    }
  }

  auto& forward = seen[static_cast<int>(OpKind::kForward)];
  auto& input = seen[static_cast<int>(OpKind::kBackwardInput)];
  auto& weight = seen[static_cast<int>(OpKind::kBackwardWeight)];
  auto& full = seen[static_cast<int>(OpKind::kBackward)];
  for (int32_t stage = 0; stage < s.num_stages; ++stage) {
    for (int32_t microbatch = 0; microbatch < s.num_microbatches; ++microbatch) {
      const Pipeline pipeline = s.PipelineOf(MicrobatchIndex(microbatch));
      if (stage < pipeline.first_stage || stage > pipeline.last_stage) continue;
      const size_t cell = static_cast<size_t>(stage) * s.num_microbatches + microbatch;
      const std::string what = StageMicrobatch(stage, microbatch);
      auto op_name = [&](char letter) {
        return std::to_string(stage) + letter + std::to_string(microbatch);
      };
      if (forward[cell].rank < 0) {
        return Status::InvalidInput("schedule: " + what + " has no forward (" + op_name('F') +
                                    "); every (stage, microbatch) needs exactly one F");
      }
      const bool has_b = full[cell].rank >= 0;
      const bool has_i = input[cell].rank >= 0;
      const bool has_w = weight[cell].rank >= 0;
      if (has_b && (has_i || has_w)) {
        const Seen& split = has_i ? input[cell] : weight[cell];
        return Status::InvalidInput(
            DescribeActionAt(split.rank, split.index, s.orders[split.rank][split.index]) + ": " +
            what + " already has a full backward (" + op_name('B') +
            "); use either B or I and W, not both");
      }
      if (!has_b && !has_i && !has_w) {
        return Status::InvalidInput("schedule: " + what + " has no backward; every (stage, " +
                                    "microbatch) needs one B, or one I and one W");
      }
      if (has_i != has_w) {
        const Seen& present = has_i ? input[cell] : weight[cell];
        return Status::InvalidInput(
            DescribeActionAt(present.rank, present.index, s.orders[present.rank][present.index]) +
            ": " + what + " has " + (has_i ? "I but no W (" + op_name('W') : "W but no I (" + op_name('I')) +
            "); a split backward needs both");
      }
      if (has_w && weight[cell].index < input[cell].index) {
        return Status::InvalidInput(
            DescribeActionAt(weight[cell].rank, weight[cell].index,
                             s.orders[weight[cell].rank][weight[cell].index]) +
            ": " + op_name('W') + " comes before its " + op_name('I') + " (position " +
            std::to_string(input[cell].index + 1) + "); W needs its I first");
      }
    }
  }
  return Status();
}

Status InferScheduleShape(Schedule* s) {
  s->num_ranks = static_cast<int32_t>(s->orders.size());
  int32_t max_stage = -1;
  int32_t max_microbatch = -1;
  int64_t ops = 0;
  for (const auto& order : s->orders) {
    for (const Action& action : order) {
      ops += action.num_ops();
      for (int k = 0; k < action.num_ops(); ++k) {
        max_stage = std::max(max_stage, action.op(k).stage.value());
        max_microbatch = std::max(max_microbatch, action.op(k).microbatch.value());
      }
    }
  }
  if (max_stage < 0) return Status::InvalidInput("schedule: no actions; nothing to simulate");
  // Every stage and every microbatch needs at least one op, so an index beyond the number of ops
  // leaves gaps; said here, before anything is sized by it.
  for (int32_t rank = 0; rank < s->num_ranks; ++rank) {
    const auto& order = s->orders[rank];
    for (size_t index = 0; index < order.size(); ++index) {
      for (int k = 0; k < order[index].num_ops(); ++k) {
        const Op& op = order[index].op(k);
        const bool stage = op.stage.value() >= ops;
        if (!stage && op.microbatch.value() < ops) continue;
        return Status::InvalidInput(
            DescribeActionAt(rank, index, order[index]) + ": " +
            (stage ? "stage " + std::to_string(op.stage.value())
                   : "microbatch " + std::to_string(op.microbatch.value())) +
            " cannot be: the schedule has " + std::to_string(ops) + " ops, and every " +
            (stage ? "stage" : "microbatch") + " from 0 up needs one");
      }
    }
  }
  s->num_stages = max_stage + 1;
  s->num_microbatches = max_microbatch + 1;
  std::vector<int32_t> owner(s->num_stages, -1);
  std::vector<size_t> owner_index(s->num_stages, 0);
  for (int32_t rank = 0; rank < s->num_ranks; ++rank) {
    const auto& order = s->orders[rank];
    for (size_t index = 0; index < order.size(); ++index) {
      for (int k = 0; k < order[index].num_ops(); ++k) {
        const int32_t stage = order[index].op(k).stage.value();
        if (owner[stage] < 0) {
          owner[stage] = rank;
          owner_index[stage] = index;
        } else if (owner[stage] != rank) {
          return Status::InvalidInput(
              DescribeActionAt(rank, index, order[index]) + ": stage " + std::to_string(stage) +
              " is already on " +
              DescribeActionAt(owner[stage], owner_index[stage],
                               s->orders[owner[stage]][owner_index[stage]]) +
              "; each stage runs on exactly one rank");
        }
      }
    }
  }
  s->stage_to_rank.clear();
  for (int32_t stage = 0; stage < s->num_stages; ++stage) {
    if (owner[stage] < 0) {
      return Status::InvalidInput("schedule: stage " + std::to_string(stage) +
                                  " has no actions; stages are numbered 0.." +
                                  std::to_string(s->num_stages - 1) + " without gaps");
    }
    s->stage_to_rank.push_back(RankIndex(owner[stage]));
  }
  InferPipelines(s);
  return Status();
}

}  // namespace ppsim
