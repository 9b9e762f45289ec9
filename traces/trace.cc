#include "traces/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

#include "base/escape.h"
#include "config/units.h"
#include "sim/communication.h"

namespace ppsim {
namespace {

// Flow ids. An edge u → v gets 4v + 1 when v is a transfer (from its producer); when v is a
// gradient ring step, 4v + 1 from the same GPU's previous step (or previous bucket's ring), 4v + 2
// from the previous GPU of the ring and 4v + 3 from the backward that produced the gradients; and
// 4u + 3 when u is a transfer (its only successor, the consumer). Both ends compute it from the
// edge alone, so no reverse index is needed (a transfer never feeds a ring step).
bool IsCommunication(const Task& task) {
  return task.kind == TaskKind::kTransfer || task.kind == TaskKind::kAllReduce;
}

uint64_t FlowIntoCommunication(const TaskGraph& graph, TaskId from, TaskId to) {
  const Task& a = graph.tasks[from];
  const Task& b = graph.tasks[to];
  uint64_t kind = 1;
  if (b.kind == TaskKind::kAllReduce) {
    if (a.kind != TaskKind::kAllReduce) {
      kind = 3;
    } else if (a.replica != b.replica || a.shard != b.shard) {
      kind = 2;
    }
  }
  return 4 * static_cast<uint64_t>(to) + kind;
}
uint64_t FlowOutOfTransfer(TaskId transfer) { return 4 * static_cast<uint64_t>(transfer) + 3; }

std::string Join(const std::vector<int32_t>& values, std::string_view separator) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += separator;
    text += std::to_string(values[i]);
  }
  return text;
}

// The longest compute slice name: two ops of a letter and up to 10 digits, and the '&'.
using SliceNameBuffer = std::array<char, 2 * (1 + 10) + 1>;

// "F3", "I3", "W3", "B3" or "F4&B1" (an overlap: the forward's microbatch, then the backward's),
// written into `buffer`.
std::string_view ComputeSliceName(const Action& action, SliceNameBuffer* buffer) {
  char* out = buffer->data();
  char* const end = out + buffer->size();
  for (int k = 0; k < action.num_ops(); ++k) {
    if (k > 0) *out++ = '&';
    *out++ = OpKindLetter(action.op(k).kind);
    out = std::to_chars(out, end, action.op(k).microbatch.value()).ptr;
  }
  return {buffer->data(), static_cast<size_t>(out - buffer->data())};
}

// A transfer's microbatch and direction, from the op of its consumer that reads it.
struct Carried {
  const Op* op = nullptr;  // the consumer's op
  bool gradient = false;
};

class TraceStreamer {
 public:
  TraceStreamer(const TraceRun& run, const TraceWindow& window, TraceSink* sink)
      : run_(run),
        schedule_(*run.schedule),
        graph_(*run.graph),
        timeline_(*run.timeline),
        platform_(*run.platform),
        sink_(sink) {
    first_microbatch_ = window.first_microbatch;
    end_microbatch_ =
        window.end_microbatch < 0 ? schedule_.num_microbatches : window.end_microbatch;
    whole_ = window.all();
    num_streams_ = graph_.num_replicas * schedule_.num_ranks;
    transfers_begin_ = static_cast<TaskId>(graph_.num_compute_tasks());
    transfers_end_ = transfers_begin_;
    communication_end_ = static_cast<TaskId>(graph_.communication_end());
    while (transfers_end_ < communication_end_ &&
           graph_.tasks[transfers_end_].kind == TaskKind::kTransfer) {
      ++transfers_end_;
    }
    ChunksOfStages();
  }

  void Run() {
    BuildTracks();
    sink_->Attributes(run_.attributes);
    for (const TraceTrack& track : tracks_) sink_->Track(track);
    EmitCompute();
    EmitCommunication();
    EmitExposed();
    EmitMemory();
  }

 private:
  // Which of its rank's virtual stages each stage is, in stage order.
  void ChunksOfStages() {
    chunk_of_stage_.assign(schedule_.num_stages, 0);
    chunks_of_rank_.assign(schedule_.num_ranks, 0);
    stages_of_rank_.assign(schedule_.num_ranks, {});
    for (int32_t stage = 0; stage < schedule_.num_stages; ++stage) {
      const int32_t rank = schedule_.stage_to_rank[stage].value();
      chunk_of_stage_[stage] = chunks_of_rank_[rank]++;
      stages_of_rank_[rank].push_back(stage);
    }
  }

