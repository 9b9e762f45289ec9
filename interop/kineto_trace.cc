#include "interop/kineto_trace.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "base/escape.h"
#include "base/files.h"
#include "base/json.h"

namespace ppsim {
namespace {

using Json = nlohmann::json;

// A GPU activity: a kernel, memcpy or memset.
struct GpuEvent {
  double start_s = 0;
  double end_s = 0;
  int64_t correlation = -1;
  bool nccl = false;
  std::string name;
  const Json* args = nullptr;
};

// A CPU range of interest: a communication op, with its recorded inputs.
struct CpuRange {
  double start_s = 0;
  double end_s = 0;
  std::string name;
  const Json* args = nullptr;
};

// Where a byte offset of `text` lies, as "SOURCE:LINE:COL".
std::string Located(std::string_view text, const std::string& source, size_t byte) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return source + ":" + std::to_string(line) + ":" + std::to_string(column);
}

double NumberOr(const Json& event, const char* key, double fallback) {
  auto it = event.find(key);
  if (it == event.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

std::string StringOr(const Json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

// Bytes of one element of a Kineto dtype name: NCCL kernels' "dtype" ("Float", "BFloat16") or a
// CPU op's "Input type" ("float", "c10::BFloat16", "long int"); 0 when unknown.
int64_t DtypeBytes(std::string type) {
  if (type.starts_with("c10::")) type = type.substr(5);
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::map<std::string, int64_t> kSizes = {
      {"float", 4},    {"float32", 4},       {"double", 8},      {"float64", 8}, {"half", 2},
      {"float16", 2},  {"bfloat16", 2},      {"int", 4},         {"int32", 4},   {"long", 8},
      {"long int", 8}, {"int64", 8},         {"short", 2},       {"int16", 2},   {"byte", 1},
      {"char", 1},     {"unsigned char", 1}, {"signed char", 1}, {"bool", 1},    {"uint8", 1},
      {"int8", 1},     {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
  auto it = kSizes.find(type);
  return it == kSizes.end() ? 0 : it->second;
}

// Bytes of a CPU op's tensor inputs from its recorded shapes and types (record_shapes=True):
// the sum over inputs that have both; -1 when none has.
int64_t InputBytes(const Json* args) {
  if (args == nullptr) return -1;
  auto dims = args->find("Input Dims");
  auto types = args->find("Input type");
  if (dims == args->end() || types == args->end() || !dims->is_array() || !types->is_array()) {
    return -1;
  }
  int64_t total = -1;
  for (size_t i = 0; i < dims->size() && i < types->size(); ++i) {
    const Json& shape = (*dims)[i];
    if (!shape.is_array() || shape.empty() || !(*types)[i].is_string()) continue;
    const int64_t element = DtypeBytes((*types)[i].get<std::string>());
    if (element == 0) continue;
    int64_t count = 1;
    for (const Json& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return -1;
      count *= d.get<int64_t>();
    }
    total = std::max<int64_t>(total, 0) + count * element;
  }
  return total;
}

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

// A communication range's collective, by the op name after its prefix ("nccl:all_reduce",
// "gloo:send", "c10d::allreduce_"); false when the name is not one.
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

// An NCCL kernel's collective ("ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_SendRecv(...)"); false for other kernels and NCCL kernels of other kinds.
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

// Parses a pipeline action's range name; false when `name` is not one. "Forward {i}" and
// "Backward {i}" get stage -1 (the rank's stage, set once the ranks are known).
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

// The events of one trace, sorted into what the rank needs.
struct Events {
  std::vector<GpuEvent> gpu;
  std::map<int64_t, double> launch_s;  // runtime call time by correlation id
  std::vector<CpuRange> comm;          // communication ranges
  bool kineto = false;                 // any event of a Kineto category
  bool have_origin = false;
  double origin_us = 0;  // the first event's ts: times are seconds from it
  double first_s = 0;
  double last_s = 0;
};

Status ReadDistributedInfo(const Json& document, const std::string& source, TraceRank* rank) {
  auto info = document.find("distributedInfo");
  rank->world_size = 0;
  rank->rank = -1;
  if (info == document.end()) return Status();
  if (!info->is_object()) {
    return Status::InvalidInput(source +
                                ": distributedInfo is not an object; expected "
                                "{\"rank\": R, \"world_size\": N, \"backend\": ...}");
  }
  auto r = info->find("rank");
  auto w = info->find("world_size");
  if (r == info->end() || !r->is_number_integer() || r->get<int64_t>() < 0 ||
      r->get<int64_t>() > (1 << 24)) {
    return Status::InvalidInput(source +
                                ": distributedInfo.rank missing or not a whole number "
                                "from 0 to 16777216");
  }
  rank->rank = static_cast<int32_t>(r->get<int64_t>());
  if (w != info->end()) {
    if (!w->is_number_integer() || w->get<int64_t>() <= rank->rank ||
        w->get<int64_t>() > (1 << 24)) {
      return Status::InvalidInput(source + ": distributedInfo.world_size " + w->dump() +
                                  " with rank " + std::to_string(rank->rank) +
                                  "; expected a whole number above the rank");
    }
    rank->world_size = static_cast<int32_t>(w->get<int64_t>());
  }
  rank->backend = StringOr(*info, "backend");
  return Status();
}

// One "X" event: a step, an action, a communication range or a GPU activity.
void TakeEvent(const Json& event, Events* events, TraceRank* rank) {
  const std::string cat = StringOr(event, "cat");
  const std::string name = StringOr(event, "name");
  // Microseconds since the epoch (1.7e15) lose tenths of microseconds as seconds in a double:
  // times are taken from the first event's.
  const double ts = NumberOr(event, "ts", 0);
  if (!events->have_origin) {
    events->origin_us = ts;
    events->have_origin = true;
  }
  const double start_s = (ts - events->origin_us) * 1e-6;
  const double end_s = start_s + std::max(0.0, NumberOr(event, "dur", 0)) * 1e-6;
  auto args_it = event.find("args");
  const Json* args = args_it != event.end() && args_it->is_object() ? &*args_it : nullptr;
  auto correlation = [&]() -> int64_t {
    if (args == nullptr) return -1;
    auto c = args->find("correlation");
    return c != args->end() && c->is_number_integer() ? c->get<int64_t>() : -1;
  };
  static const std::set<std::string> kKinetoCats = {
      "cpu_op",     "user_annotation", "cuda_runtime",        "cuda_driver", "kernel", "gpu_memcpy",
      "gpu_memset", "python_function", "gpu_user_annotation", "ac2g",        "Trace"};
  if (kKinetoCats.count(cat) > 0) events->kineto = true;
  events->first_s = std::min(events->first_s, start_s);
  events->last_s = std::max(events->last_s, end_s);
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
    GpuEvent gpu{start_s, end_s, correlation(), false, name, args};
    TraceCollectiveKind kind;
    NcclKernelKind(name, &gpu.nccl, &kind);
    events->gpu.push_back(std::move(gpu));
    return;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver") {
    const int64_t id = correlation();
    if (id >= 0) events->launch_s[id] = start_s;
    return;
  }
  if (cat != "cpu_op" && cat != "user_annotation") return;
  if (name.starts_with("ProfilerStep#")) {
    for (const TraceStep& s : rank->steps) {
      if (s.name == name) return;  // the same step as cpu_op and as user_annotation
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
  if (CommRangeKind(name, &kind)) events->comm.push_back({start_s, end_s, name, args});
}

}  // namespace

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
void Attribute(const Events& events, TraceRank* rank) {
  std::vector<TraceAction>& actions = rank->actions;
  std::vector<std::vector<std::pair<double, double>>> compute(actions.size());
  std::vector<std::vector<std::pair<double, double>>> comm(actions.size());
  std::vector<std::pair<double, double>> all;
  bool any_nccl = false;
  for (const GpuEvent& g : events.gpu) {
    rank->has_gpu = true;
    all.push_back({g.start_s, g.end_s});
    auto launch = events.launch_s.find(g.correlation);
    const int32_t a = launch == events.launch_s.end() ? -1 : ActionAt(actions, launch->second);
    if (a < 0) {
      ++rank->unattributed_kernels;
      rank->unattributed_kernel_s += g.end_s - g.start_s;
    } else {
      ++actions[a].kernels;
      (g.nccl ? comm : compute)[a].push_back({g.start_s, g.end_s});
    }
    bool nccl = false;
    TraceCollectiveKind kind;
    if (!NcclKernelKind(g.name, &nccl, &kind)) continue;
    any_nccl = true;
    TraceCollective c{kind, true, g.start_s, g.end_s - g.start_s, -1, 0};
    if (g.args != nullptr) {
      const std::string collective = StringOr(*g.args, "Collective name");
      if (kind == TraceCollectiveKind::kSendRecv &&
          (collective.find("all_to_all") != std::string::npos ||
           collective.find("alltoall") != std::string::npos)) {
        c.kind = TraceCollectiveKind::kAllToAll;
      }
      const double nelems = NumberOr(*g.args, "In msg nelems", -1);
      const int64_t element = DtypeBytes(StringOr(*g.args, "dtype"));
      if (nelems >= 0 && element > 0) c.bytes = static_cast<int64_t>(nelems) * element;
      c.group_size = static_cast<int32_t>(NumberOr(*g.args, "Group size", 0));
    }
    // A SendRecv launched under an all_to_all range is the all-to-all's.
    if (c.kind == TraceCollectiveKind::kSendRecv && launch != events.launch_s.end()) {
      for (const CpuRange& r : events.comm) {
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
  for (const CpuRange& r : events.comm) {  // sorted by start: outermost ranges come first
    const int32_t a = ActionAt(actions, r.start_s);
    const bool receive = r.name.find("recv") != std::string::npos;
    if (a >= 0) {
      // Blocking receives are waits; a send's issue is the rank's own work.
      if (receive) cpu_comm[a].push_back({r.start_s, std::min(r.end_s, actions[a].cpu_end_s)});
      const int64_t bytes = InputBytes(r.args);
      if (bytes >= 0) actions[a].message_bytes = std::max(actions[a].message_bytes, bytes);
    }
    // The backend's own ranges (gloo:send, nccl:all_reduce) are the collectives: from issue to
    // completion, an async op's wait included. c10d:: ranges only issue them.
    // A range within an earlier one is its inner part (c10d::allreduce_ holds nccl:all_reduce
    // when both are backend ranges); async ranges that only overlap (isends) each count.
    if (any_nccl || r.name.starts_with("c10d::") || r.end_s <= outer_end) continue;
    outer_end = std::max(outer_end, r.end_s);
    TraceCollectiveKind kind;
    CommRangeKind(r.name, &kind);
    rank->collectives.push_back(
        {kind, false, r.start_s, r.end_s - r.start_s, InputBytes(r.args), 0});
  }
  for (size_t a = 0; a < actions.size(); ++a) {
    actions[a].gpu_compute_s = UnionLength(compute[a]);
    actions[a].gpu_comm_s = UnionLength(comm[a]);
    actions[a].cpu_comm_s = UnionLength(cpu_comm[a]);
  }
}

}  // namespace

Status ParseKinetoTrace(std::string_view text, const std::string& source, TraceRank* rank) {
  *rank = TraceRank();
  rank->file = source;
  Json document;
  try {
    document = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 25, column 4: WHAT": WHAT only.
    std::string what = e.what();
    const size_t column = what.find("column ");
    const size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    return Status::InvalidInput(Located(text, source, e.byte == 0 ? 0 : e.byte - 1) +
                                ": not JSON (" + what +
                                "); expected a PyTorch profiler trace: a JSON object with "
                                "traceEvents, as export_chrome_trace writes it");
  } catch (const Json::exception& e) {
    // A number beyond a double ("[json.exception.out_of_range.406] number overflow parsing ..."):
    // nlohmann gives no position for it.
    return Status::InvalidInput(source + ": not JSON (" + JsonExceptionText(e) +
                                "); expected a PyTorch profiler trace: a JSON object with "
                                "traceEvents, as export_chrome_trace writes it");
  }
  // torch built without Kineto (Debian's python3-torch 1.13) writes the autograd profiler's
  // legacy form: a bare list of "X" events without categories, all under pid "CPU functions".
  const bool legacy = document.is_array();
  auto list = document.is_object() ? document.find("traceEvents") : document.end();
  if (legacy) {
    list = document.end();
  } else if (!document.is_object() || list == document.end() || !list->is_array()) {
    return Status::InvalidInput(source +
                                ": no traceEvents list; expected a PyTorch profiler "
                                "trace: a JSON object with traceEvents, as export_chrome_trace "
                                "writes it");
  }
  if (!legacy) RETURN_IF_ERROR(ReadDistributedInfo(document, source, rank));
  if (legacy) rank->rank = -1;
  Events events;
  for (Json& event : legacy ? document : *list) {
    if (!event.is_object()) {
      return Status::InvalidInput(source + ": traceEvents holds " + std::string(event.type_name()) +
                                  "; every event is an object");
    }
    if (legacy && StringOr(event, "pid") == "CPU functions" && event.find("cat") == event.end()) {
      event["cat"] = "cpu_op";  // in place: TakeEvent keeps pointers to the events' args
    }
    if (StringOr(event, "ph") == "X") TakeEvent(event, &events, rank);
  }
  if (!events.kineto) {
    return Status::InvalidInput(
        source +
        ": a Chrome trace, but not a PyTorch profiler (Kineto) trace: no event has a "
        "Kineto category (cpu_op, user_annotation, cuda_runtime, kernel, ...); export "
        "it with torch.profiler (export_chrome_trace or tensorboard_trace_handler)");
  }
  auto by_start = [](const auto& a, const auto& b) { return a.start_s < b.start_s; };
  std::stable_sort(rank->steps.begin(), rank->steps.end(), by_start);
  std::stable_sort(events.comm.begin(), events.comm.end(), by_start);
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
  Attribute(events, rank);
  rank->wall_s = events.last_s - events.first_s;
  if (!rank->steps.empty()) {
    rank->wall_s =
        rank->steps.back().start_s + rank->steps.back().duration_s - rank->steps.front().start_s;
  }
  return Status();
}

Status Gunzip(std::string_view compressed, const std::string& source, int64_t max_bytes,
              std::string* text) {
  text->clear();
  google::protobuf::io::ArrayInputStream raw(compressed.data(),
                                             static_cast<int>(compressed.size()));
  google::protobuf::io::GzipInputStream gzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  const void* data = nullptr;
  int size = 0;
  while (gzip.Next(&data, &size)) {
    if (static_cast<int64_t>(text->size()) + size > max_bytes) {
      return Status::InvalidInput(source + ": decompresses to more than " +
                                  std::to_string(max_bytes) +
                                  " bytes; trace files are read up "
                                  "to that (profile fewer steps, or split the trace)");
    }
    text->append(static_cast<const char*>(data), size);
  }
  if (gzip.ZlibErrorMessage() != nullptr) {
    return Status::InvalidInput(source + ": not valid gzip (" + gzip.ZlibErrorMessage() +
                                ", after " + std::to_string(text->size()) +
                                " bytes); expected a gzipped trace, whole");
  }
  // A cut stream ends without an error: its last 4 bytes are then not the gzip trailer's size
  // (ISIZE, the text's length mod 2^32, little endian).
  uint32_t isize = 0;
  for (size_t k = 0; k < 4 && compressed.size() >= 4; ++k) {
    isize |=
        static_cast<uint32_t>(static_cast<unsigned char>(compressed[compressed.size() - 4 + k]))
        << (8 * k);
  }
  if (compressed.size() < 18 || isize != static_cast<uint32_t>(text->size())) {
    return Status::InvalidInput(source + ": gzip stream cut short (" +
                                std::to_string(text->size()) +
                                " bytes decompressed, not the size its end records); expected a "
                                "gzipped trace, whole");
  }
  return Status();
}

}  // namespace ppsim

namespace ppsim {

Status ListTraceFiles(const std::vector<std::string>& inputs, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  files->clear();
  for (const std::string& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<std::string> found;
      for (const fs::directory_entry& entry : fs::directory_iterator(input, error)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) {
          found.push_back(entry.path().string());
        }
      }
      if (error) return Status::InvalidInput(input + ": cannot list: " + error.message());
      if (found.empty()) {
        return Status::InvalidInput(input +
                                    ": no trace files; expected *.json or *.json.gz "
                                    "(torch.profiler's *.pt.trace.json[.gz]) in the folder");
      }
      std::sort(found.begin(), found.end());
      files->insert(files->end(), found.begin(), found.end());
    } else if (fs::exists(input, error)) {
      files->push_back(input);
    } else {
      return Status::InvalidInput(input +
                                  ": no such file or folder; expected trace files "
                                  "(.json, .json.gz) or a folder of them");
    }
  }
  for (size_t i = 0; i < files->size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code error;
      if (fs::equivalent((*files)[i], (*files)[j], error)) {
        return Status::InvalidInput((*files)[i] + ": given twice (also as " + (*files)[j] +
                                    "); give each rank's trace once");
      }
    }
  }
  return Status();
}

namespace {

// Distinct ranks agreeing on world_size; with several files, each has distributedInfo.
Status CheckRanks(const std::vector<TraceRank>& ranks) {
  // Messages name the flag of `ppsim profile` that sets ranks by order (ReadKinetoTraces).
  for (size_t i = 0; i < ranks.size(); ++i) {
    const TraceRank& r = ranks[i];
    if (r.rank < 0 && ranks.size() > 1) {
      return Status::InvalidInput(r.file + ": no distributedInfo, so its rank is unknown; with " +
                                  std::to_string(ranks.size()) +
                                  " trace files each must say its "
                                  "rank (torch.profiler with Kineto writes distributedInfo when "
                                  "torch.distributed is initialized), or give --ranks-in-order to "
                                  "take the files as ranks 0, 1, ... in the order given");
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

Status ReadKinetoTraces(const std::vector<std::string>& files, bool ranks_in_order,
                        ProfilerTrace* trace) {
  trace->ranks.clear();
  for (const std::string& file : files) {
    std::string bytes;
    RETURN_IF_ERROR(ReadFile(file, &bytes, kMaxKinetoTraceBytes, "trace", /*raw=*/true));
    std::string text;
    if (file.ends_with(".gz")) {
      RETURN_IF_ERROR(Gunzip(bytes, file, kMaxKinetoTraceBytes, &text));
    } else {
      text = std::move(bytes);
    }
    TraceRank rank;
    RETURN_IF_ERROR(ParseKinetoTrace(text, file, &rank));
    if (ranks_in_order && rank.rank < 0) {
      rank.rank = static_cast<int32_t>(trace->ranks.size());
      rank.world_size = static_cast<int32_t>(files.size());
    }
    trace->ranks.push_back(std::move(rank));
  }
  RETURN_IF_ERROR(CheckRanks(trace->ranks));
  std::stable_sort(trace->ranks.begin(), trace->ranks.end(),
                   [](const TraceRank& a, const TraceRank& b) { return a.rank < b.rank; });
  // One stage per rank ("Forward {i}"): the rank's place among the traces.
  for (size_t i = 0; i < trace->ranks.size(); ++i) {
    if (trace->ranks[i].rank < 0) trace->ranks[i].rank = 0;
    for (TraceAction& a : trace->ranks[i].actions) {
      if (a.stage == -1) a.stage = static_cast<int32_t>(i);
    }
  }
  return Status();
}

}  // namespace ppsim
