// The timeline picture of a run, drawn from the trace's compute slices and memory counters.
#include <map>

#include "models/units.h"
#include "sim/trace.h"

namespace ppsim {
namespace {

BoxKind KindOf(const Action& action) {
  if (action.is_overlap()) return BoxKind::kOverlap;
  switch (action.op(0).kind) {
    case OpKind::kForward: return BoxKind::kForward;
    case OpKind::kBackwardInput: return BoxKind::kBackwardInput;
    case OpKind::kBackwardWeight: return BoxKind::kBackwardWeight;
    case OpKind::kBackward: return BoxKind::kBackward;
  }
  return BoxKind::kForward;
}

class PictureSink : public TraceSink {
 public:
  PictureSink(const RunMetrics& metrics, TimelinePicture* picture)
      : metrics_(metrics), picture_(picture) {}

  void Track(const TraceTrack& track) override {
    if (track.kind == TraceTrackKind::kCompute) {
      rows_[track.uuid] = static_cast<int32_t>(picture_->rows.size());
      PictureRow& row = picture_->rows.emplace_back();
      row.name = track.name;
      row.static_bytes = metrics_.ranks[track.rank].static_memory_bytes;
      memory_rows_[{track.replica, track.rank}] = rows_[track.uuid];
    } else if (track.kind == TraceTrackKind::kMemory) {
      rows_[track.uuid] = memory_rows_.at({track.replica, track.rank});
    }
  }

  void Slice(const TraceSlice& slice) override {
    if (slice.kind != TaskKind::kCompute) return;
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
                  std::to_string(first.stage.value()) +
                  " · microbatch " + std::to_string(first.microbatch.value()) + " · " +
                  HumanDuration(static_cast<double>(slice.end_ns - slice.start_ns) * 1e-9);
    picture_->end_ns = std::max(picture_->end_ns, slice.end_ns);
  }

  void Counter(const TraceCounter& counter) override {
    if (counter.track->kind != TraceTrackKind::kMemory) return;
    picture_->rows[rows_.at(counter.track->uuid)].memory.push_back(
        {counter.time_ns, counter.value});
  }

 private:
  const RunMetrics& metrics_;
  TimelinePicture* picture_;
  std::map<uint64_t, int32_t> rows_;  // compute and memory track uuid -> row
  std::map<std::pair<int32_t, int32_t>, int32_t> memory_rows_;  // (replica, rank) -> row
};

}  // namespace

TimelinePicture BuildTimelinePicture(const TraceRun& run, const TraceWindow& window,
                                     std::string title, std::vector<std::string> subtitle) {
  TimelinePicture picture;
  picture.title = std::move(title);
  picture.subtitle = std::move(subtitle);
  PictureSink sink(*run.metrics, &picture);
  StreamTrace(run, window, &sink);
  return picture;
}

}  // namespace ppsim
