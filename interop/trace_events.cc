#include "interop/trace_events.h"

#include <algorithm>
#include <regex>

namespace ppsim {
namespace {

// The union of intervals, their total length.
double UnionLength(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  double start = 0;
  double end = -1;
  bool open = false;
  for (const auto& [s, e] : intervals) {
    if (!open || s > end) {
      if (open) total += end - start;
      start = s;
      end = e;
      open = true;
    } else {
      end = std::max(end, e);
    }
  }
  if (open) total += end - start;
  return total;
}

}  // namespace

bool CommRangeKind(const std::string& name, TraceCollectiveKind* kind) {
  std::string op;
  for (std::string_view prefix : {"nccl:", "gloo:", "c10d::"}) {
    if (name.starts_with(prefix)) op = name.substr(prefix.size());
  }
  if (op.empty()) return false;
  while (!op.empty() && op.back() == '_') op.pop_back();
  while (!op.empty() && op.front() == '_') op.erase(op.begin());
  std::string flat;
  for (char c : op) {
    if (c != '_') flat += c;
  }
  if (flat.starts_with("allreduce")) {
    *kind = TraceCollectiveKind::kAllReduce;
  } else if (flat.starts_with("allgather")) {
    *kind = TraceCollectiveKind::kAllGather;
  } else if (flat.starts_with("reducescatter")) {
    *kind = TraceCollectiveKind::kReduceScatter;
  } else if (flat.starts_with("broadcast")) {
    *kind = TraceCollectiveKind::kBroadcast;
  } else if (flat.starts_with("alltoall")) {
    *kind = TraceCollectiveKind::kAllToAll;
  } else if (flat == "send" || flat.starts_with("recv") || flat == "isend" || flat == "irecv") {
    *kind = TraceCollectiveKind::kSendRecv;
  } else {
    return false;
  }
  return true;
}

bool NcclKernelKind(const std::string& name, bool* nccl, TraceCollectiveKind* kind) {
  std::string rest;
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
    if (name.starts_with(prefix)) rest = name.substr(prefix.size());
  }
  *nccl = !rest.empty();
  if (rest.empty()) return false;
  const std::string op = rest.substr(0, rest.find_first_of("_("));
  static const std::map<std::string, TraceCollectiveKind> kKinds = {
      {"AllReduce", TraceCollectiveKind::kAllReduce},
      {"AllGather", TraceCollectiveKind::kAllGather},
      {"ReduceScatter", TraceCollectiveKind::kReduceScatter},
      {"Broadcast", TraceCollectiveKind::kBroadcast},
      {"AllToAll", TraceCollectiveKind::kAllToAll},
      {"SendRecv", TraceCollectiveKind::kSendRecv},
      {"Send", TraceCollectiveKind::kSendRecv},
      {"Recv", TraceCollectiveKind::kSendRecv}};
  auto it = kKinds.find(op);
  if (it == kKinds.end()) return false;
  *kind = it->second;
  return true;
}

bool ParseActionName(const std::string& name, TraceAction* action) {
  static const std::regex kPlain(
      R"(PP:(\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*))");
  static const std::regex kOverlap(R"(PP:\((\d+)F(\d+);(\d+)(B|I)(\d+)\)OVERLAP_F_B)");
  static const std::regex kSingle(R"((Forward|Backward) (\d+))");
  static const std::map<std::string, TraceActionType> kTypes = {
      {"F", TraceActionType::kForward},           {"I", TraceActionType::kBackwardInput},
      {"W", TraceActionType::kBackwardWeight},    {"B", TraceActionType::kFullBackward},
      {"SEND_F", TraceActionType::kSendForward},  {"RECV_F", TraceActionType::kRecvForward},
      {"SEND_B", TraceActionType::kSendBackward}, {"RECV_B", TraceActionType::kRecvBackward}};
  std::smatch m;
  auto number = [](const std::string& text) {
    return text.size() > 9 ? -2 : static_cast<int32_t>(std::stol(text));
  };
  action->name = name;
  if (std::regex_match(name, m, kPlain)) {
    auto it = kTypes.find(m[2]);
    action->type = it == kTypes.end() ? TraceActionType::kOther : it->second;
    action->stage = number(m[1]);
    action->microbatch = m[3].length() == 0 ? -1 : number(m[3]);
  } else if (std::regex_match(name, m, kOverlap)) {
    action->type = TraceActionType::kOverlapFB;
    action->stage = number(m[1]);
    action->microbatch = number(m[2]);
    action->overlap_stage = number(m[3]);
    action->overlap_microbatch = number(m[5]);
  } else if (std::regex_match(name, m, kSingle)) {
    action->type = m[1] == "Forward" ? TraceActionType::kForward : TraceActionType::kFullBackward;
    action->stage = -1;
    action->microbatch = number(m[2]);
  } else {
    return false;
  }
  return action->stage >= -1 && action->microbatch >= -1 && action->overlap_microbatch >= -1;
}

