#include "interop/kineto_trace.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/escape.h"
#include "base/files.h"
#include "base/json.h"
#include "interop/trace_events.h"

namespace ppsim {
namespace {

using Json = nlohmann::json;

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

// The events of one trace: what FinishTraceRank needs, and the origin of its times.
struct Events {
  TraceEvents trace;
  bool kineto = false;  // any event of a Kineto category
  bool have_origin = false;
  double origin_us = 0;  // the first event's ts: times are seconds from it
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
  events->trace.Span(start_s, end_s);
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
    TraceGpuEvent gpu;
    gpu.start_s = start_s;
    gpu.end_s = end_s;
    gpu.correlation = correlation();
    gpu.name = name;
    if (args != nullptr) {  // what Kineto records of NCCL kernels
      gpu.collective_name = StringOr(*args, "Collective name");
      const double nelems = NumberOr(*args, "In msg nelems", -1);
      const int64_t element = DtypeBytes(StringOr(*args, "dtype"));
      if (nelems >= 0 && element > 0) gpu.bytes = static_cast<int64_t>(nelems) * element;
      gpu.group_size = static_cast<int32_t>(NumberOr(*args, "Group size", 0));
    }
    events->trace.gpu.push_back(std::move(gpu));
    return;
  }
  if (cat == "cuda_runtime" || cat == "cuda_driver") {
    const int64_t id = correlation();
    if (id >= 0) events->trace.launch_s[id] = start_s;
    return;
  }
  if (cat != "cpu_op" && cat != "user_annotation") return;
  AddCpuRange(
      name, start_s, end_s, [args] { return InputBytes(args); }, &events->trace, rank);
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
  FinishTraceRank(&events.trace, rank);
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

namespace {

// One file, gunzipped when *.gz.
Status ReadKinetoTrace(const std::string& file, TraceRank* rank) {
  std::string bytes;
  RETURN_IF_ERROR(ReadFile(file, &bytes, kMaxKinetoTraceBytes, "trace", /*raw=*/true));
  std::string text;
  if (file.ends_with(".gz")) {
    RETURN_IF_ERROR(Gunzip(bytes, file, kMaxKinetoTraceBytes, &text));
  } else {
    text = std::move(bytes);
  }
  return ParseKinetoTrace(text, file, rank);
}

}  // namespace

Status ReadKinetoTraces(const std::vector<std::string>& files, bool ranks_in_order,
                        ProfilerTrace* trace) {
  static const RankSource kRankSource = {
      "no distributedInfo",
      "torch.profiler with Kineto writes distributedInfo when torch.distributed is initialized"};
  trace->ranks.clear();
  for (const std::string& file : files) {
    TraceRank rank;
    RETURN_IF_ERROR(ReadKinetoTrace(file, &rank));
    trace->ranks.push_back(std::move(rank));
  }
  return OrderTraceRanks(ranks_in_order, kRankSource, trace);
}

}  // namespace ppsim
