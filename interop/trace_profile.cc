#include "interop/trace_profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "base/json.h"
#include "base/numbers.h"
#include "config/units.h"

namespace ppsim {
namespace {

bool IsCompute(TraceActionType t) {
  return t == TraceActionType::kForward || t == TraceActionType::kBackwardInput ||
         t == TraceActionType::kBackwardWeight || t == TraceActionType::kFullBackward ||
         t == TraceActionType::kOverlapFB;
}

char Letter(TraceActionType t) {
  switch (t) {
    case TraceActionType::kForward:
      return 'F';
    case TraceActionType::kBackwardInput:
      return 'I';
    case TraceActionType::kBackwardWeight:
      return 'W';
    default:
      return 'B';
  }
}

std::string Sources(const ProfilerTrace& trace) {
  std::string text;
  for (const TraceRank& r : trace.ranks) text += (text.empty() ? "" : ", ") + r.file;
  return text;
}

double Median(std::vector<double> v) { return SpreadOf(std::move(v)).median_s; }

// The steps by name: each one's duration on every rank that has it, in the first rank's order.
void StepTimes(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> durations;
  for (const TraceRank& r : trace.ranks) {
    for (const TraceStep& s : r.steps) {
      if (durations[s.name].empty()) names.push_back(s.name);
      durations[s.name].push_back(s.duration_s);
    }
  }
  std::vector<double> steady;
  for (size_t k = 0; k < names.size(); ++k) {
    StepTime step{names[k], Median(durations[names[k]]), names.size() == 1 || k > 0};
    if (step.steady) steady.push_back(step.duration_s);
    analysis->steps.push_back(step);
  }
  analysis->median_step_s = Median(steady);
  analysis->mean_step_s = SpreadOf(steady).mean_s;
  if (names.size() > 1) {
    analysis->notes.push_back(names[0] + " skipped as warm-up; medians over the " +
                              std::to_string(names.size() - 1) + " steps after it");
  }
}

bool SteadyStep(const TraceAnalysis& analysis, const TraceRank& rank, int32_t step) {
  if (step < 0) return false;
  const std::string& name = rank.steps[step].name;
  for (const StepTime& s : analysis.steps) {
    if (s.name == name) return s.steady;
  }
  return false;
}

// One action's time (see the header): GPU compute kernels, or the CPU range less its waits plus
// the send range that follows it.
double ActionSeconds(const TraceRank& rank, size_t index, bool gpu) {
  const TraceAction& a = rank.actions[index];
  if (gpu) return a.gpu_compute_s;
  double seconds = a.cpu_end_s - a.cpu_start_s - a.cpu_comm_s;
  const TraceActionType send = a.type == TraceActionType::kForward ? TraceActionType::kSendForward
                                                                   : TraceActionType::kSendBackward;
  for (size_t k = index + 1; k < rank.actions.size() && k <= index + 2; ++k) {
    const TraceAction& next = rank.actions[k];
    if (next.type == send && next.stage == a.stage && next.microbatch == a.microbatch) {
      seconds += next.cpu_end_s - next.cpu_start_s;
    }
  }
  return seconds;
}

void StageSpreads(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  // samples[stage][type letter]
  std::map<int32_t, std::map<char, std::vector<double>>> samples;
  std::map<int32_t, int32_t> rank_of;
  std::map<int32_t, int64_t> bytes;
  std::vector<double> waits;
  for (const TraceRank& r : trace.ranks) {
    for (size_t k = 0; k < r.actions.size(); ++k) {
      const TraceAction& a = r.actions[k];
      if (!SteadyStep(*analysis, r, a.step)) continue;
      if (a.message_bytes >= 0) bytes[a.stage] = std::max(bytes[a.stage], a.message_bytes);
      if (!IsCompute(a.type) || a.type == TraceActionType::kOverlapFB) continue;
      if (!rank_of.count(a.stage)) rank_of[a.stage] = r.rank;
      if (analysis->gpu && a.kernels == 0) continue;
      samples[a.stage][Letter(a.type)].push_back(ActionSeconds(r, k, analysis->gpu));
      if (!analysis->gpu && a.cpu_comm_s > 0) waits.push_back(a.cpu_comm_s);
      analysis->num_microbatches = std::max(analysis->num_microbatches, a.microbatch + 1);
    }
  }
  for (const auto& [stage, by_type] : samples) {
    StageTimes t;
    t.stage = stage;
    t.rank = rank_of[stage];
    for (const auto& [letter, values] : by_type) {
      Spread* spread = letter == 'F' ? &t.f : letter == 'I' ? &t.i : letter == 'W' ? &t.w : &t.b;
      *spread = SpreadOf(values);
    }
    t.message_bytes = bytes.count(stage) ? bytes[stage] : -1;
    analysis->stages.push_back(t);
    analysis->num_stages = std::max(analysis->num_stages, stage + 1);
  }
  if (!analysis->gpu) {
    analysis->p2p = SpreadOf(waits);
    analysis->p2p.median_s = analysis->p2p.p10_s;
    analysis->p2p_source =
        "p10 of " + std::to_string(waits.size()) + " blocking receive times inside the actions";
  }
}

void CollectiveTotals(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  std::map<TraceCollectiveKind, CollectiveTotal> totals;
  std::vector<double> send_recv;
  for (const TraceRank& r : trace.ranks) {
    for (const TraceCollective& c : r.collectives) {
      CollectiveTotal& t = totals[c.kind];
      t.kind = c.kind;
      ++t.count;
      t.bytes += std::max<int64_t>(c.bytes, 0);
      t.kernel_s += c.duration_s;
      if (c.from_kernel && c.kind == TraceCollectiveKind::kSendRecv)
        send_recv.push_back(c.duration_s);
    }
  }
  for (const auto& [kind, total] : totals) analysis->collectives.push_back(total);
  if (analysis->gpu && !send_recv.empty()) {
    analysis->p2p = SpreadOf(send_recv);
    analysis->p2p_source =
        "median of " + std::to_string(send_recv.size()) + " NCCL SendRecv kernels";
  } else if (analysis->gpu) {
    analysis->p2p_source = "no SendRecv kernels: 0";
  }
}

// The time each steady step spends outside the pipeline actions, the least over the ranks (see the
// header). A rank without actions in a step has no sample.
void OutsideActions(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  std::map<std::string, double> least;
  for (const TraceRank& r : trace.ranks) {
    for (size_t k = 0; k < r.steps.size(); ++k) {
      const int32_t step = static_cast<int32_t>(k);
      if (!SteadyStep(*analysis, r, step)) continue;
      double first = 0, last = 0;
      bool any = false;
      for (const TraceAction& a : r.actions) {
        if (a.step != step) continue;
        first = any ? std::min(first, a.cpu_start_s) : a.cpu_start_s;
        last = any ? std::max(last, a.cpu_end_s) : a.cpu_end_s;
        any = true;
      }
      if (!any) continue;
      const TraceStep& s = r.steps[k];
      const double outside =
          std::max(0.0, first - s.start_s) + std::max(0.0, s.start_s + s.duration_s - last);
      auto [it, inserted] = least.emplace(s.name, outside);
      if (!inserted) it->second = std::min(it->second, outside);
    }
  }
  std::vector<double> samples;
  for (const auto& [name, seconds] : least) samples.push_back(seconds);
  analysis->outside = SpreadOf(std::move(samples));
}

void RankUses(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  std::vector<double> medians;
  for (const TraceRank& r : trace.ranks) {
    RankUse use;
    use.rank = r.rank;
    if (r.has_gpu && r.wall_s > 0) use.busy_fraction = r.gpu_busy_s / r.wall_s;
    std::vector<double> steps;
    for (size_t s = 0; s < r.steps.size(); ++s) {
      if (SteadyStep(*analysis, r, static_cast<int32_t>(s))) steps.push_back(r.steps[s].duration_s);
    }
    use.median_step_s = Median(steps);
    medians.push_back(use.median_step_s);
    use.unattributed_kernels = r.unattributed_kernels;
    use.unattributed_kernel_s = r.unattributed_kernel_s;
    for (const TraceAction& a : r.actions) {
      if (r.has_gpu && IsCompute(a.type) && a.kernels == 0) ++use.actions_without_kernels;
    }
    analysis->ranks.push_back(use);
  }
  const double limit = 1 + kStragglerThreshold;
  const double rank_median = Median(medians);
  for (const RankUse& u : analysis->ranks) {
    if (rank_median > 0 && u.median_step_s > limit * rank_median) {
      analysis->stragglers.push_back(
          "rank " + std::to_string(u.rank) + ": median step " + HumanDuration(u.median_step_s) +
          ", " + HumanPercent(u.median_step_s / rank_median - 1) + " above the ranks' median");
    }
  }
  for (const StepTime& s : analysis->steps) {
    if (analysis->median_step_s > 0 && s.duration_s > limit * analysis->median_step_s) {
      analysis->stragglers.push_back(s.name + ": " + HumanDuration(s.duration_s) + ", " +
                                     HumanPercent(s.duration_s / analysis->median_step_s - 1) +
                                     " above the median step" + (s.steady ? "" : " (warm-up)"));
    }
  }
}

// The first steady step's compute actions of each pipeline rank (the first rank holding each
// stage; ranks whose stages are already held are data-parallel replicas).
void MeasuredOrder(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  std::set<int32_t> held;
  for (const TraceRank& r : trace.ranks) {
    std::vector<std::string> row;
    std::set<int32_t> stages;
    int32_t step = -1;
    for (const TraceAction& a : r.actions) {
      if (!IsCompute(a.type) || !SteadyStep(*analysis, r, a.step)) continue;
      if (step < 0) step = a.step;
      if (a.step != step) break;
      stages.insert(a.stage);
      auto word = [](int32_t stage, char letter, int32_t mb) {
        return std::to_string(stage) + letter + std::to_string(mb);
      };
      if (a.type == TraceActionType::kOverlapFB) {
        row.push_back(word(a.stage, 'F', a.microbatch));
        row.push_back(word(a.overlap_stage, 'B', a.overlap_microbatch));
      } else {
        row.push_back(word(a.stage, Letter(a.type), a.microbatch));
      }
    }
    bool replica = false;
    for (int32_t s : stages) replica = replica || held.count(s) > 0;
    if (row.empty()) continue;
    if (replica) {
      analysis->notes.push_back("rank " + std::to_string(r.rank) +
                                " repeats stages of an earlier rank (a data-parallel replica): "
                                "not in the replayed order");
      continue;
    }
    held.insert(stages.begin(), stages.end());
    analysis->order.push_back(std::move(row));
  }
}

}  // namespace

Spread SpreadOf(std::vector<double> values) {
  Spread s;
  s.count = static_cast<int32_t>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  double sum = 0;  // in sorted order, so that the sum does not depend on the input's order
  for (double v : values) sum += v;
  s.mean_s = sum / static_cast<double>(n);
  s.median_s = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min_s = values.front();
  s.max_s = values.back();
  auto rank = [&](double q) {
    const size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return values[std::min(n - 1, k == 0 ? 0 : k - 1)];
  };
  s.p10_s = rank(0.10);
  s.p90_s = rank(0.90);
  return s;
}

Status AnalyzeTrace(const ProfilerTrace& trace, TraceAnalysis* analysis) {
  *analysis = TraceAnalysis();
  bool any_steps = false;
  bool any_actions = false;
  for (const TraceRank& r : trace.ranks) {
    analysis->gpu = analysis->gpu || r.has_gpu;
    any_steps = any_steps || !r.steps.empty();
    for (const TraceAction& a : r.actions) any_actions = any_actions || IsCompute(a.type);
  }
  if (!any_steps) {
    return Status::InvalidInput(Sources(trace) +
                                ": no ProfilerStep#N ranges; profile with a "
                                "torch.profiler schedule and call prof.step() once per step, or "
                                "(Nsight Systems) wrap each step in an NVTX range named "
                                "ProfilerStep#N");
  }
  if (!any_actions) {
    analysis->notes.push_back(
        "no pipeline actions (torch.distributed.pipelining's record_function ranges "
        "PP:<stage><F|I|W|B><microbatch>, PP:(...)OVERLAP_F_B, Forward <i> / Backward <i>): no "
        "stages, no profile");
  }
  if (!analysis->gpu) {
    analysis->notes.push_back(
        "no GPU kernels (a CPU-only trace): action times are CPU ranges "
        "less their blocking receives, plus their sends");
  }
  StepTimes(trace, analysis);
  StageSpreads(trace, analysis);
  CollectiveTotals(trace, analysis);
  RankUses(trace, analysis);
  OutsideActions(trace, analysis);
  MeasuredOrder(trace, analysis);
  if (!analysis->missing_stages.empty()) {
    std::string list;
    for (int32_t s : analysis->missing_stages)
      list += (list.empty() ? "" : ", ") + std::to_string(s);
    analysis->notes.push_back("no forward of stage " + list +
                              " in the steady steps: the traces of every pipeline rank make a "
                              "profile");
  }
  for (int32_t s = 0; s < analysis->num_stages; ++s) {
    bool found = false;
    for (const StageTimes& t : analysis->stages) found = found || (t.stage == s && t.f.count > 0);
    if (!found) analysis->missing_stages.push_back(s);
  }
  return Status();
}

}  // namespace ppsim

