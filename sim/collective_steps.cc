#include "sim/collective_steps.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace ppsim {
namespace {

// Where a step of a collective's phase goes (CollectivePlan): to the next member in the node, or
// to the member of the same place on the next node.
enum class Peer : uint8_t { kInNode, kAcrossNodes };

struct Phase {
  Peer peer = Peer::kInNode;
  int32_t steps = 0;
  int64_t step_bytes = 0;
  // > 0: each step also sends this many bytes to the same GPU of the next node, side by side with
  // step_bytes to the next GPU in the node (`peer` unused): NCCL's channels and pipelines keep
  // NVLink and the NICs busy at once.
  int64_t across_bytes = 0;
};

// NVLS moves 6/5 of its traffic: NCCL's model gives NVLS 5/6 of its graph's bus bandwidth
// (tuning.cc, sim/nccl-collectives.md §2.3 step 4), which the measured 8 x H100 bus bandwidths
// bear out at large sizes (§4.2).
constexpr double kNvlsFactor = 6.0 / 5.0;

// The phases of one collective of `bytes` over n members, added piece by piece.
class Phases {
 public:
  Phases(const CollectivePlan& plan, int64_t bytes, int32_t n)
      : plan_(plan), bytes_(bytes), ppn_(plan.members_per_node), nodes_(n / ppn_) {}

  int32_t ppn() const { return ppn_; }
  int32_t nodes() const { return nodes_; }
  // `share` of the data, on the wire.
  int64_t Part(double share) const {
    return OnTheWire(static_cast<int64_t>(std::ceil(static_cast<double>(bytes_) * share)),
                     plan_.wire_factor);
  }
  void Add(Peer peer, int32_t steps, int64_t step_bytes) {
    if (steps > 0) phases_.push_back({peer, steps, step_bytes});
  }
  // Steps that send `in_node` to the next GPU in the node beside `across` to the next node.
  void AddSideBySide(int32_t steps, int64_t in_node, int64_t across) {
    phases_.push_back({Peer::kInNode, steps, in_node, across});
  }
  // The tree across nodes: fill and drain (2 log2 N empty steps), then c pipelined chunks, each
  // sending `in_node` / c to the next GPU in the node beside 2S/(ppn c) to the next node (every
  // node sends and receives 2S in the two trees, over its ppn GPUs' NICs).
  void AddTree(double in_node) {
    int32_t depth = 0;
    while ((1 << depth) < nodes_) ++depth;
    const int32_t c = std::max(1, plan_.pipeline_chunks);
    if (nodes_ == 1) {
      Add(Peer::kInNode, c, Part(2.0 / c));
      return;
    }
    Add(Peer::kAcrossNodes, 2 * depth, 0);
    if (in_node > 0 && ppn_ > 1) {
      AddSideBySide(c, Part(in_node / c), Part(2.0 / ppn_ / c));
    } else {
      Add(Peer::kAcrossNodes, c, Part(2.0 / ppn_ / c));
    }
  }
  std::vector<Phase> Take() { return std::move(phases_); }