  bool InWindow(MicrobatchIndex microbatch) const {
    return microbatch.value() >= first_microbatch_ && microbatch.value() < end_microbatch_;
  }
  bool Shown(const Action& action) const {
    for (int k = 0; k < action.num_ops(); ++k) {
      if (InWindow(action.op(k).microbatch)) return true;
    }
    return false;
  }
  const Action& ActionOf(TaskId compute) const {
    const Task& task = graph_.tasks[compute];
    return schedule_.orders[task.rank][task.position];
  }
  // The one successor of a boundary transfer: its consumer.
  TaskId ConsumerOf(TaskId transfer) const {
    for (TaskId v : boost::make_iterator_range(boost::adjacent_vertices(transfer, graph_.dag))) {
      if (graph_.tasks[v].kind == TaskKind::kCompute) return v;
    }
    std::fprintf(stderr, "internal error: transfer %u has no consumer\n", transfer);
    std::abort();
  }
  // Whether compute task c produced what `transfer` carries (with blocking p2p calls, the task
  // before the sender's or the receiver's call also precedes it, without a flow).
  bool Produces(TaskId c, TaskId transfer) const {
    if (graph_.tasks[transfer].kind != TaskKind::kTransfer) return true;
    const Carried carried = CarriedBy(transfer);
    const int32_t stage = carried.gradient ? carried.op->stage.value() + 1
                                           : carried.op->stage.value() - 1;
    const Action& action = ActionOf(c);
    for (int k = 0; k < action.num_ops(); ++k) {
      const Op& op = action.op(k);
      if (op.stage.value() == stage && op.microbatch == carried.op->microbatch &&
          (op.kind == OpKind::kForward) != carried.gradient) {
        return true;
      }
    }
    return false;
  }
  Carried CarriedBy(TaskId transfer) const {
    const int32_t boundary = static_cast<int32_t>(graph_.tasks[transfer].position);
    const Action& action = ActionOf(ConsumerOf(transfer));
    for (int k = 0; k < action.num_ops(); ++k) {
      const Op& op = action.op(k);
      if (op.kind == OpKind::kForward && op.stage.value() == boundary + 1) return {&op, false};
      if (op.kind != OpKind::kForward && op.stage.value() == boundary) return {&op, true};
    }
    std::fprintf(stderr, "internal error: transfer %u feeds no op of its consumer\n", transfer);
    std::abort();
  }
  bool ShownCommunication(TaskId task) const {
    if (graph_.tasks[task].kind == TaskKind::kDelay) return false;  // a timer, not drawn
    // Host copies leave the cluster's links: drawn only as exposed offload time.
    if (graph_.tasks[task].kind == TaskKind::kHostCopy) return false;
    if (whole_) return true;
    if (graph_.tasks[task].kind == TaskKind::kAllReduce) {
      return end_microbatch_ == schedule_.num_microbatches;
    }
    return InWindow(CarriedBy(task).op->microbatch);
  }
  int32_t StreamOf(int32_t replica, int32_t rank) const {
    return replica * schedule_.num_ranks + rank;
  }
  bool Xml() const { return !platform_.xml_file.empty(); }
  // The process a GPU belongs to: its node, or its host on an XML platform.
  int32_t ProcessKeyOf(int32_t gpu) const { return Xml() ? gpu : platform_.NodeOf(gpu); }

  std::string StreamPrefix(int32_t replica) const {
    return graph_.num_replicas > 1 ? "replica " + std::to_string(replica) + " · " : "";
  }

  void BuildTracks() {
    // Processes, ordered by the first stream they hold.
    std::map<int32_t, int32_t> first_stream_of_process;
    for (int32_t replica = 0; replica < graph_.num_replicas; ++replica) {
      for (int32_t rank = 0; rank < schedule_.num_ranks; ++rank) {
        const int32_t key = ProcessKeyOf(platform_.GpuOf(replica, rank, 0));
        first_stream_of_process.emplace(key, StreamOf(replica, rank));
      }
    }
    // Every track is created here, before the sink sees any, so the pointers stay valid.
    const size_t lanes = AssignLanes();
    const bool tp_rings = graph_.HasParts(PartKind::kTpRing);
    const bool cp_rings = graph_.HasParts(PartKind::kCpRing) || graph_.HasParts(PartKind::kCpA2a);
    const bool moe_parts = graph_.HasMoeParts();
    tracks_.reserve(2 + first_stream_of_process.size() + 7 * num_streams_ + lanes);
    TraceTrack& all = NewTrack(TraceTrackKind::kProcess, 0, "all GPUs");
    all.pid = 1;
    all.sort_index = -1;
    const uint64_t all_uuid = all.uuid;
    TraceTrack& total = NewTrack(TraceTrackKind::kTotalMemory, all_uuid,
                                 "total memory (static + activations, all GPUs)");
    total.pid = 1;
    total_track_ = tracks_.size() - 1;
    for (const auto& [key, first_stream] : first_stream_of_process) {
      std::string name =
          Xml() ? "host " + platform_.xml_hosts[key]
                : "node " + std::to_string(key) +
                      (platform_.gpu.name.empty() ? "" : " · " + platform_.gpu.name);
      TraceTrack& process = NewTrack(TraceTrackKind::kProcess, 0, std::move(name));
      process.pid = key + 2;
      process.sort_index = first_stream;
      process_uuid_[key] = process.uuid;
    }
    compute_track_.resize(num_streams_);
    memory_track_.resize(num_streams_);
    ring_track_.assign(2 * static_cast<size_t>(num_streams_), 0);
    part_track_.assign(2 * static_cast<size_t>(num_streams_), 0);
    for (int32_t replica = 0; replica < graph_.num_replicas; ++replica) {
      for (int32_t rank = 0; rank < schedule_.num_ranks; ++rank) {
        const int32_t stream = StreamOf(replica, rank);
        const int32_t gpu = platform_.GpuOf(replica, rank, 0);
        const int32_t key = ProcessKeyOf(gpu);
        std::string gpus = platform_.layout.GpusPerRank() > 1
                               ? "GPUs " + std::to_string(gpu) + "-" +
                                     std::to_string(gpu + platform_.layout.GpusPerRank() - 1)
                               : "GPU " + std::to_string(gpu);
        const std::string& stages = Join(stages_of_rank_[rank], ", ");
        TraceTrack& compute = NewTrack(
            TraceTrackKind::kCompute, process_uuid_[key],
            StreamPrefix(replica) + "rank " + std::to_string(rank) + " · stage" +
                (stages_of_rank_[rank].size() == 1 ? " " : "s ") + stages + " · " + gpus);
        compute.pid = key + 2;
        compute.tid = gpu + 1;
        compute.sort_index = stream * kSortSlots;
        compute.replica = replica;
        compute.rank = rank;
        compute_track_[stream] = tracks_.size() - 1;
        TraceTrack& memory =
            NewTrack(TraceTrackKind::kMemory, process_uuid_[key],
                     StreamPrefix(replica) + "rank " + std::to_string(rank) + " activations");
        memory.pid = key + 2;
        memory.sort_index = stream * kSortSlots + 1;
        memory.replica = replica;
        memory.rank = rank;
        memory_track_[stream] = tracks_.size() - 1;
        // The rank's rings, each on a track of its own (a ring overlaps its op's slice).
        for (const auto& [has, name, index] :
             {std::tuple{tp_rings, kRingName, 0}, std::tuple{cp_rings, kCpRingName, 1}}) {
          if (!has) continue;
          TraceTrack& ring = NewTrack(TraceTrackKind::kTransfers, process_uuid_[key],
                                      StreamPrefix(replica) + "rank " + std::to_string(rank) +
                                          " · " + std::string(name));
          ring.pid = key + 2;
          ring.tid = platform_.num_gpus() + 1 + static_cast<int32_t>(tracks_.size());
          ring.sort_index = stream * kSortSlots + 2 + index;
          ring.replica = replica;
          ring.rank = rank;
          ring.comm = TraceComm::kCollective;
          ring_track_[2 * stream + index] = tracks_.size() - 1;
        }
        // Expert parallelism: the parts of its actions and its all-to-alls, a track each (the
        // last sort slots of its stream).
        if (moe_parts) {
          for (int32_t index : {0, 1}) {
            TraceTrack& parts = NewTrack(TraceTrackKind::kTransfers, process_uuid_[key],
                                         StreamPrefix(replica) + "rank " + std::to_string(rank) +
                                             (index == 0 ? " · MoE parts" : " · all-to-all"));
            parts.pid = key + 2;
            parts.tid = platform_.num_gpus() + 1 + static_cast<int32_t>(tracks_.size());
            parts.sort_index = stream * kSortSlots + kSortSlots - 2 + index;
            parts.replica = replica;
            parts.rank = rank;
            parts.comm = index == 0 ? TraceComm::kNone : TraceComm::kAllToAll;
            part_track_[2 * stream + index] = tracks_.size() - 1;
          }
        }
      }
    }
    AddLaneTracks();
    AddExposedTracks();
  }

