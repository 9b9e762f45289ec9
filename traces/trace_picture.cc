// The timeline picture of a run, drawn from the trace's compute slices and memory counters: a
// row's memory is RankMemoryBytes of the live activations its counter carries, so that the
// curve's top is the rank's peak_memory_bytes exactly.
#include <map>
#include <optional>

#include "config/units.h"
#include "traces/trace.h"

namespace ppsim {
namespace {

BoxKind KindOf(const Action& action) {
  if (action.is_overlap()) return BoxKind::kOverlap;
  switch (action.op(0).kind) {
    case OpKind::kForward:
      return BoxKind::kForward;
    case OpKind::kBackwardInput:
      return BoxKind::kBackwardInput;
    case OpKind::kBackwardWeight:
      return BoxKind::kBackwardWeight;
    case OpKind::kBackward:
      return BoxKind::kBackward;
  }
  return BoxKind::kForward;
}

class PictureSink : public TraceSink {
 public:
  // `whole`: the trace shows the whole run, so each rank's memory starts at time 0 with what
  // it holds before its first action (static and the fixed reserve); a window's starts where
  // its counters do.
  PictureSink(const RunMetrics& metrics, bool whole, TimelinePicture* picture)
      : metrics_(metrics), whole_(whole), picture_(picture) {}

  void Track(const TraceTrack& track) override {
    if (track.kind == TraceTrackKind::kCompute) {
      rows_[track.uuid] = static_cast<int32_t>(picture_->rows.size());
      PictureRow& row = picture_->rows.emplace_back();
      const RankMetrics& rank = metrics_.ranks[track.rank];
      row.name = track.name;
      row.rank = track.rank;
      row.static_bytes = rank.static_memory_bytes;
      row.reserve_bytes = rank.reserve_bytes;
      row.peak_activation_bytes = rank.peak_activation_bytes;
      row.peak_memory_bytes = rank.peak_memory_bytes;
      row.capacity_bytes = rank.memory_capacity_bytes;
      row.oom = rank.oom;
      memory_rows_[{track.replica, track.rank}] = rows_[track.uuid];
    } else if (track.kind == TraceTrackKind::kTransfers) {
      const auto row = memory_rows_.find({track.replica, track.rank});
      if (row == memory_rows_.end()) return;
      switch (track.comm) {
        case TraceComm::kP2p:
          transfer_rows_[track.uuid] = {row->second, TransferKind::kP2p};
          break;
        case TraceComm::kCollective:
          transfer_rows_[track.uuid] = {row->second, TransferKind::kCollective};
          break;
        case TraceComm::kAllToAll:
          transfer_rows_[track.uuid] = {row->second, TransferKind::kAllToAll};
          break;
        case TraceComm::kNone:
          break;
      }
    } else if (track.kind == TraceTrackKind::kMemory) {
      const int32_t r = memory_rows_.at({track.replica, track.rank});
      rows_[track.uuid] = r;
      if (whole_) picture_->rows[r].memory.push_back({0, MemoryAt(r, 0)});
    }
  }

  void Slice(const TraceSlice& slice) override {
    const auto transfer = transfer_rows_.find(slice.track->uuid);
    if (transfer != transfer_rows_.end()) {
      AddTransfer(slice, transfer->second.first, transfer->second.second);
      AddFlowEnds(slice, transfer->second.first, transfer->second.second);
      return;
    }
    // Actions only (MoE parts have no action: the picture draws whole actions).
    if (slice.kind != TaskKind::kCompute || slice.action == nullptr) return;
    AddFlowEnds(slice, rows_.at(slice.track->uuid), std::nullopt);
    PictureBox& box = picture_->boxes.emplace_back();
    box.row = rows_.at(slice.track->uuid);
    box.start_ns = slice.start_ns;
    box.end_ns = slice.end_ns;
    box.kind = KindOf(*slice.action);
    box.chunk = slice.chunk;
    box.num_chunks = slice.num_chunks;
    const Op& first = slice.action->op(0);
    box.microbatch = first.microbatch.value();
    box.details = std::string(slice.name) + " · " + FormatAction(*slice.action) + " · stage " +
                  std::to_string(first.stage.value()) + " · microbatch " +
                  std::to_string(first.microbatch.value()) + " · " +
                  HumanDuration(static_cast<double>(slice.end_ns - slice.start_ns) * 1e-9);
    picture_->end_ns = std::max(picture_->end_ns, slice.end_ns);
  }