 private:
  const CollectivePlan& plan_;
  int64_t bytes_;
  int32_t ppn_;
  int32_t nodes_;
  std::vector<Phase> phases_;
};

// The phases of `plan` for one collective of `bytes` over n members (see CollectivePlan).
std::vector<Phase> PhasesOf(const CollectivePlan& plan, CollectiveKind kind, int64_t bytes,
                            int32_t n) {
  Phases phases(plan, bytes, n);
  const int32_t ppn = phases.ppn();
  const int32_t nodes = phases.nodes();
  const bool reduce = kind != CollectiveKind::kAllGather;
  const bool gather = kind != CollectiveKind::kReduceScatter;
  switch (plan.algorithm) {
    case CollectiveAlgorithm::kRing:  // TaskGraphBuilder::AddRing, unless over several nodes
      if (ppn > 1 && nodes > 1) {
        // NCCL's channels (one per NIC) leave each node through a different GPU: each step sends
        // (ppn - 1)/ppn of the chunk to the next GPU in the node and 1/ppn to the next node.
        const int32_t steps = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
        phases.AddSideBySide(steps, phases.Part((ppn - 1.0) / ppn / n), phases.Part(1.0 / ppn / n));
      }
      break;
    case CollectiveAlgorithm::kHierarchical:
      if (reduce) phases.Add(Peer::kInNode, ppn - 1, phases.Part(1.0 / ppn));
      phases.Add(Peer::kAcrossNodes, (reduce && gather ? 2 : 1) * (nodes - 1),
                 phases.Part(1.0 / n));
      if (gather) phases.Add(Peer::kInNode, ppn - 1, phases.Part(1.0 / ppn));
      break;
    case CollectiveAlgorithm::kTree:
      // The chain through the node's GPUs carries 2S too.
      phases.Add(Peer::kInNode, 2 * (ppn - 1), 0);
      phases.AddTree(2.0);
      break;
    case CollectiveAlgorithm::kNvls:
      if (reduce && gather) {
        phases.Add(Peer::kInNode, 1, phases.Part(kNvlsFactor));
        phases.Add(Peer::kInNode, 1, phases.Part(kNvlsFactor / ppn));
      } else {
        phases.Add(Peer::kInNode, 1, phases.Part(kNvlsFactor * (ppn - 1) / ppn));
      }
      break;
    case CollectiveAlgorithm::kNvlsTree:
      // NVLS in the node (6/5 S(1 + 1/ppn)) pipelined with the tree of the heads across nodes.
      phases.AddTree(kNvlsFactor * (1.0 + 1.0 / ppn));
      break;
  }
  return phases.Take();
}

// The steps of a collective planned other than as a ring, step by step over its compiled
// members (replicas 0 .. members - 1 of the group's GPUs of one tensor-parallel index).
class PlannedSteps {
 public:
  PlannedSteps(const CollectiveGroup& group, int32_t ppn, TaskGraphBuilder* builder)
      : rank_(group.ring.rank),
        stage_(group.ring.stage),
        shard_(group.shard),
        dp_(group.replicas),
        ppn_(ppn),
        members_(static_cast<int32_t>(group.ring.members.size())),
        builder_(builder),
        previous_(members_),
        current_(members_) {}

  // Each member's first step comes after its `waits`.
  MemberSpan Add(const std::vector<Phase>& phases, const MemberWaits& waits) {
    MemberSpan span;
    span.first.resize(members_);
    span.last.resize(members_);
    bool first = true;
    for (const Phase& phase : phases) {
      std::vector<std::pair<Peer, int64_t>> parts = {{phase.peer, phase.step_bytes}};
      if (phase.across_bytes > 0) {
        parts = {{Peer::kInNode, phase.step_bytes}, {Peer::kAcrossNodes, phase.across_bytes}};
      }
      for (int32_t k = 0; k < phase.steps; ++k) {
        for (int32_t r = 0; r < members_; ++r) AddStep(r, parts, first ? &waits : nullptr, &span);
        previous_.swap(current_);
        sent_over_.clear();
        for (const auto& part : parts) sent_over_.push_back(part.first);
        first = false;
      }
    }
    for (int32_t r = 0; r < members_; ++r) span.last[r] = LastOf(r);
    return span;
  }

 private:
  // The member r sends to (by = 1) or receives from (by = -1) in the node or across nodes.
  int32_t Next(Peer peer, int32_t r, int32_t by) const {
    if (peer == Peer::kAcrossNodes) return ((r + by * ppn_) % dp_ + dp_) % dp_;
    const int32_t base = r - r % ppn_;
    return base + ((r % ppn_ + by) % ppn_ + ppn_) % ppn_;
  }

  // The compiled members whose step before sent to r (with r itself): over the previous step's
  // parts, which may belong to the phase before.
  std::vector<int32_t> SendersOf(int32_t r) const {
    std::vector<int32_t> senders = {r};
    for (Peer peer : sent_over_) {
      const int32_t sender = Next(peer, r, -1);
      if (sender < members_ && std::find(senders.begin(), senders.end(), sender) == senders.end()) {
        senders.push_back(sender);
      }
    }
    return senders;
  }

