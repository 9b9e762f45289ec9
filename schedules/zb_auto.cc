// The heuristic of the zero-bubble paper's section 3.1, step for step as auto_schedule.py's
// Graph.manual_order (tag zero-bubble-v0.1.0) takes it, so that its tie-breaks, and hence the
// paper's Table 5 figures, come out the same. Names follow the paper: B is the backward for inputs
// (ppsim's I). Every op's time is its completion time with the op as early as the order so far
// and its dependencies allow.
#include "schedules/zb_auto.h"

#include <algorithm>
#include <limits>
#include <string>

#include "schedules/one_stage_per_rank.h"

namespace ppsim {
namespace {

enum Kind { kF = 0, kB = 1, kW = 2 };

// One run of the heuristic with one setting of its knobs.
class Heuristic {
 public:
  Heuristic(const std::vector<ZeroBubbleStage>& stages, int32_t microbatches)
      : stages_(stages),
        p_(static_cast<int32_t>(stages.size())),
        m_(microbatches),
        done_(3, std::vector<int32_t>(stages.size(), 0)),
        end_(stages.size(), 0),
        mem_(stages.size(), 0),
        bubble_(stages.size(), 0),
        time_(3 * stages.size() * microbatches, 0),
        orders_(stages.size()) {}

  // False when an op does not fit within a limit (the reference raises "Cannot fit memory").
  bool Run(bool allow_bubble_before_first_b, bool prioritize_b, bool no_bubble_greedy);

  // The longest stage span. REQUIRES: Run() returned true.
  int64_t Span() const {
    int64_t span = 0;
    for (int32_t s = 0; s < p_; ++s) {
      span = std::max(span, Time(kW, s, m_ - 1) - Time(kF, s, 0) + stages_[s].forward_ticks);
    }
    return span;
  }
  // Every op after its dependencies: the reference's final assertions.
  bool Consistent() const;
  const std::vector<std::vector<Action>>& orders() const { return orders_; }

 private:
  int64_t Cost(Kind kind, int32_t s) const {
    const ZeroBubbleStage& stage = stages_[s];
    return kind == kF   ? stage.forward_ticks
           : kind == kB ? stage.backward_input_ticks
                        : stage.backward_weight_ticks;
  }
  int64_t Delta(Kind kind, int32_t s) const {
    const ZeroBubbleStage& stage = stages_[s];
    return kind == kF   ? stage.activation_bytes
           : kind == kB ? stage.activation_w_bytes - stage.activation_bytes
                        : -stage.activation_w_bytes;
  }
  int64_t Limit(int32_t s) const { return stages_[s].limit_bytes; }
  // T_comm between stages s and s + 1.
  int64_t Comm(int32_t s) const { return stages_[s].transfer_ticks; }
  int64_t Time(Kind kind, int32_t s, int32_t j) const {
    return time_[(static_cast<size_t>(kind) * p_ + s) * m_ + j];
  }
  int32_t& Done(Kind kind, int32_t s) { return done_[kind][s]; }
  int32_t Done(Kind kind, int32_t s) const { return done_[kind][s]; }
  int64_t MaxBubble() const { return *std::max_element(bubble_.begin(), bubble_.end()); }

  // Places the stage's next op of `kind` at the end of its order. False past the limit.
  bool Put(int32_t s, Kind kind);
  // The warmup forwards of every stage, and microbatch 0's backward.
  bool Warmup(bool allow_bubble_before_first_b);
  // Places W on stage s while one fits before `ready` (when the stage's next op can start), then
  // one more into the gap left when it is bubble enough (or no_bubble_greedy says so).
  bool FillGap(int32_t s, int64_t ready, bool no_bubble_greedy);
  // Places W until `delta` more bytes fit the stage's limit. False when no W is left to free them.
  bool MakeRoom(int32_t s, int64_t delta);