const char* TraceCollectiveKindName(TraceCollectiveKind kind) {
  switch (kind) {
    case TraceCollectiveKind::kAllReduce:
      return "all_reduce";
    case TraceCollectiveKind::kAllGather:
      return "all_gather";
    case TraceCollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case TraceCollectiveKind::kBroadcast:
      return "broadcast";
    case TraceCollectiveKind::kAllToAll:
      return "all_to_all";
    case TraceCollectiveKind::kSendRecv:
      return "send_recv";
  }
  return "";
}

namespace {

// The index of the action whose CPU range holds time `t`, or -1: the latest-starting action, as a
// process's actions follow one another on its main thread. REQUIRES: actions sorted by start.
int32_t ActionAt(const std::vector<TraceAction>& actions, double t) {
  auto it = std::upper_bound(actions.begin(), actions.end(), t,
                             [](double v, const TraceAction& a) { return v < a.cpu_start_s; });
  if (it == actions.begin()) return -1;
  --it;
  return it->cpu_end_s >= t ? static_cast<int32_t>(it - actions.begin()) : -1;
}

// Kernels to actions and collectives; CPU communication ranges to actions (and to collectives
// when the rank has no NCCL kernels).
void Attribute(const TraceEvents& events, TraceRank* rank) {
  std::vector<TraceAction>& actions = rank->actions;
  std::vector<std::vector<std::pair<double, double>>> compute(actions.size());
  std::vector<std::vector<std::pair<double, double>>> comm(actions.size());
  std::vector<std::pair<double, double>> all;
  bool any_nccl = false;
  for (const TraceGpuEvent& g : events.gpu) {
    rank->has_gpu = true;
    all.push_back({g.start_s, g.end_s});
    bool nccl = false;
    TraceCollectiveKind kind;
    const bool collective = NcclKernelKind(g.name, &nccl, &kind);
    auto launch = events.launch_s.find(g.correlation);
    const int32_t a = launch == events.launch_s.end() ? -1 : ActionAt(actions, launch->second);
    if (a < 0) {
      ++rank->unattributed_kernels;
      rank->unattributed_kernel_s += g.end_s - g.start_s;
    } else {
      ++actions[a].kernels;
      (nccl ? comm : compute)[a].push_back({g.start_s, g.end_s});
    }
    if (!collective) continue;
    any_nccl = true;
    TraceCollective c{kind, true, g.start_s, g.end_s - g.start_s, g.bytes, g.group_size};
    if (kind == TraceCollectiveKind::kSendRecv &&
        (g.collective_name.find("all_to_all") != std::string::npos ||
         g.collective_name.find("alltoall") != std::string::npos)) {
      c.kind = TraceCollectiveKind::kAllToAll;
    }
    // A SendRecv launched under an all_to_all range is the all-to-all's.
    if (c.kind == TraceCollectiveKind::kSendRecv && launch != events.launch_s.end()) {
      for (const TraceEvents::CommRange& r : events.comm) {
        TraceCollectiveKind range_kind;
        if (r.start_s <= launch->second && launch->second <= r.end_s &&
            CommRangeKind(r.name, &range_kind) && range_kind == TraceCollectiveKind::kAllToAll) {
          c.kind = TraceCollectiveKind::kAllToAll;
        }
      }
    }
    rank->collectives.push_back(c);
  }
  rank->gpu_busy_s = UnionLength(all);
  std::vector<std::vector<std::pair<double, double>>> cpu_comm(actions.size());
  double outer_end = -1;
  for (const TraceEvents::CommRange& r :
       events.comm) {  // sorted by start: outermost ranges come first
    const int32_t a = ActionAt(actions, r.start_s);
    const bool receive = r.name.find("recv") != std::string::npos;
    if (a >= 0) {
      // Blocking receives are waits; a send's issue is the rank's own work.
      if (receive) cpu_comm[a].push_back({r.start_s, std::min(r.end_s, actions[a].cpu_end_s)});
      actions[a].message_bytes = std::max(actions[a].message_bytes, r.input_bytes);
    }
    // The backend's own ranges (gloo:send, nccl:all_reduce) are the collectives: from issue to
    // completion, an async op's wait included. c10d:: ranges only issue them.
    // A range within an earlier one is its inner part (c10d::allreduce_ holds nccl:all_reduce
    // when both are backend ranges); async ranges that only overlap (isends) each count.
    if (any_nccl || r.name.starts_with("c10d::") || r.end_s <= outer_end) continue;
    outer_end = std::max(outer_end, r.end_s);
    TraceCollectiveKind kind;
    CommRangeKind(r.name, &kind);
    rank->collectives.push_back({kind, false, r.start_s, r.end_s - r.start_s, r.input_bytes, 0});
  }
  for (size_t a = 0; a < actions.size(); ++a) {
    actions[a].gpu_compute_s = UnionLength(compute[a]);
    actions[a].gpu_comm_s = UnionLength(comm[a]);
    actions[a].cpu_comm_s = UnionLength(cpu_comm[a]);
  }
}

}  // namespace