  void Counter(const TraceCounter& counter) override {
    if (counter.track->kind != TraceTrackKind::kMemory) return;
    // Every sample is kept, those of zero duration too: one of them may be the peak.
    const int32_t r = rows_.at(counter.track->uuid);
    picture_->rows[r].memory.push_back({counter.time_ns, MemoryAt(r, counter.value)});
  }

  // The flows whose both ends are drawn, in the order of their ids.
  void AddFlows() {
    for (const auto& [id, from] : flow_starts_) {
      const auto to = flow_ends_.find(id);
      if (to == flow_ends_.end()) continue;
      picture_->flows.push_back(
          {from.row, from.lane, from.time_ns, to->second.row, to->second.lane, to->second.time_ns});
    }
  }

 private:
  // "activation · rank 0 → rank 1 · microbatch 3 · 32 MiB · 1.2 ms": the slice's name, the track's
  // and its bytes and microbatch.
  void AddTransfer(const TraceSlice& slice, int32_t row, TransferKind kind) {
    PictureTransfer& t = picture_->transfers.emplace_back();
    t.row = row;
    t.start_ns = slice.start_ns;
    t.end_ns = slice.end_ns;
    t.kind = kind;
    t.details = std::string(slice.name) + " · " + slice.track->name;
    for (const TraceArg& arg : slice.args) {
      if (arg.name == "microbatch") t.details += " · microbatch " + std::to_string(arg.int_value);
      if (arg.name == "bytes") t.details += " · " + HumanBytes(static_cast<double>(arg.int_value));
    }
    t.details += " · " + HumanDuration(static_cast<double>(slice.end_ns - slice.start_ns) * 1e-9);
    picture_->end_ns = std::max(picture_->end_ns, slice.end_ns);
  }

  // Where a flow starts or ends: a row's boxes or one of its transfer lanes, at a time.
  struct FlowEnd {
    int32_t row = 0;
    std::optional<TransferKind> lane;
    int64_t time_ns = 0;
  };

  // A slice's flows start where it ends and end where it starts.
  void AddFlowEnds(const TraceSlice& slice, int32_t row, std::optional<TransferKind> lane) {
    for (uint64_t id : slice.flows_out) flow_starts_[id] = {row, lane, slice.end_ns};
    for (uint64_t id : slice.flows_in) flow_ends_[id] = {row, lane, slice.start_ns};
  }

  // Row r's memory with `live_activation_bytes` live.
  int64_t MemoryAt(int32_t r, int64_t live_activation_bytes) const {
    return RankMemoryBytes(picture_->rows[r].static_bytes, live_activation_bytes, metrics_.reserve);
  }

  const RunMetrics& metrics_;
  const bool whole_;
  TimelinePicture* picture_;
  std::map<uint64_t, int32_t> rows_;  // compute and memory track uuid -> row
  std::map<std::pair<int32_t, int32_t>, int32_t> memory_rows_;          // (replica, rank) -> row
  std::map<uint64_t, std::pair<int32_t, TransferKind>> transfer_rows_;  // track uuid -> row, kind
  std::map<uint64_t, FlowEnd> flow_starts_;  // flow id -> its producer's end
  std::map<uint64_t, FlowEnd> flow_ends_;    // flow id -> its consumer's start
};

}  // namespace

TimelinePicture BuildTimelinePicture(const TraceRun& run, const TraceWindow& window,
                                     std::string title, std::vector<std::string> subtitle) {
  TimelinePicture picture;
  picture.title = std::move(title);
  picture.subtitle = std::move(subtitle);
  PictureSink sink(*run.metrics, window.all(), &picture);
  StreamTrace(run, window, &sink);
  sink.AddFlows();
  return picture;
}

}  // namespace ppsim