  // Replica 0's exposed communication (sim/communication.h), a track per rank that has some in
  // the shown time: its segments in whole nanoseconds, touching ones of the same kinds joined.
  void AddExposedTracks() {
    const auto [begin, end] = ShownSpan();
    const auto segments = ExposedSegments(graph_, timeline_, schedule_.num_ranks);
    exposed_.assign(segments.size(), {});
    for (int32_t rank = 0; rank < schedule_.num_ranks; ++rank) {
      std::vector<Exposed>& out = exposed_[rank];
      for (const ExposedSegment& s : segments[rank]) {
        const int64_t a = std::max(TraceNs(s.start_s), begin);
        const int64_t b = std::min(TraceNs(s.end_s), end);
        if (a >= b) continue;
        if (!out.empty() && out.back().kinds == s.kinds && out.back().end_ns == a) {
          out.back().end_ns = b;
        } else {
          out.push_back({a, b, s.kinds});
        }
      }
      if (out.empty()) continue;
      const int32_t gpu = platform_.GpuOf(0, rank, 0);
      const int32_t key = ProcessKeyOf(gpu);
      TraceTrack& track =
          NewTrack(TraceTrackKind::kTransfers, process_uuid_[key],
                   StreamPrefix(0) + "rank " + std::to_string(rank) + " · exposed communication");
      track.pid = key + 2;
      track.tid = platform_.num_gpus() + 1 + static_cast<int32_t>(tracks_.size());
      track.sort_index = StreamOf(0, rank) * kSortSlots + kSortSlots - 3;
      exposed_track_.push_back(tracks_.size() - 1);
    }
  }

  // The time the shown actions span, in nanoseconds (everything for the whole run).
  std::pair<int64_t, int64_t> ShownSpan() const {
    if (whole_) return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    int64_t begin = std::numeric_limits<int64_t>::max();
    int64_t end = 0;
    for (TaskId c = 0; c < graph_.num_compute_tasks(); ++c) {
      if (!Shown(ActionOf(c))) continue;
      begin = std::min(begin, Start(c));
      end = std::max(end, End(c));
    }
    return begin > end ? std::pair<int64_t, int64_t>{0, 0} : std::pair{begin, end};
  }

  // A slice per exposed segment, named by its kinds ("tp", "pp_p2p+dp").
  void EmitExposed() {
    size_t next = 0;
    for (const std::vector<Exposed>& segments : exposed_) {
      if (segments.empty()) continue;
      const TraceTrack& track = tracks_[exposed_track_[next++]];
      for (const Exposed& e : segments) {
        const std::string name = ExposedKindsName(e.kinds);
        TraceSlice slice;
        slice.track = &track;
        slice.kind = TaskKind::kTransfer;
        slice.name = name;
        slice.start_ns = e.start_ns;
        slice.end_ns = e.end_ns;
        sink_->Slice(slice);
      }
    }
  }

  TraceTrack& NewTrack(TraceTrackKind kind, uint64_t parent, std::string name) {
    TraceTrack& track = tracks_.emplace_back();
    track.kind = kind;
    track.uuid = tracks_.size();
    track.parent_uuid = parent;
    track.name = std::move(name);
    return track;
  }