namespace ppsim {
namespace {

// Seconds to the nanosecond: the trace's microseconds with fractions (1e-3 us) are exact there,
// and the conversion's rounding noise (0.2032910000000001) is not written.
std::string Seconds(double s) { return FormatNumber(std::round(s * 1e9) / 1e9); }

std::string SpreadText(const Spread& s) {
  return HumanDuration(s.median_s) + " (" + std::to_string(s.count) + " samples, min " +
         HumanDuration(s.min_s) + ", p10 " + HumanDuration(s.p10_s) + ", p90 " +
         HumanDuration(s.p90_s) + ", max " + HumanDuration(s.max_s) + ")";
}

std::string StepRange(const TraceAnalysis& analysis) {
  std::string first;
  std::string last;
  for (const StepTime& s : analysis.steps) {
    if (!s.steady) continue;
    if (first.empty()) first = s.name;
    last = s.name;
  }
  return first == last ? first : first + " to " + last;
}

}  // namespace

std::string FormatProfileTextproto(const ProfilerTrace& trace, const TraceAnalysis& analysis) {
  std::string out = "# ppsim profile (models/profile.proto) written by `ppsim profile` from " +
                    std::to_string(trace.ranks.size()) + " PyTorch profiler trace(s):\n";
  for (const TraceRank& r : trace.ranks) {
    out += "#   rank " + std::to_string(r.rank) + ": " + r.file + "\n";
  }
  out += "# Times are seconds: medians over the microbatches of " + StepRange(analysis) + ".\n";
  for (const std::string& note : analysis.notes) out += "# " + note + ".\n";
  out += analysis.gpu ? "# An action's time is the union of its compute kernels' intervals.\n" : "";
  out += "# Measured p2p: " + HumanDuration(analysis.p2p.median_s) + " (" + analysis.p2p_source +
         "); `ppsim run --p2p-latency` takes it.\n";
  // A field goes in only when every stage has it (the profile reader's rule).
  auto all = [&](Spread StageTimes::*field) {
    for (const StageTimes& t : analysis.stages) {
      if ((t.*field).count == 0) return false;
    }
    return true;
  };
  bool all_bytes = true;
  for (const StageTimes& t : analysis.stages) all_bytes = all_bytes && t.message_bytes >= 0;
  const std::pair<const char*, Spread StageTimes::*> fields[] = {{"f_s", &StageTimes::f},
                                                                 {"i_s", &StageTimes::i},
                                                                 {"w_s", &StageTimes::w},
                                                                 {"b_s", &StageTimes::b}};
  std::map<int32_t, int32_t> stages_on_rank;
  for (const StageTimes& t : analysis.stages) ++stages_on_rank[t.rank];
  for (const StageTimes& t : analysis.stages) {
    out += "stages {  # stage " + std::to_string(t.stage) + ", on rank " + std::to_string(t.rank) +
           "\n";
    for (const auto& [name, field] : fields) {
      if (!all(field)) continue;
      out += "  " + std::string(name) + ": " + Seconds((t.*field).mean_s) + "  # mean; median " +
             SpreadText(t.*field) + "\n";
    }
    if (all_bytes) {
      out += "  message_bytes: " + std::to_string(t.message_bytes) +
             "  # the largest send/recv of its actions (recorded input shapes x dtype)\n";
    }
    if (analysis.outside.count > 0) {
      const int32_t share = stages_on_rank[t.rank];
      out += "  optimizer_step_s: " + Seconds(analysis.outside.mean_s / share) +
             "  # a step's time outside the pipeline actions (the optimizer step, zero_grad, "
             "waits), the least over ranks, mean" +
             (share > 1 ? ", / " + std::to_string(share) + " stages on the rank" : "") + ": " +
             SpreadText(analysis.outside) + "\n";
    }
    out += "}\n";
  }
  return out;
}

std::string FormatOrderCsv(const TraceAnalysis& analysis) {
  std::string out;
  for (const std::vector<std::string>& row : analysis.order) {
    for (size_t k = 0; k < row.size(); ++k) out += (k > 0 ? "," : "") + row[k];
    out += "\n";
  }
  return out;
}

std::string FormatSummaryTable(const ProfilerTrace& trace, const TraceAnalysis& analysis,
                               const TraceReplay& replay) {
  std::string out;
  out += "ranks:\n";
  for (size_t k = 0; k < trace.ranks.size(); ++k) {
    const TraceRank& r = trace.ranks[k];
    const RankUse& u = analysis.ranks[k];
    out += "  rank " + std::to_string(r.rank) + " of " + std::to_string(r.world_size) +
           (r.backend.empty() ? "" : " (" + r.backend + ")") + "  " + r.file + "\n";
    out += "    median step " + HumanDuration(u.median_step_s);
    if (u.busy_fraction >= 0) {
      out += ", GPU busy " + HumanPercent(u.busy_fraction) + " of " + HumanDuration(r.wall_s) +
             ", " + std::to_string(u.unattributed_kernels) + " kernels under no action (" +
             HumanDuration(u.unattributed_kernel_s) + "), " +
             std::to_string(u.actions_without_kernels) + " actions without kernels";
    } else {
      out += ", no GPU kernels";
    }
    out += "\n";
  }
  out += "steps (median over ranks):\n";
  for (const StepTime& s : analysis.steps) {
    out +=
        "  " + s.name + "  " + HumanDuration(s.duration_s) + (s.steady ? "" : "  (warm-up)") + "\n";
  }
  out += "  median steady step  " + HumanDuration(analysis.median_step_s) + "\n";
  out += "  mean steady step    " + HumanDuration(analysis.mean_step_s) + "\n";
  out += "stages (" + std::to_string(analysis.num_stages) + ", " +
         std::to_string(analysis.num_microbatches) + " microbatches):\n";
  for (const StageTimes& t : analysis.stages) {
    out += "  stage " + std::to_string(t.stage) + " (rank " + std::to_string(t.rank) + ")\n";
    const std::pair<const char*, const Spread*> rows[] = {
        {"F", &t.f}, {"I", &t.i}, {"W", &t.w}, {"B", &t.b}};
    for (const auto& [name, spread] : rows) {
      if (spread->count > 0) out += "    " + std::string(name) + "  " + SpreadText(*spread) + "\n";
    }
    if (t.message_bytes >= 0) out += "    message  " + HumanBytes(t.message_bytes) + "\n";
  }
  out += "p2p: " + HumanDuration(analysis.p2p.median_s) + " (" + analysis.p2p_source + ")\n";
  if (analysis.outside.count > 0) {
    out += "outside the actions: " + SpreadText(analysis.outside) +
           " per step (optimizer step, zero_grad, waits; the least over ranks)\n";
  }
  out += "collectives:";
  if (analysis.collectives.empty()) out += " none";
  out += "\n";
  for (const CollectiveTotal& c : analysis.collectives) {
    out += "  " + std::string(TraceCollectiveKindName(c.kind)) + "  " + std::to_string(c.count) +
           " ops, " + HumanBytes(static_cast<double>(c.bytes)) + ", " + HumanDuration(c.kernel_s) +
           "\n";
  }
  out += "stragglers (> " + HumanPercent(kStragglerThreshold) + " above the median):";
  if (analysis.stragglers.empty()) out += " none";
  out += "\n";
  for (const std::string& s : analysis.stragglers) out += "  " + s + "\n";
  for (const std::string& n : analysis.notes) out += "note: " + n + "\n";
  if (replay.ran) {
    out += "replay: simulated " + HumanDuration(replay.simulated_s) + " against the measured " +
           HumanDuration(replay.measured_s) + " mean steady step: error " +
           (replay.error >= 0 ? "+" : "") + HumanPercent(replay.error) + "\n";
  }
  if (!replay.note.empty()) out += "replay: " + replay.note + "\n";
  if (!replay.command.empty()) out += "rerun: " + replay.command + "\n";
  return out;
}

std::string FormatSummaryJson(const ProfilerTrace& trace, const TraceAnalysis& analysis,
                              const TraceReplay& replay) {
  using J = nlohmann::ordered_json;
  J j;
  j["ranks"] = J::array();
  for (size_t k = 0; k < trace.ranks.size(); ++k) {
    const TraceRank& r = trace.ranks[k];
    const RankUse& u = analysis.ranks[k];
    J rank = {{"rank", r.rank},
              {"world_size", r.world_size},
              {"backend", r.backend},
              {"file", r.file},
              {"median_step_s", JsonNumber(u.median_step_s)}};
    rank["gpu_busy_fraction"] = nullptr;
    if (u.busy_fraction >= 0) rank["gpu_busy_fraction"] = JsonNumber(u.busy_fraction);
    rank["unattributed_kernels"] = u.unattributed_kernels;
    rank["unattributed_kernel_s"] = JsonNumber(u.unattributed_kernel_s);
    rank["actions_without_kernels"] = u.actions_without_kernels;
    j["ranks"].push_back(rank);
  }
  j["steps"] = J::array();
  for (const StepTime& s : analysis.steps) {
    j["steps"].push_back(
        {{"name", s.name}, {"duration_s", JsonNumber(s.duration_s)}, {"steady", s.steady}});
  }
  j["median_step_s"] = JsonNumber(analysis.median_step_s);
  j["mean_step_s"] = JsonNumber(analysis.mean_step_s);
  j["collectives"] = J::array();
  for (const CollectiveTotal& c : analysis.collectives) {
    j["collectives"].push_back({{"kind", TraceCollectiveKindName(c.kind)},
                                {"count", c.count},
                                {"bytes", c.bytes},
                                {"kernel_s", JsonNumber(c.kernel_s)}});
  }
  auto spread = [](const Spread& s) {
    return J{{"count", s.count},
             {"mean_s", JsonNumber(s.mean_s)},
             {"median_s", JsonNumber(s.median_s)},
             {"min_s", JsonNumber(s.min_s)},
             {"p10_s", JsonNumber(s.p10_s)},
             {"p90_s", JsonNumber(s.p90_s)},
             {"max_s", JsonNumber(s.max_s)}};
  };
  j["stages"] = J::array();
  for (const StageTimes& t : analysis.stages) {
    J stage = {{"stage", t.stage}, {"rank", t.rank}};
    if (t.f.count > 0) stage["f"] = spread(t.f);
    if (t.i.count > 0) stage["i"] = spread(t.i);
    if (t.w.count > 0) stage["w"] = spread(t.w);
    if (t.b.count > 0) stage["b"] = spread(t.b);
    stage["message_bytes"] = t.message_bytes >= 0 ? J(t.message_bytes) : J();
    j["stages"].push_back(stage);
  }
  j["microbatches"] = analysis.num_microbatches;
  j["gpu"] = analysis.gpu;
  j["p2p_s"] = JsonNumber(analysis.p2p.median_s);
  j["p2p_source"] = analysis.p2p_source;
  j["outside_actions_s"] = JsonNumber(analysis.outside.mean_s);
  j["stragglers"] = analysis.stragglers;
  j["notes"] = analysis.notes;
  J r = {{"ran", replay.ran}};
  if (replay.ran) {
    r["simulated_s"] = JsonNumber(replay.simulated_s);
    r["measured_s"] = JsonNumber(replay.measured_s);
    r["error"] = JsonNumber(replay.error);
  }
  r["command"] = replay.command;
  r["note"] = replay.note;
  j["replay"] = r;
  return FormatJsonPretty(j) + "\n";
}

}  // namespace ppsim