void TraceEvents::Span(double start_s, double end_s) {
  first_s = std::min(first_s, start_s);
  last_s = std::max(last_s, end_s);
}

void AddCpuRange(const std::string& name, double start_s, double end_s,
                 const std::function<int64_t()>& input_bytes, TraceEvents* events,
                 TraceRank* rank) {
  if (name.starts_with("ProfilerStep#")) {
    for (const TraceStep& s : rank->steps) {
      if (s.name == name) return;  // the same step twice (Kineto: as cpu_op and user_annotation)
    }
    rank->steps.push_back({name, start_s, end_s - start_s});
    return;
  }
  TraceAction action;
  if (ParseActionName(name, &action)) {
    action.cpu_start_s = start_s;
    action.cpu_end_s = end_s;
    rank->actions.push_back(std::move(action));
    return;
  }
  TraceCollectiveKind kind;
  if (CommRangeKind(name, &kind)) events->comm.push_back({start_s, end_s, name, input_bytes()});
}

void FinishTraceRank(TraceEvents* events, TraceRank* rank) {
  auto by_start = [](const auto& a, const auto& b) { return a.start_s < b.start_s; };
  std::stable_sort(rank->steps.begin(), rank->steps.end(), by_start);
  std::stable_sort(events->comm.begin(), events->comm.end(), by_start);
  std::stable_sort(
      rank->actions.begin(), rank->actions.end(),
      [](const TraceAction& a, const TraceAction& b) { return a.cpu_start_s < b.cpu_start_s; });
  for (TraceAction& a : rank->actions) {
    for (size_t s = 0; s < rank->steps.size(); ++s) {
      const TraceStep& step = rank->steps[s];
      if (step.start_s <= a.cpu_start_s && a.cpu_start_s <= step.start_s + step.duration_s) {
        a.step = static_cast<int32_t>(s);
      }
    }
  }
  Attribute(*events, rank);
  rank->wall_s = events->last_s - events->first_s;
  if (!rank->steps.empty()) {
    rank->wall_s =
        rank->steps.back().start_s + rank->steps.back().duration_s - rank->steps.front().start_s;
  }
}

namespace {

// Distinct ranks agreeing on world_size; with several files, each says its rank.
Status CheckRanks(const std::vector<TraceRank>& ranks, const RankSource& source) {
  // Messages name the flag of `ppsim profile` that sets ranks by order.
  for (size_t i = 0; i < ranks.size(); ++i) {
    const TraceRank& r = ranks[i];
    if (r.rank < 0 && ranks.size() > 1) {
      return Status::InvalidInput(r.file + ": " + source.missing +
                                  ", so its rank is unknown; with " + std::to_string(ranks.size()) +
                                  " trace files each must say its rank (" + source.remedy +
                                  "), or give --ranks-in-order to take the files as ranks 0, 1, "
                                  "... in the order given");
    }
    for (size_t j = 0; j < i; ++j) {
      const TraceRank& o = ranks[j];
      if (r.rank == o.rank) {
        return Status::InvalidInput(r.file + ": rank " + std::to_string(r.rank) + ", as in " +
                                    o.file + "; give one trace per rank");
      }
      if (r.world_size != o.world_size) {
        return Status::InvalidInput(r.file + ": world_size " + std::to_string(r.world_size) +
                                    ", but " + o.file + " has world_size " +
                                    std::to_string(o.world_size) +
                                    "; give traces of one run (its ranks agree on world_size)");
      }
    }
  }
  return Status();
}

}  // namespace

Status OrderTraceRanks(bool ranks_in_order, const RankSource& source, ProfilerTrace* trace) {
  std::vector<TraceRank>& ranks = trace->ranks;
  for (size_t i = 0; i < ranks.size() && ranks_in_order; ++i) {
    if (ranks[i].rank < 0) {
      ranks[i].rank = static_cast<int32_t>(i);
      ranks[i].world_size = static_cast<int32_t>(ranks.size());
    }
  }
  RETURN_IF_ERROR(CheckRanks(ranks, source));
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const TraceRank& a, const TraceRank& b) { return a.rank < b.rank; });
  // One stage per rank ("Forward {i}"): the rank's place among the traces.
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank < 0) ranks[i].rank = 0;
    for (TraceAction& a : ranks[i].actions) {
      if (a.stage == -1) a.stage = static_cast<int32_t>(i);
    }
  }
  return Status();
}

}  // namespace ppsim