  // Gives every shown transfer (and all-reduce step) a lane of its group (sender GPU, receiver
  // GPU, kind): in start order, the first lane whose last transfer ended strictly before it
  // starts. Transfers that touch go to different lanes, so that however the slices of a lane
  // are written, equal timestamps never mix an END with the next BEGIN. Returns the lane count.
  size_t AssignLanes() {
    struct Shown {
      uint64_t group;
      int64_t start;
      int64_t end;
      TaskId task;
    };
    std::vector<Shown> shown;
    for (TaskId t = transfers_begin_; t < communication_end_; ++t) {
      if (ShownCommunication(t)) shown.push_back({GroupKey(t), Start(t), End(t), t});
    }
    std::sort(shown.begin(), shown.end(), [](const Shown& a, const Shown& b) {
      return std::tie(a.group, a.start, a.end, a.task) < std::tie(b.group, b.start, b.end, b.task);
    });
    place_.assign(communication_end_ - transfers_begin_, Place());
    std::vector<int64_t> lane_end;
    size_t lanes = 0;
    for (size_t i = 0; i < shown.size(); ++i) {
      const TaskId t = shown[i].task;
      if (i == 0 || shown[i].group != shown[i - 1].group) {
        groups_.emplace_back().first = t;
        lane_end.clear();
      }
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] >= shown[i].start) ++lane;
      if (lane == lane_end.size()) {
        lane_end.push_back(0);
        ++groups_.back().num_lanes;
        ++lanes;
      }
      lane_end[lane] = shown[i].end;
      place_[t - transfers_begin_] = {static_cast<uint32_t>(groups_.size() - 1),
                                      static_cast<uint32_t>(lane)};
    }
    return lanes;
  }

  // Sender GPU, receiver GPU and kind, packed: transfers with equal keys share lanes.
  uint64_t GroupKey(TaskId t) const {
    const TaskGpus gpus = GpusOf(graph_.tasks[t], platform_);
    return (static_cast<uint64_t>(gpus.src) << 33) | (static_cast<uint64_t>(gpus.dst) << 1) |
           (graph_.tasks[t].kind == TaskKind::kAllReduce ? 1 : 0);
  }
  int64_t Start(TaskId t) const { return TraceNs(timeline_.start_s[t]); }
  int64_t End(TaskId t) const { return TraceNs(timeline_.end_s[t]); }

  void AddLaneTracks() {
    std::vector<int32_t> lanes_of_stream(num_streams_, 0);
    const int32_t first_tid = platform_.num_gpus() + 1;
    for (Group& group : groups_) {
      const Task& task = graph_.tasks[group.first];
      const TaskGpus gpus = GpusOf(task, platform_);
      std::string name;
      if (task.kind == TaskKind::kAllReduce) {
        name = "all-reduce · rank " + std::to_string(task.rank) + " · replica " +
               std::to_string(task.replica) + " → " + std::to_string(task.peer_replica);
      } else {
        name = StreamPrefix(task.replica) + "rank " + std::to_string(task.rank) + " → rank " +
               std::to_string(task.peer);
      }
      if (platform_.layout.GpusPerRank() > 1) name += " · GPU " + std::to_string(gpus.src);
      const int32_t stream = StreamOf(task.replica, task.rank);
      const int32_t key = ProcessKeyOf(gpus.src);
      group.first_track = tracks_.size();
      for (size_t lane = 0; lane < group.num_lanes; ++lane) {
        TraceTrack& track = NewTrack(TraceTrackKind::kTransfers, process_uuid_[key], name);
        track.pid = key + 2;
        track.tid = first_tid + static_cast<int32_t>(tracks_.size());
        track.sort_index = stream * kSortSlots + 4 + lanes_of_stream[stream]++;
        track.replica = task.replica;
        track.rank = task.rank;
        track.comm = task.kind == TaskKind::kAllReduce ? TraceComm::kCollective : TraceComm::kP2p;
      }
      if (!Xml()) {
        const Route route = RouteOf(task, platform_);
        for (int32_t k = 0; k < route.num_links; ++k) {
          if (k > 0) group.route += ", ";
          group.route += platform_.Link(route.links[k]).name;
        }
      }
    }
  }

  void EmitCompute() {
    TaskId cursor = transfers_begin_;  // transfers come in the order of their consumers
    TaskId wait_cursor = communication_end_;  // waits come by replica, rank and position
    TaskId optimizer_cursor = static_cast<TaskId>(graph_.optimizers_begin());  // by replica, rank
    std::vector<uint64_t> flows_in, flows_out;
    std::vector<TraceArg> args;
    std::string op_text;
    size_t moe_parts_before = 0;  // over every compute task before this one, shown or not
    for (int32_t replica = 0; replica < graph_.num_replicas; ++replica) {
      for (int32_t rank = 0; rank < schedule_.num_ranks; ++rank) {
        const TraceTrack& track = tracks_[compute_track_[StreamOf(replica, rank)]];
        const auto& order = schedule_.orders[rank];
        for (size_t position = 0; position < order.size(); ++position) {
          const TaskId c = graph_.ComputeTask(rank, position, replica);
          const Action& action = order[position];
          const bool shown = Shown(action);
          flows_in.clear();
          for (; cursor < transfers_end_ && ConsumerOf(cursor) == c; ++cursor) {
            if (shown && ShownCommunication(cursor)) flows_in.push_back(FlowOutOfTransfer(cursor));
          }
          EmitWaitsBefore(replica, rank, position, shown, track, &wait_cursor);
          const TaskProgram* program = graph_.ProgramOfTask(c);
          const size_t flow_base = moe_parts_before;
          if (program != nullptr) moe_parts_before += MoePartCount(*program);
          if (!shown) continue;
          flows_out.clear();
          for (TaskId v : boost::make_iterator_range(boost::adjacent_vertices(c, graph_.dag))) {
            if (!IsCommunication(graph_.tasks[v]) || !ShownCommunication(v)) continue;
            if (!Produces(c, v)) continue;
            flows_out.push_back(FlowIntoCommunication(graph_, c, v));
            if (graph_.tasks[v].kind == TaskKind::kAllReduce) MarkAllReduceFed(v);
          }
          const Op& first = action.op(0);
          const int64_t start = Start(c);
          const int64_t end = End(c);
          op_text = FormatAction(action);
          args.clear();
          args.push_back(Text("op", op_text));
          args.push_back(Int("microbatch", first.microbatch.value()));
          args.push_back(Int("stage", first.stage.value()));
          args.push_back(Int("chunk", chunk_of_stage_[first.stage.value()]));
          if (action.is_overlap()) {
            const Op& second = action.op(1);
            args.push_back(Int("backward_microbatch", second.microbatch.value()));
            args.push_back(Int("backward_stage", second.stage.value()));
            args.push_back(Int("backward_chunk", chunk_of_stage_[second.stage.value()]));
          }
          args.push_back(Int("duration_ns", end - start));
          TraceSlice slice;
          slice.track = &track;
          slice.task = c;
          slice.kind = TaskKind::kCompute;
          slice.name = ComputeSliceName(action, &name_buffer_);
          slice.start_ns = start;
          slice.end_ns = end;
          slice.args = args;
          slice.flows_in = flows_in;
          slice.flows_out = flows_out;
          slice.action = &action;
          slice.chunk = chunk_of_stage_[first.stage.value()];
          slice.num_chunks = chunks_of_rank_[rank];
          sink_->Slice(slice);
          if (program != nullptr) {
            EmitProgram(StreamOf(replica, rank), c, action, *program, flow_base);
          }
        }
        EmitWaitsBefore(replica, rank, order.size(), !order.empty() && Shown(order.back()), track,
                        &wait_cursor);
        EmitOptimizerStep(replica, rank, whole_ || end_microbatch_ == schedule_.num_microbatches,
                          track, &optimizer_cursor);
      }
    }
    if (cursor != transfers_end_) {
      std::fprintf(stderr, "internal error: transfers are not in the order of their consumers\n");
      std::abort();
    }
  }

  // The waits of (replica, rank) before its action `position` (blocking p2p calls), as slices
  // "wait" on its compute track from when the rank reached the call to when the call returned
  // (not drawn when they took no time).
  void EmitWaitsBefore(int32_t replica, int32_t rank, size_t position, bool shown,
                       const TraceTrack& track, TaskId* cursor) {
    for (; *cursor < graph_.optimizers_begin(); ++*cursor) {
      const Task& wait = graph_.tasks[*cursor];
      if (wait.replica != replica || wait.rank != rank || wait.position != position) return;
      if (shown && End(*cursor) > Start(*cursor)) EmitStreamSlice(track, *cursor, kWaitName);
    }
  }

  // The optimizer step of (replica, rank), if it has one, as a slice "optimizer" after its last
  // action (shown when the window reaches the last microbatch, as the all-reduces).
  void EmitOptimizerStep(int32_t replica, int32_t rank, bool shown, const TraceTrack& track,
                         TaskId* cursor) {
    if (*cursor >= graph_.num_tasks()) return;
    const Task& step = graph_.tasks[*cursor];
    if (step.replica != replica || step.rank != rank) return;
    const TaskId t = (*cursor)++;
    if (shown) EmitStreamSlice(track, t, kOptimizerName);
  }

  // The parts of compute task t's program: its rings on their tracks, then its MoE parts.
  // `flow_base`: how many MoE parts the compute tasks before it have (their flows' ids).
  void EmitProgram(int32_t stream, TaskId t, const Action& action, const TaskProgram& program,
                   size_t flow_base) {
    // a2a+p2p's inner all-to-alls share the cp track: they end before its ring starts.
    for (const auto& [kind, name, index] :
         {std::tuple{PartKind::kTpRing, kRingName, 0}, std::tuple{PartKind::kCpA2a, kCpA2aName, 1},
          std::tuple{PartKind::kCpRing, kCpRingName, 1}}) {
      const int32_t ring = RingPartOf(program, kind);
      if (ring < 0) continue;
      EmitRing(tracks_[ring_track_[2 * stream + index]], t, name,
               graph_.part_begin[t] + static_cast<size_t>(ring), program[ring].bytes);
    }
    if (HasMoeParts(program)) EmitParts(stream, t, action, program, flow_base);
  }

  // A ring of compute task t on its rank's ring track: "tp ring" (tensor-parallel collectives) or
  // "cp ring" (ring attention), from its part record, with the bytes each GPU of the group sent.
  void EmitRing(const TraceTrack& track, TaskId t, std::string_view name, size_t record,
                int64_t bytes) {
    const int64_t start = TraceNs(timeline_.part_start_s[record]);
    const int64_t end = TraceNs(timeline_.part_end_s[record]);
    const TraceArg args[] = {Int("bytes", bytes), Int("duration_ns", end - start)};
    TraceSlice slice;
    slice.track = &track;
    slice.task = t;
    slice.kind = TaskKind::kTransfer;
    slice.name = name;
    slice.start_ns = start;
    slice.end_ns = end;
    slice.args = args;
    sink_->Slice(slice);
  }

  // The MoE parts of compute task t (expert parallelism) on its stream's two part tracks: compute
  // parts ("F3 attention 0": op, microbatch, part, MoE layer; a full recomputation's forward
  // parts in a backward are named F) and all-to-alls ("F3 dispatch 0"), each all-to-all with a
  // flow from the compute part before it in its chunk and one to the compute part after it.
  // Compute parts that take no time are not drawn.
  void EmitParts(int32_t stream, TaskId t, const Action& action, const TaskProgram& program,
                 size_t flow_base) {
    static constexpr std::string_view kPartNames[] = {"rest", "attention", "dispatch", "mlp",
                                                      "combine"};
    const size_t parts = MoePartCount(program);
    const std::vector<int32_t> before = ChunkPredecessors(program);
    std::vector<int32_t> after(parts, -1);
    for (size_t i = 0; i < parts; ++i) {
      if (before[i] >= 0) after[before[i]] = static_cast<int32_t>(i);
    }
    const size_t begin = graph_.part_begin[t];
    auto drawn = [&](int32_t i) {
      return i >= 0 && (program[i].kind == PartKind::kAllToAll ||
                        TraceNs(timeline_.part_end_s[begin + i]) >
                            TraceNs(timeline_.part_start_s[begin + i]));
    };
    // Flow ids apart from the tasks' (4 x task + kind < 2^62): bit 62, the part's number among
    // all MoE parts, and whether the flow goes into (0) or out of (1) the all-to-all.
    auto flow = [&](size_t all_to_all, int out) {
      return (uint64_t{1} << 62) | (static_cast<uint64_t>(flow_base + all_to_all) << 1) |
             static_cast<uint64_t>(out);
    };
    std::string name;
    for (size_t i = 0; i < parts; ++i) {
      const TaskPart& part = program[i];
      if (!drawn(static_cast<int32_t>(i))) continue;
      // kWeightChunk: the W parts of the action's backward, its last op.
      const Op& op = action.op(std::min<int>(part.chunk, action.num_ops() - 1));
      const bool all_to_all = part.kind == PartKind::kAllToAll;
      name = part.chunk == kWeightChunk ? 'W' : part.backward ? OpKindLetter(op.kind) : 'F';
      name += std::to_string(op.microbatch.value()) + " " +
              std::string(kPartNames[static_cast<int>(part.name)]);
      if (part.name != PartName::kRest) name += " " + std::to_string(part.layer);
      const int64_t start = TraceNs(timeline_.part_start_s[begin + i]);
      const int64_t end = TraceNs(timeline_.part_end_s[begin + i]);
      uint64_t in[1];
      uint64_t out[1];
      size_t ins = 0;
      size_t outs = 0;
      if (all_to_all) {
        if (drawn(before[i]) && program[before[i]].kind == PartKind::kCompute) in[ins++] = flow(i, 0);
        if (drawn(after[i]) && program[after[i]].kind == PartKind::kCompute) out[outs++] = flow(i, 1);
      } else {
        if (after[i] >= 0 && program[after[i]].kind == PartKind::kAllToAll) {
          out[outs++] = flow(after[i], 0);
        }
        if (before[i] >= 0 && program[before[i]].kind == PartKind::kAllToAll) {
          in[ins++] = flow(before[i], 1);
        }
      }
      TraceArg args[3];
      size_t num_args = 0;
      args[num_args++] = Int("layer", part.layer);
      if (all_to_all) args[num_args++] = Int("bytes", part.bytes);
      args[num_args++] = Int("duration_ns", end - start);
      TraceSlice slice;
      slice.track = &tracks_[part_track_[2 * stream + (all_to_all ? 1 : 0)]];
      slice.task = t;
      slice.kind = all_to_all ? TaskKind::kTransfer : TaskKind::kCompute;
      slice.name = name;
      slice.start_ns = start;
      slice.end_ns = end;
      slice.args = std::span<const TraceArg>(args, num_args);
      slice.flows_in = std::span<const uint64_t>(in, ins);
      slice.flows_out = std::span<const uint64_t>(out, outs);
      sink_->Slice(slice);
    }
  }

  // A slice of task t on a compute track (a wait or an optimizer step) with its duration.
  void EmitStreamSlice(const TraceTrack& track, TaskId t, std::string_view name) {
    const int64_t start = Start(t);
    const int64_t end = End(t);
    const TraceArg args[] = {Int("duration_ns", end - start)};
    TraceSlice slice;
    slice.track = &track;
    slice.task = t;
    slice.kind = graph_.tasks[t].kind;
    slice.name = name;
    slice.start_ns = start;
    slice.end_ns = end;
    slice.args = args;
    sink_->Slice(slice);
  }

  // The flows between ring steps (kinds 1 and 2); the backwards' (kind 3) are marked as their
  // slices are emitted. Which flow kinds come into each step, and from which step each of kinds 1
  // and 2 is drawn: the first (a step whose predecessor sent two parts side by side has two of a
  // kind; one id, one arrow).
  void RingFlowsIn() {
    ring_flows_in_.assign(communication_end_ - transfers_end_, 0);
    ring_flow_from_.assign(communication_end_ - transfers_end_,
                           {TaskGraph::kNoTask, TaskGraph::kNoTask});
    for (TaskId u = transfers_end_; u < communication_end_; ++u) {
      if (graph_.tasks[u].kind != TaskKind::kAllReduce) continue;
      for (TaskId v : boost::make_iterator_range(boost::adjacent_vertices(u, graph_.dag))) {
        if (graph_.tasks[v].kind != TaskKind::kAllReduce) continue;
        const uint64_t kind = FlowIntoCommunication(graph_, u, v) & 3;
        ring_flows_in_[v - transfers_end_] |= 1 << kind;
        TaskId& from = ring_flow_from_[v - transfers_end_][kind - 1];
        if (from == TaskGraph::kNoTask) from = u;
      }
    }
  }

  // Whether the edge u -> v (v a transfer or step) is drawn as a flow.
  bool DrawsFlow(TaskId u, TaskId v) const {
    if (graph_.tasks[v].kind != TaskKind::kAllReduce || graph_.tasks[u].kind != TaskKind::kAllReduce) {
      return true;
    }
    return ring_flow_from_[v - transfers_end_][(FlowIntoCommunication(graph_, u, v) & 3) - 1] == u;
  }

  void MarkAllReduceFed(TaskId step) {
    if (ring_flows_in_.empty()) RingFlowsIn();
    ring_flows_in_[step - transfers_end_] |= 1 << 3;
  }

  // In task order: an all-reduce step comes before the steps it feeds, so that writers and
  // readers that keep the order of equal timestamps see a flow start before it ends.
  void EmitCommunication() {
    std::vector<uint64_t> flows_in, flows_out;
    std::vector<TraceArg> args;
    for (TaskId t = transfers_begin_; t < communication_end_; ++t) {
      const Place place = place_[t - transfers_begin_];
      if (place.group == kHidden) continue;
      const uint32_t lane = place.lane;
      const Group& group = groups_[place.group];
      const Task& task = graph_.tasks[t];
      const int64_t start = Start(t);
      const int64_t end = End(t);
      flows_in.clear();
      flows_out.clear();
      args.clear();
      std::string_view name;
      if (task.kind == TaskKind::kTransfer) {
        const Carried carried = CarriedBy(t);
        const int32_t boundary = static_cast<int32_t>(task.position);
        name = carried.gradient ? kGradientName : kActivationName;
        flows_in.push_back(4 * static_cast<uint64_t>(t) + 1);
        flows_out.push_back(FlowOutOfTransfer(t));
        args.push_back(Int("microbatch", carried.op->microbatch.value()));
        args.push_back(Int("from_rank", task.rank));
        args.push_back(Int("to_rank", task.peer));
        args.push_back(Int("from_stage", carried.gradient ? boundary + 1 : boundary));
        args.push_back(Int("to_stage", carried.gradient ? boundary : boundary + 1));
      } else {
        name = kAllReduceName;
        if (ring_flows_in_.empty()) RingFlowsIn();
        for (uint64_t kind = 1; kind <= 3; ++kind) {
          if ((ring_flows_in_[t - transfers_end_] & (1 << kind)) != 0) {
            flows_in.push_back(4 * static_cast<uint64_t>(t) + kind);
          }
        }
        for (TaskId v : boost::make_iterator_range(boost::adjacent_vertices(t, graph_.dag))) {
          if (IsCommunication(graph_.tasks[v]) && DrawsFlow(t, v)) {
            flows_out.push_back(FlowIntoCommunication(graph_, t, v));
          }
        }
        args.push_back(Int("stage", static_cast<int64_t>(task.position)));
        args.push_back(Int("rank", task.rank));
        args.push_back(Int("from_replica", task.replica));
        args.push_back(Int("to_replica", task.peer_replica));
        // A ring member's chain of steps over one route, drawn as one slice (Task::steps).
        if (task.steps > 1) args.push_back(Int("ring_steps", task.steps));
      }
      if (platform_.layout.GpusPerRank() > 1) args.push_back(Int("shard", task.shard));
      args.push_back(Int("bytes", task.bytes));
      args.push_back(Int("duration_ns", end - start));
      if (!group.route.empty()) args.push_back(Text("route", group.route));
      TraceSlice slice;
      slice.track = &tracks_[group.first_track + lane];
      slice.task = t;
      slice.kind = task.kind;
      slice.name = name;
      slice.start_ns = start;
      slice.end_ns = end;
      slice.args = args;
      slice.flows_in = flows_in;
      slice.flows_out = flows_out;
      sink_->Slice(slice);
    }
  }

  // A stream's live activation bytes, sample by sample: after each action starts, after it ends.
  struct MemoryWalk {
    int32_t stream = 0;
    size_t position = 0;
    bool at_end = false;  // the next sample is the action's end
    int64_t live = 0;
  };
  bool Done(const MemoryWalk& walk) const {
    return walk.position >= schedule_.orders[walk.stream % schedule_.num_ranks].size();
  }
  TaskId TaskOf(const MemoryWalk& walk) const {
    return graph_.ComputeTask(walk.stream % schedule_.num_ranks, walk.position,
                              walk.stream / schedule_.num_ranks);
  }
  int64_t NextTime(const MemoryWalk& walk) const {
    return walk.at_end ? End(TaskOf(walk)) : Start(TaskOf(walk));
  }
  // Advances to the next sample; returns the live bytes after it.
  int64_t Step(MemoryWalk* walk) const {
    const Action& action = schedule_.orders[walk->stream % schedule_.num_ranks][walk->position];
    if (walk->at_end) {
      walk->live -= ActivationFreedAtEnd(action, *run_.costs);
      ++walk->position;
    } else {
      walk->live += ActivationAllocatedAtStart(action, *run_.costs);
    }
    walk->at_end = !walk->at_end;
    return walk->live;
  }

  // Emits `value` at `time` unless the window hides it; before the window's first sample, the
  // value reached by then.
  struct CounterWindow {
    int64_t begin_ns;
    int64_t end_ns;
    bool whole;
    bool started = false;
    int64_t pending = 0;
  };
  void Sample(const TraceTrack& track, CounterWindow* w, int64_t time, int64_t value) {
    if (w->whole) {
      sink_->Counter({&track, time, value});
      return;
    }
    if (time <= w->begin_ns) {
      w->pending = value;
      return;
    }
    if (!w->started) {
      sink_->Counter({&track, w->begin_ns, w->pending});
      w->started = true;
    }
    if (time <= w->end_ns) sink_->Counter({&track, time, value});
  }
  void Finish(const TraceTrack& track, CounterWindow* w) {
    if (!w->whole && !w->started) sink_->Counter({&track, w->begin_ns, w->pending});
  }

  void EmitMemory() {
    const auto [begin, end] = ShownSpan();
    const CounterWindow window{begin, end, whole_};

    int64_t total = 0;
    for (int32_t stream = 0; stream < num_streams_; ++stream) {
      const int32_t rank = stream % schedule_.num_ranks;
      total += run_.metrics->ranks[rank].static_memory_bytes * platform_.layout.GpusPerRank();
      const TraceTrack& track = tracks_[memory_track_[stream]];
      CounterWindow w = window;
      MemoryWalk walk{stream};
      while (!Done(walk)) {
        const int64_t time = NextTime(walk);
        Sample(track, &w, time, Step(&walk));
      }
      Finish(track, &w);
    }

    // Every stream's samples merged in time order (ties by stream), each moving the total.
    const TraceTrack& track = tracks_[total_track_];
    CounterWindow w = window;
    Sample(track, &w, 0, total);
    using Next = std::pair<int64_t, int32_t>;  // (time, stream)
    std::priority_queue<Next, std::vector<Next>, std::greater<Next>> heap;
    std::vector<MemoryWalk> walks(num_streams_);
    for (int32_t stream = 0; stream < num_streams_; ++stream) {
      walks[stream].stream = stream;
      if (!Done(walks[stream])) heap.push({NextTime(walks[stream]), stream});
    }
    while (!heap.empty()) {
      const auto [time, stream] = heap.top();
      heap.pop();
      MemoryWalk& walk = walks[stream];
      const int64_t before = walk.live;
      total += (Step(&walk) - before) * platform_.layout.GpusPerRank();
      Sample(track, &w, time, total);
      if (!Done(walk)) heap.push({NextTime(walk), stream});
    }
    Finish(track, &w);
  }

  static TraceArg Int(std::string_view name, int64_t value) { return {name, value, {}, false}; }
  static TraceArg Text(std::string_view name, std::string_view value) {
    return {name, 0, value, true};
  }
  static constexpr std::string_view kActivationName = "activation";
  static constexpr std::string_view kWaitName = "wait";
  static constexpr std::string_view kOptimizerName = "optimizer";
  static constexpr std::string_view kRingName = "tp ring";
  static constexpr std::string_view kCpRingName = "cp ring";
  static constexpr std::string_view kGradientName = "gradient";
  static constexpr std::string_view kAllReduceName = "all-reduce";
  static constexpr std::string_view kCpA2aName = "cp a2a";
  // Sort slots per stream among its process's tracks: compute, memory, then its send lanes.
  static constexpr int32_t kSortSlots = 1024;
  static constexpr uint32_t kHidden = 0xffffffff;

  struct Group {
    TaskId first = 0;
    size_t num_lanes = 0;
    size_t first_track = 0;
    std::string route;
  };

  const TraceRun& run_;
  const Schedule& schedule_;
  const TaskGraph& graph_;
  const Timeline& timeline_;
  const PlatformSpec& platform_;
  TraceSink* sink_;
  int32_t first_microbatch_ = 0;
  int32_t end_microbatch_ = 0;
  bool whole_ = true;
  int32_t num_streams_ = 0;
  TaskId transfers_begin_ = 0;
  TaskId transfers_end_ = 0;
  TaskId communication_end_ = 0;  // waits follow
  std::vector<int32_t> chunk_of_stage_;
  std::vector<int32_t> chunks_of_rank_;
  std::vector<std::vector<int32_t>> stages_of_rank_;
  std::vector<TraceTrack> tracks_;
  std::map<int32_t, uint64_t> process_uuid_;
  std::vector<size_t> compute_track_;
  std::vector<size_t> ring_track_;  // per stream: its tp ring track, its cp ring track
  std::vector<size_t> part_track_;  // per stream: its MoE parts track, its all-to-all track
  std::vector<size_t> memory_track_;
  size_t total_track_ = 0;
  // Replica 0's exposed communication per rank, and the tracks of the ranks that have some.
  struct Exposed {
    int64_t start_ns;
    int64_t end_ns;
    uint32_t kinds;
  };
  std::vector<std::vector<Exposed>> exposed_;
  std::vector<size_t> exposed_track_;
  // Per transfer and all-reduce step: its group and lane; group kHidden when not shown.
  struct Place {
    uint32_t group = kHidden;
    uint32_t lane = 0;
  };
  std::vector<Place> place_;
  std::vector<Group> groups_;
  // Per gradient ring step (from transfers_end_): bit k set when a flow of kind k ends there.
  std::vector<uint8_t> ring_flows_in_;
  std::vector<std::array<TaskId, 2>> ring_flow_from_;
  // The current compute slice's name: written in place, so that a million slices allocate none.
  SliceNameBuffer name_buffer_;
};

}  // namespace

