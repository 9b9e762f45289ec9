#include "traces/chrome_trace.h"

#include <cinttypes>
#include <cstdio>

#include "base/escape.h"
#include "base/files.h"

namespace ppsim {
namespace {

class ChromeSink : public TraceSink {
 public:
  explicit ChromeSink(google::protobuf::io::CodedOutputStream* out) : out_(out) {
    buffer_ = "{\"traceEvents\":[";
  }

  void Attributes(const std::vector<std::pair<std::string, std::string>>& attributes) override {
    attributes_ = attributes;
  }

  void Track(const TraceTrack& track) override {
    switch (track.kind) {
      case TraceTrackKind::kProcess:
        Metadata("process_name", track, false);
        Metadata("process_sort_index", track, false);
        break;
      case TraceTrackKind::kCompute:
      case TraceTrackKind::kTransfers:
        Metadata("thread_name", track, true);
        Metadata("thread_sort_index", track, true);
        break;
      case TraceTrackKind::kMemory:
      case TraceTrackKind::kTotalMemory:
        break;  // a counter track is named by its C events
    }
  }

  void Slice(const TraceSlice& slice) override {
    const TraceTrack& track = *slice.track;
    Next();
    buffer_ += "{\"ph\":\"X\",\"pid\":" + std::to_string(track.pid) +
               ",\"tid\":" + std::to_string(track.tid) + ",\"ts\":" +
               MicrosecondsText(slice.start_ns) +
               ",\"dur\":" + MicrosecondsText(slice.end_ns - slice.start_ns) + ",\"name\":";
    AppendJsonString(slice.name, &buffer_);
    buffer_ += slice.kind == TaskKind::kCompute ? ",\"cat\":\"compute\""
               : slice.kind == TaskKind::kWait  ? ",\"cat\":\"wait\""
               : slice.kind == TaskKind::kOptimizer ? ",\"cat\":\"optimizer\""
                                                : ",\"cat\":\"transfer\"";
    buffer_ += ",\"args\":{";
    for (size_t i = 0; i < slice.args.size(); ++i) {
      const TraceArg& arg = slice.args[i];
      if (i > 0) buffer_ += ',';
      AppendJsonString(arg.name, &buffer_);
      buffer_ += ':';
      if (arg.is_string) {
        AppendJsonString(arg.string_value, &buffer_);
      } else {
        buffer_ += std::to_string(arg.int_value);
      }
    }
    buffer_ += "}}";
    // Flow events bind to the slice that encloses them on the same thread: its midpoint.
    const std::string middle = MicrosecondsText(slice.start_ns + (slice.end_ns - slice.start_ns) / 2);
    for (uint64_t id : slice.flows_out) Flow("s", track, middle, id);
    for (uint64_t id : slice.flows_in) Flow("f", track, middle, id);
    MaybeFlush();
  }

  void Counter(const TraceCounter& counter) override {
    Next();
    buffer_ += "{\"ph\":\"C\",\"pid\":" + std::to_string(counter.track->pid) + ",\"ts\":" +
               MicrosecondsText(counter.time_ns) + ",\"name\":";
    AppendJsonString(counter.track->name, &buffer_);
    buffer_ += ",\"args\":{\"bytes\":" + std::to_string(counter.value) + "}}";
    MaybeFlush();
  }

  void Finish() {
    buffer_ += "\n],\"displayTimeUnit\":\"ns\",\"metadata\":{";
    for (size_t i = 0; i < attributes_.size(); ++i) {
      if (i > 0) buffer_ += ',';
      AppendJsonString(attributes_[i].first, &buffer_);
      buffer_ += ':';
      AppendJsonString(attributes_[i].second, &buffer_);
    }
    buffer_ += "}}\n";
    Flush();
  }

 private:
  void Next() {
    if (!first_) buffer_ += ',';
    buffer_ += '\n';
    first_ = false;
  }
  void Metadata(std::string_view name, const TraceTrack& track, bool thread) {
    Next();
    buffer_ += "{\"ph\":\"M\",\"name\":\"" + std::string(name) +
               "\",\"pid\":" + std::to_string(track.pid);
    if (thread) buffer_ += ",\"tid\":" + std::to_string(track.tid);
    buffer_ += ",\"args\":{";
    if (name.ends_with("_name")) {
      buffer_ += "\"name\":";
      AppendJsonString(track.name, &buffer_);
    } else {
      buffer_ += "\"sort_index\":" + std::to_string(track.sort_index);
    }
    buffer_ += "}}";
  }
  void Flow(std::string_view phase, const TraceTrack& track, const std::string& ts, uint64_t id) {
    Next();
    buffer_ += "{\"ph\":\"" + std::string(phase) + "\",\"pid\":" + std::to_string(track.pid) +
               ",\"tid\":" + std::to_string(track.tid) + ",\"ts\":" + ts +
               ",\"name\":\"dependency\",\"cat\":\"flow\",\"id\":" + std::to_string(id);
    if (phase == "f") buffer_ += ",\"bp\":\"e\"";
    buffer_ += '}';
  }
  void MaybeFlush() {
    if (buffer_.size() >= (1 << 16)) Flush();
  }
  void Flush() {
    out_->WriteRaw(buffer_.data(), static_cast<int>(buffer_.size()));
    buffer_.clear();
  }

  google::protobuf::io::CodedOutputStream* out_;
  std::string buffer_;
  bool first_ = true;
  std::vector<std::pair<std::string, std::string>> attributes_;
};

}  // namespace

std::string MicrosecondsText(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  return text;
}

Status WriteChromeTrace(const TraceRun& run, const TraceWindow& window, std::string_view what,
                        const std::string& path) {
  OutputFile file;
  RETURN_IF_ERROR(file.Open(what, path));
  ChromeSink sink(file.out());
  StreamTrace(run, window, &sink);
  sink.Finish();
  return file.Commit();
}

}  // namespace ppsim