  // Member r's step: a transfer per part, after `waits` (its first step) or after the step
  // before of itself and of the members that sent to it.
  void AddStep(int32_t r, const std::vector<std::pair<Peer, int64_t>>& parts,
               const MemberWaits* waits, MemberSpan* span) {
    current_[r].clear();
    for (const auto& [peer, bytes] : parts) {
      const int32_t to = Next(peer, r, 1);
      Task task = TransferTaskOf(TaskKind::kAllReduce, r, to, shard_, rank_, rank_, stage_, bytes);
      task.mirrored = to >= members_ ? Task::kMirrored : 0;
      if (task.mirrored) task.source_replica = static_cast<uint16_t>(Next(peer, r, -1));
      const TaskId id = builder_->Add(task);
      current_[r].push_back(id);
      if (waits != nullptr) {
        builder_->AddEdgeFrom(waits->ready[r], id);
        builder_->AddEdgeFrom(waits->previous[r], id);
        if (current_[r].size() == 1) span->first[r] = id;
        continue;
      }
      AddEdgesFromSendersOf(r, id);
    }
  }

  void AddEdgesFromSendersOf(int32_t r, TaskId id) {
    for (int32_t sender : SendersOf(r)) {
      for (TaskId before : previous_[sender]) builder_->AddEdge(before, id);
    }
  }

  // Member r's last task: its last step, or for a last step of two parts a timer of no time that
  // ends the collective once both parts the member sent and those it received have.
  TaskId LastOf(int32_t r) {
    if (previous_[r].size() == 1) return previous_[r][0];
    const TaskId join = builder_->Add(DelayTaskOf(rank_, static_cast<size_t>(stage_), r, 0));
    AddEdgesFromSendersOf(r, join);
    return join;
  }

  int32_t rank_;
  int32_t stage_;
  int32_t shard_;
  int32_t dp_;
  int32_t ppn_;
  int32_t members_;
  TaskGraphBuilder* builder_;
  // Each member's tasks of the step before and of this one (two for a step of two parts).
  std::vector<std::vector<TaskId>> previous_, current_;
  std::vector<Peer> sent_over_;  // the parts of the step before
};

}  // namespace

MemberSpan AddCollective(const CollectiveGroup& group, const CollectivePlan& plan,
                         CollectiveKind kind, int64_t bytes, MemberWaits waits,
                         TaskGraphBuilder* builder) {
  const RingCollective& ring = group.ring;
  const int32_t n = ring.size;
  const int32_t ppn = plan.members_per_node;
  const bool as_ring = plan.algorithm == CollectiveAlgorithm::kRing && (ppn == 1 || ppn == n);
  std::vector<TaskId> timers;
  if (plan.fixed_latency_s > 0 || !as_ring) {
    // Each member's timer (NCCL's fixed latency, or none), after its data is ready, goes before
    // its first step (or steps: a step may have two parts) and stands for them.
    for (size_t i = 0; i < ring.members.size(); ++i) {
      const TaskId timer = builder->Add(DelayTaskOf(ring.rank, static_cast<size_t>(ring.stage),
                                                    ring.members[i].replica, plan.fixed_latency_s));
      builder->AddEdgeFrom(waits.ready[i], timer);
      builder->AddEdgeFrom(waits.previous[i], timer);
      waits.ready[i] = timer;
      waits.previous[i] = TaskGraph::kNoTask;
      timers.push_back(timer);
    }
  }
  MemberSpan span;
  if (as_ring) {
    const bool gathers = kind == CollectiveKind::kAllGather;
    const RingSteps steps = {.first = gathers ? n - 1 : 0,
                             .count = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1,
                             .bytes = bytes,
                             .wire_factor = plan.wire_factor,
                             .merge = plan.merge_steps};
    span = builder->AddRing(ring, steps, waits);
  } else {
    span = PlannedSteps(group, ppn, builder).Add(PhasesOf(plan, kind, bytes, n), waits);
  }
  if (!timers.empty()) span.first = std::move(timers);
  return span;
}

}  // namespace ppsim