Status ParseTraceWindow(std::string_view flag, std::string_view text, TraceWindow* window) {
  const Status bad = Status::InvalidInput(
      std::string(flag) + ": expected FIRST:END (microbatches FIRST to END - 1, e.g. 0:8, or 8: "
      "for the rest); got " + Quoted(text));
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad;
  auto parse = [](std::string_view digits, int32_t* value) {
    if (digits.empty()) return false;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
    return ec == std::errc() && end == digits.data() + digits.size() && *value >= 0;
  };
  TraceWindow w;
  if (!parse(text.substr(0, colon), &w.first_microbatch)) return bad;
  const std::string_view end = text.substr(colon + 1);
  if (!end.empty()) {
    if (!parse(end, &w.end_microbatch)) return bad;
    if (w.end_microbatch <= w.first_microbatch) {
      return Status::InvalidInput(std::string(flag) + ": the window " + std::string(text) +
                                  " is empty; END must be more than FIRST");
    }
  }
  *window = w;
  return Status();
}

Status CheckTraceWindow(std::string_view flag, const TraceWindow& window,
                        int32_t num_microbatches) {
  const int32_t m = num_microbatches;
  if (window.first_microbatch >= m || window.end_microbatch > m) {
    return Status::InvalidInput(
        std::string(flag) + ": microbatches " + std::to_string(window.first_microbatch) + ":" +
        (window.end_microbatch < 0 ? "" : std::to_string(window.end_microbatch)) +
        " are not all in the run; it has microbatches 0 to " + std::to_string(m - 1) +
        " (window 0:" + std::to_string(m) + ")");
  }
  return Status();
}

const std::vector<std::string_view>& TraceArgNames() {
  static const std::vector<std::string_view> names = {
      "op",        "microbatch", "stage",        "chunk",      "backward_microbatch",
      "backward_stage", "backward_chunk", "duration_ns", "from_rank", "to_rank",
      "from_stage", "to_stage",  "rank",         "from_replica", "to_replica",
      "shard",     "bytes",      "route",      "layer"};
  return names;
}

int64_t TraceNs(double seconds) { return std::llround(seconds * 1e9); }

void StreamTrace(const TraceRun& run, const TraceWindow& window, TraceSink* sink) {
  TraceStreamer(run, window, sink).Run();
}

}  // namespace ppsim
