#include "traces/perfetto_trace.h"

#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

#include "base/files.h"
#include "traces/perfetto_trace.pb.h"

namespace ppsim {
namespace {

namespace pp = perfetto::protos;

constexpr uint32_t kSequence = 1;
constexpr uint32_t kIncrementalStateCleared = 1;
constexpr uint32_t kNeedsIncrementalState = 2;

// Hashes std::string and std::string_view alike, for lookups by view.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
};

// Interned ids: the position in the list + 1.
uint64_t IidOf(const std::vector<std::string_view>& names, std::string_view name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i + 1;
  }
  return 0;
}

class PerfettoSink : public TraceSink {
 public:
  explicit PerfettoSink(google::protobuf::io::CodedOutputStream* out) : out_(out) {}

  void Attributes(const std::vector<std::pair<std::string, std::string>>& attributes) override {
    pp::TracePacket& p = Packet(0);
    p.set_sequence_flags(kIncrementalStateCleared | kNeedsIncrementalState);
    pp::InternedData* interned = p.mutable_interned_data();
    const auto& args = TraceArgNames();
    for (size_t i = 0; i < args.size(); ++i) {
      pp::DebugAnnotationName* name = interned->add_debug_annotation_names();
      name->set_iid(i + 1);
      name->set_name(std::string(args[i]));
    }
    Write();
    pp::TracePacket& a = Packet(0);
    for (const auto& [key, value] : attributes) {
      pp::TraceAttributes::Attribute* attribute = a.mutable_trace_attributes()->add_attribute();
      attribute->set_key(key);
      attribute->set_string_value(value);
    }
    Write();
  }

  void Track(const TraceTrack& track) override {
    pp::TracePacket& p = Packet(0);
    pp::TrackDescriptor* d = p.mutable_track_descriptor();
    d->set_uuid(track.uuid);
    if (track.parent_uuid != 0) d->set_parent_uuid(track.parent_uuid);
    d->set_sibling_order_rank(track.sort_index);
    switch (track.kind) {
      case TraceTrackKind::kProcess:
        d->mutable_process()->set_pid(track.pid);
        d->mutable_process()->set_process_name(track.name);
        d->set_child_ordering(pp::TrackDescriptor::EXPLICIT);
        break;
      case TraceTrackKind::kCompute:
        d->mutable_thread()->set_pid(track.pid);
        d->mutable_thread()->set_tid(track.tid);
        d->mutable_thread()->set_thread_name(track.name);
        break;
      case TraceTrackKind::kTransfers:
        d->set_name(track.name);
        break;
      case TraceTrackKind::kMemory:
      case TraceTrackKind::kTotalMemory:
        d->set_name(track.name);
        d->mutable_counter()->set_unit(pp::CounterDescriptor::UNIT_SIZE_BYTES);
        break;
    }
    Write();
  }

  void Slice(const TraceSlice& slice) override {
    pp::TracePacket& begin = Packet(slice.start_ns);
    pp::TrackEvent* e = begin.mutable_track_event();
    e->set_type(pp::TrackEvent::TYPE_SLICE_BEGIN);
    e->set_track_uuid(slice.track->uuid);
    e->set_name_iid(NameIid(slice.name, &begin));
    for (const TraceArg& arg : slice.args) {
      pp::DebugAnnotation* a = e->add_debug_annotations();
      a->set_name_iid(IidOf(TraceArgNames(), arg.name));
      if (arg.is_string && arg.name == "route") {
        a->set_string_value_iid(RouteIid(arg.string_value, &begin));
      } else if (arg.is_string) {
        a->set_string_value(std::string(arg.string_value));
      } else {
        a->set_int_value(arg.int_value);
      }
    }
    // A flow starts at its producer's BEGIN and ends at its consumer's END: the consumer ends
    // strictly after the producer begins whenever either has a duration, so the trace
    // processor, which keeps the written order of equal timestamps, sees the start first.
    for (uint64_t id : slice.flows_out) e->add_flow_ids(id);
    Write();
    pp::TracePacket& end = Packet(slice.end_ns);
    end.mutable_track_event()->set_type(pp::TrackEvent::TYPE_SLICE_END);
    end.mutable_track_event()->set_track_uuid(slice.track->uuid);
    for (uint64_t id : slice.flows_in) end.mutable_track_event()->add_terminating_flow_ids(id);
    Write();
  }

  void Counter(const TraceCounter& counter) override {
    pp::TracePacket& p = Packet(counter.time_ns);
    p.mutable_track_event()->set_type(pp::TrackEvent::TYPE_COUNTER);
    p.mutable_track_event()->set_track_uuid(counter.track->uuid);
    p.mutable_track_event()->set_counter_value(counter.value);
    Write();
  }

 private:
  // Slice names ("F3", "activation") repeat on every rank: each is written once, interned in the
  // first packet that uses it. Looked up by view, so a name already seen costs a hash and no
  // allocation.
  uint64_t NameIid(std::string_view name, pp::TracePacket* packet) {
    const auto it = names_.find(name);
    if (it != names_.end()) return it->second;
    const uint64_t iid = names_.size() + 1;
    names_.emplace(std::string(name), iid);
    pp::EventName* interned = packet->mutable_interned_data()->add_event_names();
    interned->set_iid(iid);
    interned->set_name(std::string(name));
    return iid;
  }

  // Routes repeat on every transfer between two GPUs: each is written once, interned in the
  // first packet that uses it.
  uint64_t RouteIid(std::string_view route, pp::TracePacket* packet) {
    auto [it, added] = routes_.try_emplace(std::string(route), routes_.size() + 1);
    if (added) {
      pp::InternedString* s = packet->mutable_interned_data()->add_debug_annotation_string_values();
      s->set_iid(it->second);
      s->set_str(it->first);
    }
    return it->second;
  }

  // The reused packet, cleared, on ppsim's sequence.
  pp::TracePacket& Packet(int64_t time_ns) {
    packet_.Clear();
    packet_.set_timestamp(static_cast<uint64_t>(time_ns));
    packet_.set_trusted_packet_sequence_id(kSequence);
    packet_.set_sequence_flags(kNeedsIncrementalState);
    return packet_;
  }
  // Appends the packet as one `Trace.packet` field.
  void Write() {
    constexpr uint32_t kTracePacketTag = (1 << 3) | 2;  // field 1, length-delimited
    out_->WriteTag(kTracePacketTag);
    out_->WriteVarint32(static_cast<uint32_t>(packet_.ByteSizeLong()));
    packet_.SerializeWithCachedSizes(out_);
  }

  google::protobuf::io::CodedOutputStream* out_;
  pp::TracePacket packet_;
  std::map<std::string, uint64_t, std::less<>> routes_;
  std::unordered_map<std::string, uint64_t, NameHash, std::equal_to<>> names_;
};

}  // namespace

Status WritePerfettoTrace(const TraceRun& run, const TraceWindow& window, std::string_view what,
                          const std::string& path) {
  OutputFile file;
  RETURN_IF_ERROR(file.Open(what, path));
  PerfettoSink sink(file.out());
  StreamTrace(run, window, &sink);
  return file.Commit();
}

}  // namespace ppsim