  const std::vector<ZeroBubbleStage>& stages_;
  const int32_t p_;
  const int32_t m_;
  std::vector<std::vector<int32_t>> done_;  // [kind][stage]: ops placed
  std::vector<int64_t> end_;                // the stage's last op's completion
  std::vector<int64_t> mem_;                // live activation bytes
  std::vector<int64_t> bubble_;             // idle time accumulated after the first F
  std::vector<int64_t> time_;               // completion of each (kind, stage, microbatch)
  std::vector<std::vector<Action>> orders_;
};

bool Heuristic::Put(int32_t s, Kind kind) {
  const int32_t j = Done(kind, s);
  if (mem_[s] + Delta(kind, s) > Limit(s)) return false;
  const int64_t unblocked = end_[s] + Cost(kind, s);
  int64_t completion = unblocked;
  if (s > 0 && kind == kF) {
    completion = std::max(completion, Time(kF, s - 1, j) + Comm(s - 1) + Cost(kind, s));
  }
  if (s < p_ - 1 && kind == kB) {
    completion = std::max(completion, Time(kB, s + 1, j) + Comm(s) + Cost(kind, s));
  }
  if (Done(kF, s) > 0) bubble_[s] += completion - unblocked;
  end_[s] = completion;
  time_[(static_cast<size_t>(kind) * p_ + s) * m_ + j] = completion;
  mem_[s] += Delta(kind, s);
  static constexpr OpKind kOpKinds[] = {OpKind::kForward, OpKind::kBackwardInput,
                                        OpKind::kBackwardWeight};
  orders_[s].push_back(Action::Single({kOpKinds[kind], StageIndex(s), MicrobatchIndex(j)}));
  ++Done(kind, s);
  return true;
}

bool Heuristic::Warmup(bool allow_bubble_before_first_b) {
  for (int32_t s = 0; s < p_; ++s) {
    if (!Put(s, kF)) return false;
  }
  // From the last stage up: the forwards stage s can run before microbatch 0's backward reaches
  // it (when it would otherwise idle), within its limit.
  std::vector<int32_t> extra(p_, 0);
  int64_t backward_arrives = 0;
  for (int32_t s = p_ - 1; s >= 0; --s) {
    if (s == p_ - 1) {
      backward_arrives = Time(kF, s, 0) + Cost(kB, s);
      continue;
    }
    int64_t mem = mem_[s];
    int64_t busy_until = end_[s];
    while (Done(kF, s) + extra[s] < m_ && mem + Delta(kF, s) <= Limit(s)) {
      if (allow_bubble_before_first_b) {
        if (busy_until + Cost(kF, s) > backward_arrives + Comm(s)) break;
      } else if (busy_until >= backward_arrives + Comm(s)) {
        break;
      }
      mem += Delta(kF, s);
      busy_until += Cost(kF, s);
      ++extra[s];
    }
    backward_arrives = std::max(busy_until, backward_arrives + Comm(s)) + Cost(kB, s);
  }
  // Each stage runs fewer extra warmup forwards than the one before it (while it has any and
  // forwards remain).
  for (int32_t s = 1; s < p_; ++s) {
    while (extra[s] > 0 && extra[s] >= extra[s - 1] && Done(kF, s) + extra[s] < m_) --extra[s];
  }
  for (int32_t s = 0; s < p_; ++s) {
    for (int32_t k = 0; k < extra[s]; ++k) {
      if (!Put(s, kF)) return false;
    }
  }
  for (int32_t s = p_ - 1; s >= 0; --s) {
    if (!Put(s, kB)) return false;
  }
  return true;
}

bool Heuristic::MakeRoom(int32_t s, int64_t delta) {
  while (mem_[s] + delta > Limit(s)) {
    if (Done(kW, s) >= Done(kB, s) || !Put(s, kW)) return false;
  }
  return true;
}

bool Heuristic::FillGap(int32_t s, int64_t ready, bool no_bubble_greedy) {
  while (Done(kW, s) < Done(kB, s) && end_[s] + Cost(kW, s) <= ready) {
    if (!Put(s, kW)) return false;
  }
  if (Done(kW, s) < Done(kB, s) && end_[s] < ready) {
    // A W overruns the gap: worth it unless the gap is no more than this stage's idle time is
    // below the largest stage's (then only with no_bubble_greedy).
    if (ready - end_[s] > MaxBubble() - bubble_[s] || no_bubble_greedy) return Put(s, kW);
  }
  return true;
}

bool Heuristic::Run(bool allow_bubble_before_first_b, bool prioritize_b, bool no_bubble_greedy) {
  if (!Warmup(allow_bubble_before_first_b)) return false;
  for (int32_t i = 1; i < m_; ++i) {
    // Which stages run a forward before microbatch i's backward.
    std::vector<int32_t> forward(p_, 0);
    for (int32_t s = 0; s < p_; ++s) {
      if (Done(kF, s) >= m_) continue;
      if (prioritize_b && s + 1 < p_ && Done(kF, s) >= Done(kF, s + 1) + 2) {
        // Stage s is ahead: its forward waits when the next stage's F and B would return the
        // backward before it (and the W the forward needs room from) could finish.
        const int64_t next_returns = end_[s + 1] + Cost(kF, s + 1) + Cost(kB, s + 1) + Comm(s);
        if (end_[s] >= next_returns) continue;
        int64_t w_cost = 0;
        int32_t w_count = 0;
        int64_t mem_with_w = mem_[s] + Delta(kF, s);
        while (mem_with_w > Limit(s) && Done(kW, s) + w_count < Done(kB, s)) {
          w_cost += Cost(kW, s);
          mem_with_w += Delta(kW, s);
          ++w_count;
        }
        if (end_[s] + Cost(kF, s) + w_cost <= next_returns) {
          forward[s] = 1;
          continue;
        }
        if (next_returns - end_[s] <= MaxBubble() - bubble_[s]) continue;
      }
      forward[s] = 1;
    }
    for (int32_t s = p_ - 2; s >= 0; --s) forward[s] = std::min(forward[s], forward[s + 1]);
    for (int32_t s = 0; s < p_; ++s) {
      if (forward[s] == 0) continue;
      if (!MakeRoom(s, Delta(kF, s))) return false;
      if (s > 0 && !FillGap(s, Time(kF, s - 1, Done(kF, s)) + Comm(s - 1), no_bubble_greedy)) {
        return false;
      }
      if (!Put(s, kF)) return false;
    }
    for (int32_t s = p_ - 1; s >= 0; --s) {
      if (!MakeRoom(s, Delta(kB, s))) return false;
      if (s + 1 < p_ && !FillGap(s, Time(kB, s + 1, i) + Comm(s), no_bubble_greedy)) return false;
      if (s == 0 && Done(kF, s) == m_) {
        while (Done(kW, s) < Done(kB, s)) {
          if (!Put(s, kW)) return false;
        }
      }
      if (!Put(s, kB)) return false;
    }
  }
  for (int32_t s = 0; s < p_; ++s) {
    while (Done(kW, s) < m_) {
      if (!Put(s, kW)) return false;
    }
  }
  return Consistent();
}

bool Heuristic::Consistent() const {
  for (int32_t s = 0; s < p_; ++s) {
    // The reference can end a setting with forwards missing (an I then comes before its F); its
    // final checks read such an F's time as 0 and pass. Such a setting is dropped here.
    if (Done(kF, s) != m_ || Done(kB, s) != m_ || Done(kW, s) != m_) return false;
  }
  for (int32_t s = 0; s < p_; ++s) {
    for (int32_t j = 0; j < m_; ++j) {
      if (Time(kB, s, j) < Time(kF, s, j) + Cost(kB, s)) return false;
      if (Time(kW, s, j) < Time(kB, s, j) + Cost(kW, s)) return false;
      if (s > 0 && Time(kF, s, j) < Time(kF, s - 1, j) + Comm(s - 1) + Cost(kF, s)) return false;
      if (s < p_ - 1 && Time(kB, s, j) < Time(kB, s + 1, j) + Comm(s) + Cost(kB, s)) return false;
    }
  }
  return true;
}

}  // namespace

Status GenerateZeroBubbleAuto(std::string_view name, const ScheduleParams& params,
                              const std::vector<ZeroBubbleStage>& stages, Schedule* schedule,
                              ZeroBubbleAutoResult* result) {
  RETURN_IF_ERROR(StartOneStagePerRank(name, params, schedule));
  const std::string who(name);
  if (static_cast<int32_t>(stages.size()) != params.num_ranks) {
    return ScheduleParamError(params, "schedule",
                              who + " needs the costs of each of the " +
                                  std::to_string(params.num_ranks) + " stages; got " +
                                  std::to_string(stages.size()));
  }
  constexpr int64_t kMaxTicks = int64_t{1} << 40;
  for (size_t s = 0; s < stages.size(); ++s) {
    const ZeroBubbleStage& stage = stages[s];
    for (int64_t ticks : {stage.forward_ticks, stage.backward_input_ticks,
                          stage.backward_weight_ticks, stage.transfer_ticks}) {
      if (ticks < 0 || ticks > kMaxTicks) {
        return ScheduleParamError(params, "schedule",
                                  who + ": stage " + std::to_string(s) + " has a time of " +
                                      std::to_string(ticks) + " ticks; valid: 0 to 2^40");
      }
    }
    // The live bytes of m microbatches, and limits of up to 2p of them, must not overflow.
    const int64_t most =
        std::numeric_limits<int64_t>::max() /
        (2 * static_cast<int64_t>(std::max(params.num_microbatches, params.num_ranks)) + 2);
    if (stage.activation_bytes > most) {
      return ScheduleParamError(params, "schedule",
                                who + ": stage " + std::to_string(s) +
                                    " has M_B = " + std::to_string(stage.activation_bytes) +
                                    " bytes; valid: at most " + std::to_string(most) +
                                    " for this many microbatches and ranks");
    }
    if (stage.activation_w_bytes < 0 || stage.activation_w_bytes > stage.activation_bytes) {
      return ScheduleParamError(params, "schedule",
                                who + ": stage " + std::to_string(s) +
                                    " has M_W = " + std::to_string(stage.activation_w_bytes) +
                                    " bytes of M_B = " + std::to_string(stage.activation_bytes) +
                                    "; valid: 0 <= M_W <= M_B");
    }
  }
  // Completion times are sums of ops and transfers along the stages' orders: at most 3m ops and
  // p transfers each, kept far from overflow.
  int64_t most_ticks = 0;
  for (const ZeroBubbleStage& stage : stages) {
    most_ticks = std::max({most_ticks, stage.forward_ticks, stage.backward_input_ticks,
                           stage.backward_weight_ticks, stage.transfer_ticks});
  }
  const double total = static_cast<double>(most_ticks) *
                       (3.0 * params.num_microbatches + 2.0 * params.num_ranks) * params.num_ranks;
  if (total > static_cast<double>(int64_t{1} << 61)) {
    return ScheduleParamError(
        params, "schedule",
        who + ": " + std::to_string(params.num_microbatches) + " microbatches of ops up to " +
            std::to_string(most_ticks) +
            " ticks make times beyond 2^61 ticks; valid: shorter ops or fewer "
            "microbatches");
  }
  bool found = false;
  ZeroBubbleAutoResult best;
  for (bool allow_bubble : {true, false}) {
    for (bool prioritize_b : {true, false}) {
      for (bool no_bubble_greedy : {true, false}) {
        Heuristic heuristic(stages, params.num_microbatches);
        if (!heuristic.Run(allow_bubble, prioritize_b, no_bubble_greedy)) continue;
        const int64_t span = heuristic.Span();
        if (found && span >= best.span_ticks) continue;
        found = true;
        best = {span, allow_bubble, prioritize_b, no_bubble_greedy};
        schedule->orders = heuristic.orders();
      }
    }
  }
  if (!found) {
    int32_t stage = 0;
    for (size_t s = 0; s < stages.size(); ++s) {
      if (stages[s].limit_bytes - stages[s].activation_bytes <
          stages[stage].limit_bytes - stages[stage].activation_bytes) {
        stage = static_cast<int32_t>(s);
      }
    }
    return ScheduleParamError(
        params, "schedule",
        who + " cannot fit the microbatches' activations: stage " + std::to_string(stage) +
            " may hold " + std::to_string(stages[stage].limit_bytes) + " bytes, M_B is " +
            std::to_string(stages[stage].activation_bytes) +
            "; the heuristic needs room for at least one microbatch's M_B on every stage, and for "
            "the warmup it plans");
  }
  if (result != nullptr) *result = best;
  return Status();
}

namespace {

// The schedule from params.stage_costs, with each stage's limit `pending` x p x M_B when
// pending > 0, else as given.
Status GenerateFromCosts(std::string_view name, int32_t pending, const ScheduleParams& params,
                         Schedule* schedule) {
  if (params.stage_costs == nullptr) {
    return ScheduleParamError(params, "schedule",
                              std::string(name) +
                                  " is found from the stages' costs and memory, which a schedule "
                                  "alone does not have");
  }
  std::vector<ZeroBubbleStage> stages = *params.stage_costs;
  if (pending > 0) {
    for (ZeroBubbleStage& stage : stages) {
      // Overflow only for an M_B GenerateZeroBubbleAuto refuses.
      if (__builtin_mul_overflow(int64_t{pending} * params.num_ranks, stage.activation_bytes,
                                 &stage.limit_bytes)) {
        stage.limit_bytes = std::numeric_limits<int64_t>::max();
      }
    }
  }
  return GenerateZeroBubbleAuto(name, params, stages, schedule);
}

}  // namespace

Status GenerateZB1p(const ScheduleParams& params, Schedule* schedule) {
  return GenerateFromCosts("ZB-1p", 1, params, schedule);
}

Status GenerateZB2p(const ScheduleParams& params, Schedule* schedule) {
  return GenerateFromCosts("ZB-2p", 2, params, schedule);
}

Status GenerateZBAuto(const ScheduleParams& params, Schedule* schedule) {
  return GenerateFromCosts("ZB-auto", 0, params, schedule);
}

}  // namespace ppsim
