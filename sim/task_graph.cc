#include "sim/task_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "base/names.h"

namespace ppsim {
namespace {

constexpr NamedValue<P2pMode> kP2pModes[] = {
    {"eager", P2pMode::kEager},
    {"megatron", P2pMode::kMegatron},
    {"megatron-no-overlap", P2pMode::kMegatronNoOverlap},
    {"torch", P2pMode::kTorch}};

// What an op consumes: the output of another op, named by its (stage, microbatch).
enum class Output {
  kActivation,     // F(stage, microbatch)'s output.
  kGradient,       // The input gradient from I or B (stage, microbatch).
  kInputGradient,  // I(stage, microbatch) having run (W needs it).
};

struct Need {
  Output output;
  int32_t stage;
  int32_t microbatch;
};

// The needs of `op` within the pipeline its microbatch flows through; returns how many (0 or 1).
int NeedsOf(const Op& op, const Schedule& schedule, Need* need) {
  const int32_t s = op.stage.value();
  const int32_t j = op.microbatch.value();
  const Pipeline pipeline = schedule.PipelineOf(op.microbatch);
  switch (op.kind) {
    case OpKind::kForward:
      if (s == pipeline.first_stage) return 0;
      *need = {Output::kActivation, s - 1, j};
      return 1;
    case OpKind::kBackwardInput:
    case OpKind::kBackward:
      *need = s < pipeline.last_stage ? Need{Output::kGradient, s + 1, j}
                                      : Need{Output::kActivation, s, j};
      return 1;
    case OpKind::kBackwardWeight:
      *need = {Output::kInputGradient, s, j};
      return 1;
  }
  return 0;
}

// Which compute task produces each output.
class Producers {
 public:
  explicit Producers(const Schedule& schedule)
      : num_microbatches_(schedule.num_microbatches),
        tasks_{std::vector<TaskId>(Cells(schedule)), std::vector<TaskId>(Cells(schedule)),
               std::vector<TaskId>(Cells(schedule))} {}

  void Add(const Op& op, TaskId task) {
    switch (op.kind) {
      case OpKind::kForward: Slot(Output::kActivation, op) = task; break;
      case OpKind::kBackward: Slot(Output::kGradient, op) = task; break;
      case OpKind::kBackwardInput:
        Slot(Output::kGradient, op) = task;
        Slot(Output::kInputGradient, op) = task;
        break;
      case OpKind::kBackwardWeight: break;
    }
  }

  TaskId Of(const Need& need) const {
    return tasks_[static_cast<int>(need.output)]
                 [static_cast<size_t>(need.stage) * num_microbatches_ + need.microbatch];
  }

 private:
  static size_t Cells(const Schedule& s) {
    return static_cast<size_t>(s.num_stages) * s.num_microbatches;
  }
  TaskId& Slot(Output output, const Op& op) {
    return tasks_[static_cast<int>(output)]
                 [static_cast<size_t>(op.stage.value()) * num_microbatches_ +
                  op.microbatch.value()];
  }

  size_t num_microbatches_;
  std::vector<TaskId> tasks_[3];
};

const Action& ActionOf(const Schedule& schedule, const Task& task) {
  return schedule.orders[task.rank][task.position];
}

// The op of `action` that provides `need`.
std::string NeededOpName(const Need& need, const Action& action) {
  for (int k = 0; k < action.num_ops(); ++k) {
    const Op& op = action.op(k);
    if (op.stage.value() == need.stage && op.microbatch.value() == need.microbatch &&
        (op.kind == OpKind::kForward) == (need.output == Output::kActivation)) {
      return FormatOp(op);
    }
  }
  return FormatAction(action);
}

std::string DescribeDeadlock(const Schedule& schedule, const TaskGraph& graph,
                             const Producers& producers, const std::vector<bool>& done) {
  std::string message = "deadlock:";
  bool first = true;
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    size_t position = 0;
    while (position < order.size() && done[graph.ComputeTask(rank, position)]) ++position;
    if (position == order.size()) continue;
    const Action& action = order[position];
    std::string waits_for;
    for (int k = 0; k < action.num_ops(); ++k) {
      Need need;
      if (NeedsOf(action.op(k), schedule, &need) == 0) continue;
      const TaskId producer = producers.Of(need);
      if (done[producer]) continue;
      waits_for += (waits_for.empty() ? "" : " and ") +
                   NeededOpName(need, ActionOf(schedule, graph.tasks[producer]));
    }
    if (waits_for.empty()) waits_for = "its p2p call";
    message += std::string(first ? " " : "; ") + "rank " + std::to_string(rank) + " waits at " +
               FormatAction(action) + " for " + waits_for;
    first = false;
  }
  return message;
}

// Part `index` of `bytes` split into `parts` as evenly as whole bytes allow.
int64_t SplitBytes(int64_t bytes, int32_t parts, int32_t index) {
  return bytes / parts + (index < bytes % parts ? 1 : 0);
}

// The bytes a collective's protocol moves for `bytes` of data (CollectivePlan::wire_factor).
int64_t OnTheWire(int64_t bytes, double wire_factor) {
  if (wire_factor == 1) return bytes;
  return static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * wire_factor));
}

Task ComputeTaskOf(int32_t rank, size_t position, double duration_s) {
  Task task;
  task.kind = TaskKind::kCompute;
  task.rank = rank;
  task.peer = rank;
  task.position = static_cast<uint32_t>(position);
  task.duration_s = duration_s;
  return task;
}

Task TransferTaskOf(TaskKind kind, int32_t replica, int32_t peer_replica, int32_t shard,
                    int32_t rank, int32_t peer, int32_t position, int64_t bytes) {
  Task task;
  task.kind = kind;
  task.replica = static_cast<uint16_t>(replica);
  task.peer_replica = static_cast<uint16_t>(peer_replica);
  task.shard = task.peer_shard = static_cast<uint16_t>(shard);
  task.rank = rank;
  task.peer = peer;
  task.position = static_cast<uint32_t>(position);
  task.bytes = bytes;
  return task;
}

// The gradient synchronisation's tasks that later parts of the compiler wire up.
struct GradientSync {
  // Per stage: the last reduce step (all-reduce or ZeRO-1's reduce-scatter) of every replica and
  // shard; the optimizer step of its rank waits for them.
  std::vector<std::vector<TaskId>> last_steps;
  // ZeRO-1, per stage: the first all-gather step of every replica and shard, which waits for the
  // optimizer step of its rank and replica.
  std::vector<std::vector<TaskId>> gather_starts;
  // (compute task, delay task beside it): the delay gets the compute task's predecessors.
  std::vector<std::pair<TaskId, TaskId>> delays;
};

// A GPU of a gradient ring: its replica and its GPU in the rank's group.
struct RingMember {
  int32_t replica = 0;
  int32_t shard = 0;
};

// Adds `steps` steps of a ring for (rank, stage), from step `first` of the 2(n - 1)-step ring
// all-reduce of `bytes` over its n = `ring_size` members, of which `members` (the first ones, in
// ring order) are compiled: in step k member i sends chunk (i - k) mod n to member i + 1, after its
// own previous step and member i - 1's. With folded replicas `members` holds replica 0's and the
// last one sends to `wrap_to` on a mirrored transfer; member 0's predecessor is then the last
// compiled member, which stands for it. Each member's first step comes after `after[i]` and
// `chain[i]` (each when not kNoTask). `starts` and `ends` get each member's first and last step.
void AddRingSteps(int32_t rank, int32_t stage, const std::vector<RingMember>& members,
                  int32_t ring_size, const RingMember& wrap_to, int32_t first, int32_t steps,
                  int64_t bytes, double wire_factor, const std::vector<TaskId>& after,
                  const std::vector<TaskId>& chain, TaskGraph* graph,
                  std::vector<std::pair<TaskId, TaskId>>* edges, std::vector<TaskId>* starts,
                  std::vector<TaskId>* ends, int32_t last_replica = -1,
                  uint8_t mirror_kind = Task::kMirrored) {
  const int32_t m = static_cast<int32_t>(members.size());
  const int32_t n = ring_size;
  const bool folded = m < n;
  std::vector<TaskId> previous(m), current(m);
  for (int32_t k = 0; k < steps; ++k) {
    const int32_t step = first + k;
    for (int32_t i = 0; i < m; ++i) {
      const RingMember& from = members[i];
      const RingMember& to = i + 1 < m ? members[i + 1] : wrap_to;
      const int32_t chunk = ((i - step) % n + n) % n;
      current[i] = static_cast<TaskId>(graph->tasks.size());
      Task task = TransferTaskOf(TaskKind::kAllReduce, from.replica, to.replica, from.shard, rank,
                                 rank, stage, OnTheWire(SplitBytes(bytes, n, chunk), wire_factor));
      task.peer_shard = static_cast<uint16_t>(to.shard);
      task.mirrored = folded && i + 1 == m ? mirror_kind : 0;
      // Member 0's predecessor: the last member of the last replica (or `last_replica`'s).
      if (task.mirrored) {
        task.source_replica = static_cast<uint16_t>(last_replica >= 0 ? last_replica : n / m - 1);
      }
      graph->tasks.push_back(task);
      if (k == 0) {
        for (TaskId before : {after[i], chain[i]}) {
          if (before != TaskGraph::kNoTask) edges->emplace_back(before, current[i]);
        }
        (*starts)[i] = current[i];
      } else {
        edges->emplace_back(previous[i], current[i]);
        const TaskId sender = previous[(i + m - 1) % m];
        if (sender != previous[i]) edges->emplace_back(sender, current[i]);
      }
    }
    previous.swap(current);
  }
  *ends = previous;
}

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

// The phases of `plan` for one collective of `bytes` over n members (see CollectivePlan).
std::vector<Phase> PhasesOf(const CollectivePlan& plan, CollectiveKind kind, int64_t bytes,
                            int32_t n) {
  const int32_t ppn = plan.members_per_node;
  const int32_t nodes = n / ppn;
  auto part = [&](double share) {
    return OnTheWire(static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * share)),
                     plan.wire_factor);
  };
  std::vector<Phase> phases;
  auto add = [&](Peer peer, int32_t steps, int64_t step_bytes) {
    if (steps > 0) phases.push_back({peer, steps, step_bytes});
  };
  // The tree across nodes: fill and drain (2 log2 N empty steps), then c pipelined chunks, each
  // sending `in_node` / c to the next GPU in the node beside 2S/(ppn c) to the next node (every
  // node sends and receives 2S in the two trees, over its ppn GPUs' NICs).
  auto tree = [&](double in_node) {
    int32_t depth = 0;
    while ((1 << depth) < nodes) ++depth;
    const int32_t c = std::max(1, plan.pipeline_chunks);
    if (nodes == 1) {
      add(Peer::kInNode, c, part(2.0 / c));
      return;
    }
    add(Peer::kAcrossNodes, 2 * depth, 0);
    if (in_node > 0 && ppn > 1) {
      phases.push_back({Peer::kInNode, c, part(in_node / c), part(2.0 / ppn / c)});
    } else {
      add(Peer::kAcrossNodes, c, part(2.0 / ppn / c));
    }
  };
  const bool reduce = kind != CollectiveKind::kAllGather;
  const bool gather = kind != CollectiveKind::kReduceScatter;
  switch (plan.algorithm) {
    case CollectiveAlgorithm::kRing:  // AddRingSteps, unless over several nodes of ppn > 1
      if (ppn > 1 && nodes > 1) {
        // NCCL's channels (one per NIC) leave each node through a different GPU: each step sends
        // (ppn - 1)/ppn of the chunk to the next GPU in the node and 1/ppn to the next node.
        const int32_t steps = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
        phases.push_back({Peer::kInNode, steps, part((ppn - 1.0) / ppn / n), part(1.0 / ppn / n)});
      }
      break;
    case CollectiveAlgorithm::kHierarchical:
      if (reduce) add(Peer::kInNode, ppn - 1, part(1.0 / ppn));
      add(Peer::kAcrossNodes, (reduce && gather ? 2 : 1) * (nodes - 1), part(1.0 / n));
      if (gather) add(Peer::kInNode, ppn - 1, part(1.0 / ppn));
      break;
    case CollectiveAlgorithm::kTree:
      // The chain through the node's GPUs carries 2S too.
      add(Peer::kInNode, 2 * (ppn - 1), 0);
      tree(2.0);
      break;
    case CollectiveAlgorithm::kNvls:
      if (reduce && gather) {
        add(Peer::kInNode, 1, part(kNvlsFactor));
        add(Peer::kInNode, 1, part(kNvlsFactor / ppn));
      } else {
        add(Peer::kInNode, 1, part(kNvlsFactor * (ppn - 1) / ppn));
      }
      break;
    case CollectiveAlgorithm::kNvlsTree:
      // NVLS in the node (6/5 S(1 + 1/ppn)) pipelined with the tree of the heads across nodes.
      tree(kNvlsFactor * (1.0 + 1.0 / ppn));
      break;
  }
  return phases;
}

// Adds the steps of a collective planned other than as a ring, for (rank, stage) over the dp
// replicas' GPUs of tensor-parallel index `shard`, of which replicas 0 .. members.size() - 1 are
// compiled (1 when folded: its steps to other replicas are mirrored). Each member's first step
// comes after `after[i]` and `chain[i]`; `starts` and `ends` get each member's first and last.
void AddPlannedSteps(const std::vector<Phase>& phases, int32_t ppn, int32_t dp, int32_t rank,
                     int32_t stage, int32_t shard, int32_t members,
                     const std::vector<TaskId>& after, const std::vector<TaskId>& chain,
                     TaskGraph* graph, std::vector<std::pair<TaskId, TaskId>>* edges,
                     std::vector<TaskId>* starts, std::vector<TaskId>* ends) {
  // Each member's tasks of the step before (two for a step of two parts, else one).
  std::vector<std::vector<TaskId>> previous(members), current(members);
  // The member r sends to (by = 1) or receives from (by = -1) in the node or across nodes.
  auto next = [&](Peer peer, int32_t r, int32_t by) {
    if (peer == Peer::kAcrossNodes) return ((r + by * ppn) % dp + dp) % dp;
    const int32_t base = r - r % ppn;
    return base + ((r % ppn + by) % ppn + ppn) % ppn;
  };
  // The compiled members whose step before sent to r (with r itself): over the previous step's
  // parts, which may belong to the phase before.
  std::vector<Peer> sent_over;
  auto senders_of = [&](int32_t r) {
    std::vector<int32_t> senders = {r};
    for (Peer peer : sent_over) {
      const int32_t sender = next(peer, r, -1);
      if (sender < members && std::find(senders.begin(), senders.end(), sender) == senders.end()) {
        senders.push_back(sender);
      }
    }
    return senders;
  };
  bool first = true;
  for (const Phase& phase : phases) {
    std::vector<std::pair<Peer, int64_t>> parts = {{phase.peer, phase.step_bytes}};
    if (phase.across_bytes > 0) {
      parts = {{Peer::kInNode, phase.step_bytes}, {Peer::kAcrossNodes, phase.across_bytes}};
    }
    for (int32_t k = 0; k < phase.steps; ++k) {
      for (int32_t r = 0; r < members; ++r) {
        current[r].clear();
        for (const auto& [peer, bytes] : parts) {
          const int32_t to = next(peer, r, 1);
          const TaskId id = static_cast<TaskId>(graph->tasks.size());
          current[r].push_back(id);
          Task task = TransferTaskOf(TaskKind::kAllReduce, r, to, shard, rank, rank, stage, bytes);
          task.mirrored = to >= members ? Task::kMirrored : 0;
          if (task.mirrored) task.source_replica = static_cast<uint16_t>(next(peer, r, -1));
          graph->tasks.push_back(task);
          if (first) {
            for (TaskId before : {after[r], chain[r]}) {
              if (before != TaskGraph::kNoTask) edges->emplace_back(before, id);
            }
            if (current[r].size() == 1) (*starts)[r] = id;
            continue;
          }
          for (int32_t sender : senders_of(r)) {
            for (TaskId before : previous[sender]) edges->emplace_back(before, id);
          }
        }
      }
      previous.swap(current);
      sent_over.clear();
      for (const auto& part : parts) sent_over.push_back(part.first);
      first = false;
    }
  }
  for (int32_t r = 0; r < members; ++r) {
    if (previous[r].size() == 1) {
      (*ends)[r] = previous[r][0];
      continue;
    }
    // A last step of two parts: a timer of no time ends the collective once both parts the
    // member sent and those it received have.
    Task join = ComputeTaskOf(rank, static_cast<size_t>(stage), 0);
    join.kind = TaskKind::kDelay;
    join.replica = join.peer_replica = static_cast<uint16_t>(r);
    const TaskId id = static_cast<TaskId>(graph->tasks.size());
    (*ends)[r] = id;
    graph->tasks.push_back(join);
    for (int32_t sender : senders_of(r)) {
      for (TaskId before : previous[sender]) edges->emplace_back(before, id);
    }
  }
}

// The experts' gradients of (rank, stage): a ring all-reduce over each expert-data-parallel group
// (see Parallelism::ep) that has a compiled member, each member's steps after `ready` (its
// replica's last backward, by compiled member / (tp x cp)) and its data-parallel collectives'
// last step (`dense_end`, by compiled GPU). The ring's last steps go to `last`.
void AddExpertSync(int32_t rank, int32_t stage, int64_t bytes, const Parallelism& par,
                   const std::vector<TaskId>& ready, const std::vector<TaskId>& dense_end,
                   TaskGraph* graph, std::vector<std::pair<TaskId, TaskId>>* edges,
                   std::vector<TaskId>* last) {
  const int32_t gpus = par.layout.tp * par.layout.cp;  // of a rank
  const int32_t total = par.layout.dp * gpus;          // the rank's GPUs over all replicas
  const int32_t compiled = graph->num_replicas * gpus;
  const int32_t ep = par.layout.ep;
  const int32_t n = total / ep;  // members of a group
  if (n < 2) return;  // every GPU holds experts of its own
  for (int32_t group = 0; group < std::min(ep, compiled); ++group) {
    // Members group, group + e, group + 2e, ...: the compiled ones come first.
    std::vector<RingMember> members;
    std::vector<TaskId> after, chain;
    for (int32_t g = group; g < compiled; g += ep) {
      members.push_back({g / gpus, g % gpus});
      after.push_back(ready[g / gpus * par.layout.cp]);
      chain.push_back(dense_end[g]);
    }
    const int32_t c = static_cast<int32_t>(members.size());
    const int32_t next = group + c * ep;  // the first member not compiled (folded)
    const RingMember wrap_to = c < n ? RingMember{next / gpus, next % gpus} : members[0];
    const int32_t last_member = group + (n - 1) * ep;
    std::vector<TaskId> starts(c), ends(c);
    AddRingSteps(rank, stage, members, n, wrap_to, 0, 2 * (n - 1), bytes, 1, after, chain, graph,
                 edges, &starts, &ends, last_member / gpus, Task::kExpertMirror);
    last->insert(last->end(), ends.begin(), ends.end());
  }
}

// The gradient synchronisation over the replicas (see task_graph.h): per stage, its buckets'
// rings after the stage's last backward (or part-way through it), one ring per tensor-parallel
// index over the dp x cp GPUs that hold the same parameters; then the experts' (AddExpertSync).
void AddGradientSync(const Schedule& schedule, const StageCosts& costs, const Parallelism& par,
                     TaskGraph* graph, std::vector<std::pair<TaskId, TaskId>>* edges,
                     GradientSync* sync) {
  const int32_t dp = graph->num_replicas;  // compiled
  const int32_t n = par.layout.dp * par.layout.cp;  // ring members
  const int32_t m = dp * par.layout.cp;             // compiled ring members
  const bool zero = !costs.param_gather_bytes.empty();
  sync->last_steps.assign(schedule.num_stages, {});
  sync->gather_starts.assign(schedule.num_stages, {});
  // The position of each stage's last backward (B or W; a W always follows its I) on its rank.
  std::vector<int64_t> last_backward(schedule.num_stages, -1);
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    for (size_t position = 0; position < order.size(); ++position) {
      for (int k = 0; k < order[position].num_ops(); ++k) {
        const Op& op = order[position].op(k);
        if (op.kind == OpKind::kBackward || op.kind == OpKind::kBackwardWeight) {
          last_backward[op.stage.value()] = static_cast<int64_t>(position);
        }
      }
    }
  }
  const std::vector<TaskId> none(m, TaskGraph::kNoTask);
  std::vector<TaskId> starts(m), ends(m), gather_ends(m);
  std::vector<RingMember> members(m);
  for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
    const int64_t bytes = costs.DenseGradientBytes(stage);
    const int64_t expert_bytes =
        costs.expert_gradient_bytes.empty() ? 0 : costs.expert_gradient_bytes[stage];
    if ((bytes == 0 && expert_bytes == 0) || last_backward[stage] < 0) continue;
    const int32_t rank = schedule.stage_to_rank[stage].value();
    const size_t position = static_cast<size_t>(last_backward[stage]);
    const int64_t buckets =
        par.grad_bucket_bytes > 0 ? (bytes + par.grad_bucket_bytes - 1) / par.grad_bucket_bytes : 1;
    // When each bucket is ready, per member: a delay beside its replica's backward (the last
    // bucket at the backward's end).
    std::vector<std::vector<TaskId>> ready(buckets, std::vector<TaskId>(m));
    for (int32_t replica = 0; replica < dp; ++replica) {
      const TaskId backward = graph->ComputeTask(rank, position, replica);
      const double duration = graph->tasks[backward].duration_s;
      for (int64_t j = 0; j < buckets; ++j) {
        TaskId at = backward;
        if (j + 1 < buckets) {
          Task delay = ComputeTaskOf(rank, static_cast<size_t>(stage),
                                     duration * static_cast<double>(j + 1) /
                                         static_cast<double>(buckets));
          delay.kind = TaskKind::kDelay;
          delay.replica = delay.peer_replica = static_cast<uint16_t>(replica);
          at = static_cast<TaskId>(graph->tasks.size());
          sync->delays.emplace_back(backward, at);
          graph->tasks.push_back(delay);
        }
        for (int32_t slice = 0; slice < par.layout.cp; ++slice)
          ready[j][replica * par.layout.cp + slice] = at;
      }
    }
    // Per compiled GPU (replica x tp x cp + GPU of the rank's group): its last task of the
    // data-parallel collectives, which its expert ring follows (one NCCL stream).
    std::vector<TaskId> dense_end(static_cast<size_t>(dp) * par.layout.tp * par.layout.cp,
                                  TaskGraph::kNoTask);
    for (int32_t index = 0; index < par.layout.tp && bytes > 0 && n > 1; ++index) {
      for (int32_t i = 0; i < m; ++i)
        members[i] = {i / par.layout.cp, (i % par.layout.cp) * par.layout.tp + index};
      // Folded, the last compiled member sends to the first member of replica 1.
      const RingMember wrap_to = m < n ? RingMember{1, index} : members[0];
      std::vector<TaskId> chain = none, gather_chain = none;
      const CollectivePlan reduce_plan =
          par.reduce_plans.empty() ? CollectivePlan() : par.reduce_plans[stage];
      const CollectivePlan gather_plan =
          par.gather_plans.empty() ? CollectivePlan() : par.gather_plans[stage];
      // A collective: as a ring (over dp x cp members) or by its plan's phases (cp = 1).
      auto collective = [&](const CollectivePlan& plan, CollectiveKind kind, int64_t part,
                            std::vector<TaskId> after, std::vector<TaskId> before,
                            std::vector<TaskId>* last) {
        const int32_t ppn = plan.members_per_node;
        const bool ring = plan.algorithm == CollectiveAlgorithm::kRing && (ppn == 1 || ppn == n);
        std::vector<TaskId> timers;
        if (plan.fixed_latency_s > 0 || !ring) {
          // Each member's timer (NCCL's fixed latency, or none), after its data is ready, goes
          // before its first step (or steps: a step may have two parts) and stands for them.
          for (int32_t i = 0; i < m; ++i) {
            Task timer = ComputeTaskOf(rank, static_cast<size_t>(stage), plan.fixed_latency_s);
            timer.kind = TaskKind::kDelay;
            timer.replica = timer.peer_replica = static_cast<uint16_t>(members[i].replica);
            const TaskId id = static_cast<TaskId>(graph->tasks.size());
            graph->tasks.push_back(timer);
            for (TaskId t : {after[i], before[i]}) {
              if (t != TaskGraph::kNoTask) edges->emplace_back(t, id);
            }
            after[i] = id;
            before[i] = TaskGraph::kNoTask;
            timers.push_back(id);
          }
        }
        if (ring) {
          const bool gathers = kind == CollectiveKind::kAllGather;
          AddRingSteps(rank, stage, members, n, wrap_to, gathers ? n - 1 : 0,
                       kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1, part,
                       plan.wire_factor, after, before, graph, edges, &starts, last);
        } else {
          AddPlannedSteps(PhasesOf(plan, kind, part, n), plan.members_per_node, par.layout.dp, rank,
                          stage, index, m, after, before, graph, edges, &starts, last);
        }
        if (!timers.empty()) starts = timers;  // ZeRO-1's all-gather waits at them
      };
      for (int64_t j = 0; j < buckets; ++j) {
        const int32_t bucket = static_cast<int32_t>(j);
        const int64_t part = SplitBytes(bytes, static_cast<int32_t>(buckets), bucket);
        collective(reduce_plan, zero ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                   part, ready[j], chain, &ends);
        chain = ends;
        if (!zero) continue;
        const int64_t params =
            SplitBytes(costs.param_gather_bytes[stage], static_cast<int32_t>(buckets), bucket);
        collective(gather_plan, CollectiveKind::kAllGather, params, none, gather_chain,
                   &gather_ends);
        gather_chain = gather_ends;
        auto& gathers = sync->gather_starts[stage];
        gathers.insert(gathers.end(), starts.begin(), starts.end());
      }
      auto& last = sync->last_steps[stage];
      last.insert(last.end(), chain.begin(), chain.end());
      for (int32_t i = 0; i < m; ++i) {
        dense_end[static_cast<size_t>(members[i].replica) * par.layout.tp * par.layout.cp +
                  members[i].shard] = chain[i];
      }
    }
    if (expert_bytes > 0) {
      AddExpertSync(rank, stage, expert_bytes, par, ready[buckets - 1], dense_end, graph, edges,
                    &sync->last_steps[stage]);
    }
  }
}

// A step per rank and replica whose stages have one, after the rank's last task on its stream
// (`stream_end`, per replica and rank) and the last reduce steps of its stages' gradients; with
// ZeRO-1 the all-gathers of its stages follow it (or follow the reduce-scatters, without a step).
void AddOptimizerSteps(const Schedule& schedule, const StageCosts& costs,
                       const GradientSync& sync,
                       const std::vector<std::vector<TaskId>>& stream_end, TaskGraph* graph,
                       std::vector<std::pair<TaskId, TaskId>>* edges) {
  graph->optimizer_begin = static_cast<TaskId>(graph->tasks.size());
  std::vector<double> duration(schedule.num_ranks, 0.0);
  for (int32_t stage = 0; stage < static_cast<int32_t>(costs.optimizer_step_s.size()); ++stage) {
    duration[schedule.stage_to_rank[stage].value()] += costs.optimizer_step_s[stage];
  }
  for (int32_t replica = 0; replica < graph->num_replicas; ++replica) {
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      TaskId step = TaskGraph::kNoTask;
      if (duration[rank] > 0) {
        step = static_cast<TaskId>(graph->tasks.size());
        Task task = ComputeTaskOf(rank, schedule.orders[rank].size(), duration[rank]);
        task.kind = TaskKind::kOptimizer;
        task.replica = task.peer_replica = static_cast<uint16_t>(replica);
        graph->tasks.push_back(task);
        if (stream_end[replica][rank] != TaskGraph::kNoTask) {
          edges->emplace_back(stream_end[replica][rank], step);
        }
      }
      for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
        if (schedule.stage_to_rank[stage].value() != rank) continue;
        for (TaskId last : sync.last_steps[stage]) {
          // The replica's GPUs have their shards once they have sent and received the last step.
          const Task& step_task = graph->tasks[last];
          if (step_task.replica != replica && step_task.peer_replica != replica) continue;
          if (step != TaskGraph::kNoTask) {
            edges->emplace_back(last, step);
          } else {
            for (TaskId gather : sync.gather_starts[stage]) {
              if (graph->tasks[gather].replica == replica) edges->emplace_back(last, gather);
            }
          }
        }
        if (step == TaskGraph::kNoTask) continue;
        for (TaskId gather : sync.gather_starts[stage]) {
          if (graph->tasks[gather].replica == replica) edges->emplace_back(step, gather);
        }
      }
    }
  }
}


// A point of a rank's stream where it issues p2p ops (P2pMode::kMegatron): before action
// `before`, it posts the sends of the cross-rank outputs of the actions at `sends` and the receives
// of the cross-rank inputs of the actions at `recvs`, then waits until the ops named in
// `wait_sends` and `wait_recvs` (posted here or earlier) have ended.
struct Call {
  size_t before = 0;
  std::vector<size_t> sends;
  std::vector<size_t> recvs;
  std::vector<size_t> wait_sends;
  std::vector<size_t> wait_recvs;
};

// The calls of one rank's order as Megatron-LM's schedules issue them with its training defaults,
// or with --no-overlap-p2p-communication (task_graph.h), or why the order does not have
// Megatron's shape.
std::string MegatronCalls(const std::vector<Action>& order, int32_t chunks, bool overlap_p2p_comm,
                          std::vector<Call>* calls) {
  const size_t n = order.size();
  size_t forwards = 0;
  for (size_t i = 0; i < n; ++i) {
    const Action& a = order[i];
    if (a.num_ops() != 1 || (a.op(0).kind != OpKind::kForward && a.op(0).kind != OpKind::kBackward)) {
      return "its action " + FormatAction(a) + " is not a single F or B";
    }
    forwards += a.op(0).kind == OpKind::kForward ? 1 : 0;
  }
  auto is_forward = [&](size_t i) { return order[i].op(0).kind == OpKind::kForward; };
  size_t leading = 0;
  while (leading < n && is_forward(leading)) ++leading;
  if (2 * forwards != n) return "it has " + std::to_string(forwards) + " forwards in " +
                                std::to_string(n) + " actions";
  // W warmup forwards, R forward-backward pairs, W cooldown backwards.
  const size_t warmup = leading == forwards ? leading : leading - 1;
  const size_t pairs = forwards - warmup;
  for (size_t i = warmup; i < n; ++i) {
    const bool in_pairs = i < warmup + 2 * pairs;
    const bool forward_expected = in_pairs && (i - warmup) % 2 == 0;
    if (is_forward(i) != forward_expected) {
      return "action " + std::to_string(i) + " (" + FormatAction(order[i]) +
             ") breaks the shape of warmup forwards, forward-backward pairs, cooldown backwards";
    }
  }
  auto in_range = [&](std::vector<size_t> positions) {
    std::erase_if(positions, [&](size_t p) { return p >= n; });
    return positions;
  };
  // A blocking call: posts and waits for the same ops.
  auto blocking = [&](size_t before, std::vector<size_t> sends, std::vector<size_t> recvs) {
    recvs = in_range(std::move(recvs));
    calls->push_back({before, sends, recvs, sends, recvs});
  };
  const size_t w = warmup;
  const size_t r = pairs;
  if (chunks == 1) {
    // forward_backward_pipelining_without_interleaving: batched groups, each waited on.
    for (size_t i = 0; i < w; ++i) {
      blocking(i, {}, {i});      // recv_forward
      blocking(i + 1, {i}, {});  // send_forward
    }
    if (r > 0) blocking(w, {}, {w});
    for (size_t i = 0; i < r; ++i) {
      const size_t f = w + 2 * i;
      const size_t b = f + 1;
      blocking(b, {f}, {b});  // send_forward_recv_backward
      if (i + 1 < r) {
        blocking(b + 1, {b}, {b + 1});  // send_backward_recv_forward
      } else {
        blocking(b + 1, {b}, {});  // send_backward
      }
    }
    for (size_t i = 0; i < w; ++i) {
      const size_t c = w + 2 * r + i;
      blocking(c, {}, {c});      // recv_backward
      blocking(c + 1, {c}, {});  // send_backward
    }
    return "";
  }
  if (!overlap_p2p_comm) {
    // forward_backward_pipelining_with_interleaving without overlap_p2p_comm: batched, blocking
    // calls; the last warmup call also receives the first backward's input, and each steady pair
    // runs F and B before one call that sends both outputs and receives both next inputs.
    blocking(0, {}, {0});  // recv_forward
    for (size_t k = 0; k < w; ++k) {
      if (k + 1 == w && r > 0) {
        blocking(k + 1, {k}, {k + 1, k + 2});  // send_forward_backward_recv_forward_backward
      } else {
        blocking(k + 1, {k}, {k + 1});  // send_forward_recv_forward
      }
    }
    if (r == 0) blocking(w, {}, {w});  // recv_backward
    for (size_t k = 0; k < r; ++k) {
      const size_t f = w + 2 * k;
      const size_t b = f + 1;
      if (k + 1 < r) {
        blocking(b + 1, {f, b}, {f + 2, b + 2});
      } else {
        blocking(b + 1, {f, b}, {b + 1});  // the first cooldown backward's input
      }
    }
    for (size_t i = 0; i < w; ++i) {
      const size_t c = w + 2 * r + i;
      blocking(c + 1, {c}, {c + 1});  // send_backward_recv_backward
    }
    return "";
  }
  // forward_backward_pipelining_with_interleaving with overlap_p2p_comm (the training default for
  // interleaved schedules): single ops, and handles waited on later.
  blocking(0, {}, {0});  // recv_forward
  for (size_t k = 0; k < w; ++k) {
    blocking(k + 1, {k}, {k + 1});  // send_forward_recv_forward, waited
    if (k + 1 == w && r > 0) {
      calls->push_back({k + 1, {}, in_range({k + 2}), {}, {}});  // recv for the first B, queued
    }
  }
  if (r == 0) blocking(w, {}, {w});  // recv_backward
  for (size_t k = 0; k < r; ++k) {
    const size_t f = w + 2 * k;
    const size_t b = f + 1;
    // pre_forward: the queued receive of F's input (from the previous pair's post_forward).
    if (k > 0) calls->push_back({f, {}, {}, {}, {f}});
    // post_forward: send F's output and receive the next F's input; the send is waited on at once
    // (deallocate_pipeline_outputs); pre_backward: the queued receive of B's input.
    std::vector<size_t> next_forward = k + 1 < r ? std::vector<size_t>{f + 2} : std::vector<size_t>{};
    calls->push_back({b, {f}, next_forward, {f}, {b}});
    // post_backward: send B's output and receive the next B's input; wait the previous B's send.
    const size_t next_backward = k + 1 < r ? b + 2 : b + 1;  // the first cooldown B after the last
    std::vector<size_t> previous_send = k > 0 ? std::vector<size_t>{b - 2} : std::vector<size_t>{};
    calls->push_back({b + 1, {b}, in_range({next_backward}), previous_send, {}});
  }
  for (size_t i = 0; i < w; ++i) {
    const size_t c = w + 2 * r + i;
    if (i == 0 && r > 0) calls->push_back({c, {}, {}, {}, {c}});  // the queued receive
    blocking(c + 1, {c}, {c + 1});  // send_backward_recv_backward
  }
  // The last pair's backward send is waited on at the end.
  if (r > 0) calls->push_back({n, {}, {}, {w + 2 * r - 1}, {}});
  return "";
}

// Every rank's calls as Megatron issues them, or InvalidInput naming the first rank whose order
// does not have Megatron's shape.
Status MegatronCallsOfRanks(const Schedule& schedule, bool overlap_p2p_comm,
                            std::vector<std::vector<Call>>* calls) {
  const int32_t ranks = schedule.num_ranks;
  std::vector<int32_t> chunks(ranks, 0);
  for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
    ++chunks[schedule.stage_to_rank[stage].value()];
  }
  calls->assign(ranks, {});
  for (int32_t rank = 0; rank < ranks; ++rank) {
    const std::string why =
        MegatronCalls(schedule.orders[rank], chunks[rank], overlap_p2p_comm, &(*calls)[rank]);
    if (!why.empty()) {
      return Status::InvalidInput("megatron: rank " + std::to_string(rank) +
                                  "'s order is not Megatron-LM's: " + why +
                                  "; Megatron runs 1F1B, Interleaved1F1B and GPipe orders");
    }
  }
  return Status();
}

// Every rank's p2p ops as torch.distributed.pipelining's _PipelineScheduleRuntime issues them
// (sim/p2p-semantics.md, section 5.4): the orders are lowered round-robin over the ranks, one
// action per rank and round, an action once its inputs are there (its receive lowered, or its
// producer lowered on the same rank); a lowered action's sends are posted right after it and
// waited on at the end of the step, and each receive is posted where the receiving rank's list
// has got to when the sender's action is lowered, and waited on just before its consumer. `ends`
// are the transfers' producers and consumers. Deadlock when no rank can go on.
Status TorchCallsOfRanks(const Schedule& schedule, const TaskGraph& graph,
                         const std::vector<std::pair<TaskId, TaskId>>& ends,
                         std::vector<std::vector<Call>>* calls) {
  const int32_t ranks = schedule.num_ranks;
  calls->assign(ranks, {});
  // Per rank and position: the positions of cross-rank producers it waits for, and the
  // (rank, position) of cross-rank consumers of its outputs (replica 0's transfers).
  std::vector<std::vector<std::vector<std::pair<int32_t, size_t>>>> inputs(ranks), outputs(ranks);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    inputs[rank].resize(schedule.orders[rank].size());
    outputs[rank].resize(schedule.orders[rank].size());
  }
  for (const auto& [producer, consumer] : ends) {
    const Task& from = graph.tasks[producer];
    const Task& to = graph.tasks[consumer];
    if (from.replica != 0) continue;
    inputs[to.rank][to.position].emplace_back(from.rank, from.position);
    outputs[from.rank][from.position].emplace_back(to.rank, to.position);
  }
  std::vector<size_t> lowered(ranks, 0);  // actions lowered per rank
  size_t remaining = schedule.NumActions();
  while (remaining > 0) {
    bool progress = false;
    for (int32_t rank = 0; rank < ranks; ++rank) {
      const size_t position = lowered[rank];
      if (position == schedule.orders[rank].size()) continue;
      bool ready = true;
      for (const auto& [from, p] : inputs[rank][position]) ready = ready && lowered[from] > p;
      // Inputs from this rank come earlier in its own order (CheckSchedule and the compiler's
      // deadlock check hold that).
      if (!ready) continue;
      lowered[rank] = position + 1;
      --remaining;
      progress = true;
      for (const auto& [to, q] : outputs[rank][position]) {
        (*calls)[rank].push_back({position + 1, {position}, {}, {}, {}});  // SEND after it
        (*calls)[to].push_back({lowered[to], {}, {q}, {}, {}});  // RECV at the receiver's end
      }
      if (!inputs[rank][position].empty()) {
        (*calls)[rank].push_back({position, {}, {}, {}, {position}});  // wait just before it
      }
    }
    if (!progress) return Status::Deadlock("torch: the orders cannot be lowered");
  }
  for (int32_t rank = 0; rank < ranks; ++rank) {
    std::vector<size_t> sent;
    for (const Call& call : (*calls)[rank]) sent.insert(sent.end(), call.sends.begin(), call.sends.end());
    if (!sent.empty()) {
      (*calls)[rank].push_back({schedule.orders[rank].size(), {}, {}, sent, {}});  // end of step
    }
    // In stream order; at one point, posts before waits.
    std::stable_sort((*calls)[rank].begin(), (*calls)[rank].end(),
                     [](const Call& a, const Call& b) {
                       const bool a_waits = !a.wait_sends.empty() || !a.wait_recvs.empty();
                       const bool b_waits = !b.wait_sends.empty() || !b.wait_recvs.empty();
                       return std::pair(a.before, a_waits) < std::pair(b.before, b_waits);
                     });
  }
  return Status();
}

// Replaces the order edges of every rank's stream by its p2p calls: a wait task per call that
// waits on something that moves, between the actions it sits between; each transfer starts after
// both its send and its receive are posted and ends the calls that wait on them. `ends[i]` are
// the producer and consumer of transfer transfers_begin + i.
Status AddCalls(const Schedule& schedule, const std::vector<std::vector<Call>>& calls,
                const std::vector<std::pair<TaskId, TaskId>>& ends, TaskId transfers_begin,
                TaskGraph* graph, std::vector<std::pair<TaskId, TaskId>>* edges) {
  const int32_t ranks = schedule.num_ranks;
  // Per rank and position: the calls posting and waiting on the send of its outputs and on the
  // receive of its inputs (-1: none).
  struct Ops {
    std::vector<int32_t> send_post, send_wait, recv_post, recv_wait;
  };
  std::vector<Ops> ops(ranks);
  for (int32_t rank = 0; rank < ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    Ops& o = ops[rank];
    for (auto* v : {&o.send_post, &o.send_wait, &o.recv_post, &o.recv_wait}) {
      v->assign(order.size(), -1);
    }
    for (size_t c = 0; c < calls[rank].size(); ++c) {
      const Call& call = calls[rank][c];
      const int32_t index = static_cast<int32_t>(c);
      for (size_t p : call.sends) o.send_post[p] = index;
      for (size_t p : call.recvs) o.recv_post[p] = index;
      for (size_t p : call.wait_sends) o.send_wait[p] = index;
      for (size_t p : call.wait_recvs) o.recv_wait[p] = index;
    }
  }
  auto rank_and_position = [&](TaskId compute) {
    const Task& task = graph->tasks[compute];
    return std::pair<int32_t, size_t>(task.rank, task.position);
  };
  // Which calls wait on something (the same in every replica): those get a wait task.
  std::vector<std::vector<bool>> waits(ranks);
  for (int32_t rank = 0; rank < ranks; ++rank) waits[rank].assign(calls[rank].size(), false);
  for (const auto& [producer, consumer] : ends) {
    const auto [from, p] = rank_and_position(producer);
    const auto [to, q] = rank_and_position(consumer);
    if (ops[from].send_post[p] < 0 || ops[to].recv_post[q] < 0 || ops[from].send_wait[p] < 0 ||
        ops[to].recv_wait[q] < 0) {
      return Status::Internal("p2p calls: none moves the transfer from rank " +
                              std::to_string(from) + " to rank " + std::to_string(to));
    }
    waits[from][ops[from].send_wait[p]] = true;
    waits[to][ops[to].recv_wait[q]] = true;
  }
  graph->waits_begin = static_cast<TaskId>(graph->tasks.size());
  // Per replica, rank and call: the task before the call on the rank's stream (where its ops are
  // posted), and its wait task.
  std::vector<std::vector<std::vector<TaskId>>> post(graph->num_replicas),
      wait(graph->num_replicas);
  for (int32_t replica = 0; replica < graph->num_replicas; ++replica) {
    post[replica].resize(ranks);
    wait[replica].resize(ranks);
    for (int32_t rank = 0; rank < ranks; ++rank) {
      post[replica][rank].assign(calls[rank].size(), TaskGraph::kNoTask);
      wait[replica][rank].assign(calls[rank].size(), TaskGraph::kNoTask);
      TaskId previous = TaskGraph::kNoTask;
      size_t next_call = 0;
      const size_t n = schedule.orders[rank].size();
      for (size_t position = 0; position <= n; ++position) {
        for (; next_call < calls[rank].size() && calls[rank][next_call].before == position;
             ++next_call) {
          post[replica][rank][next_call] = previous;
          if (!waits[rank][next_call]) continue;
          const TaskId w = static_cast<TaskId>(graph->tasks.size());
          Task task;
          task.kind = TaskKind::kWait;
          task.replica = task.peer_replica = static_cast<uint16_t>(replica);
          task.rank = task.peer = rank;
          task.position = static_cast<uint32_t>(position);
          graph->tasks.push_back(task);
          graph->wait_after.push_back(previous);
          if (previous != TaskGraph::kNoTask) edges->emplace_back(previous, w);
          wait[replica][rank][next_call] = w;
          previous = w;
        }
        if (position == n) break;
        const TaskId compute = graph->ComputeTask(rank, position, replica);
        if (previous != TaskGraph::kNoTask) edges->emplace_back(previous, compute);
        previous = compute;
      }
    }
  }
  for (size_t i = 0; i < ends.size(); ++i) {
    const TaskId transfer = transfers_begin + static_cast<TaskId>(i);
    const int32_t replica = graph->tasks[transfer].replica;
    const auto [from, p] = rank_and_position(ends[i].first);
    const auto [to, q] = rank_and_position(ends[i].second);
    // The transfer starts once both ops are posted (NCCL's rendezvous) and ends both waits.
    for (const auto& [rank, posted, waited] :
         {std::tuple(from, ops[from].send_post[p], ops[from].send_wait[p]),
          std::tuple(to, ops[to].recv_post[q], ops[to].recv_wait[q])}) {
      const TaskId before = post[replica][rank][posted];
      if (before != TaskGraph::kNoTask) edges->emplace_back(before, transfer);
      edges->emplace_back(transfer, wait[replica][rank][waited]);
    }
  }
  return Status();
}

}  // namespace

std::string_view P2pModeName(P2pMode mode) { return NameOf(kP2pModes, mode); }

Status ParseP2pMode(std::string_view what, std::string_view text, P2pMode* mode) {
  return ParseNamed(kP2pModes, "p2p mode", what, text, mode);
}

ComputeLoad ComputeLoadOf(const StageCosts& costs, const Action& action, int32_t tp,
                          double tp_step_latency_s) {
  ComputeLoad load{costs.ActionDuration(action), 0};
  if (tp > 1) {
    // The rings' bytes go to the engine; the tensor-parallel steps' latencies but one (the
    // transfers' own) to the compute stream.
    const StageCosts::Collectives ring = costs.ActionCollectives(action);
    load.ring_bytes = ring.bytes;
    if (ring.steps > 1) load.duration_s += static_cast<double>(ring.steps - 1) * tp_step_latency_s;
  }
  return load;
}

namespace {

// One chunk of a program: the parts of one op, in its own order.
std::vector<TaskPart> ChunkParts(const StageCosts& costs, const Op& op, int32_t ep, uint8_t chunk,
                                 double slowdown) {
  const int32_t stage = op.stage.value();
  const MoeStage& moe = costs.moe[stage];
  const int32_t n = moe.layers;
  // Node-limited, a node's GPUs forward the tokens of all N nodes of the group to each other.
  const int64_t nodes = std::max(1, moe.group_nodes);
  const int64_t per_peer_dispatch = (moe.dispatch_bytes * nodes + ep - 1) / ep;
  const int64_t per_peer_combine = (moe.combine_bytes * nodes + ep - 1) / ep;
  const int64_t node_dispatch = moe.node_dispatch_bytes;
  const int64_t node_combine = moe.node_combine_bytes;
  std::vector<TaskPart> parts;
  auto compute = [&](PartName name, bool backward, int32_t layer, double seconds) {
    parts.push_back({PartKind::kCompute, name, chunk, backward, layer, seconds * slowdown, 0, 0});
  };
  auto all_to_all = [&](PartName name, bool backward, int32_t layer, int64_t bytes,
                        int64_t node_bytes) {
    parts.push_back({PartKind::kAllToAll, name, chunk, backward, layer, 0, bytes, node_bytes});
  };
  auto forward_layers = [&] {
    for (int32_t l = 0; l < n; ++l) {
      compute(PartName::kAttention, false, l, moe.layer_seconds.forward_attention_s);
      all_to_all(PartName::kDispatch, false, l, per_peer_dispatch, node_dispatch);
      compute(PartName::kMlp, false, l, moe.layer_seconds.forward_mlp_s);
      all_to_all(PartName::kCombine, false, l, per_peer_combine, node_combine);
    }
  };
  const double forward_parts =
      n * (moe.layer_seconds.forward_attention_s + moe.layer_seconds.forward_mlp_s);
  if (op.kind == OpKind::kForward) {
    compute(PartName::kRest, false, 0, std::max(0.0, costs.forward_s[stage] - forward_parts));
    forward_layers();
    return parts;
  }
  // I, or B (I and W together). The backward's layers in reverse order.
  const bool whole = op.kind == OpKind::kBackward;
  const double attention =
      moe.layer_seconds.input_attention_s + (whole ? moe.layer_seconds.weight_attention_s : 0);
  const double mlp = moe.layer_seconds.input_mlp_s + (whole ? moe.layer_seconds.weight_mlp_s : 0);
  const double total = whole ? costs.backward_s[stage] : costs.backward_input_s[stage];
  const double rest = total - n * (attention + mlp) - (moe.full_recompute ? forward_parts : 0);
  if (moe.full_recompute) forward_layers();
  for (int32_t l = n - 1; l >= 0; --l) {
    all_to_all(PartName::kCombine, true, l, per_peer_combine, node_combine);
    compute(PartName::kMlp, true, l, mlp);
    all_to_all(PartName::kDispatch, true, l, per_peer_combine, node_combine);
    compute(PartName::kAttention, true, l, attention);
  }
  compute(PartName::kRest, true, 0, std::max(0.0, rest));
  return parts;
}

}  // namespace

TaskProgram ProgramOf(const StageCosts& costs, const Action& action, int32_t ep,
                      double compute_slowdown) {
  if (ep < 2 || costs.moe.empty()) return {};
  bool any = false;
  for (int k = 0; k < action.num_ops(); ++k) {
    const Op& op = action.op(k);
    any = any || (op.kind != OpKind::kBackwardWeight && costs.moe[op.stage.value()].layers > 0);
  }
  if (!any) return {};
  if (!action.is_overlap()) return ChunkParts(costs, action.op(0), ep, 0, 1);
  if (!costs.overlap_s.empty()) return {};  // --overlap: the pair lasts what it gives
  // The forward's rest first, then layer pairs, then what one chunk has beyond the other, then
  // the backward's rest (ChunkParts puts the forward's rest first and the backward's last).
  std::vector<TaskPart> f = ChunkParts(costs, action.op(0), ep, 0, compute_slowdown);
  std::vector<TaskPart> b = ChunkParts(costs, action.op(1), ep, 1, compute_slowdown);
  TaskProgram program;
  size_t fi = 0, bi = 0;
  program.push_back(f[fi++]);  // forward rest
  // With full recomputation the backward chunk starts with a forward's layers: they run as
  // further backward-chunk parts, in order, before its pairs can start.
  while (bi < b.size() && !b[bi].backward) program.push_back(b[bi++]);
  // A layer is 4 parts in each chunk; the backward's rest is its last part.
  while (fi + 4 <= f.size() && bi + 4 < b.size()) {
    // F attention, B combine, B MLP, F dispatch, F MLP, B dispatch, B attention, F combine.
    for (const TaskPart* part : {&f[fi], &b[bi], &b[bi + 1], &f[fi + 1], &f[fi + 2], &b[bi + 2],
                                 &b[bi + 3], &f[fi + 3]}) {
      program.push_back(*part);
    }
    fi += 4;
    bi += 4;
  }
  program.insert(program.end(), f.begin() + fi, f.end());
  program.insert(program.end(), b.begin() + bi, b.end());
  return program;
}

std::vector<int32_t> ChunkPredecessors(const TaskProgram& program) {
  std::vector<int32_t> before(program.size(), -1);
  int32_t last[256];
  std::fill(std::begin(last), std::end(last), -1);
  for (size_t i = 0; i < program.size(); ++i) {
    before[i] = last[program[i].chunk];
    last[program[i].chunk] = static_cast<int32_t>(i);
  }
  return before;
}

Status CompileTaskGraph(const Schedule& schedule, const StageCosts& costs,
                        const Parallelism& parallelism, TaskGraph* graph) {
  *graph = TaskGraph();
  std::vector<Task>& tasks = graph->tasks;
  // Folded, replica 0 stands for all of them.
  const int32_t dp = parallelism.fold_replicas ? 1 : parallelism.layout.dp;
  const int32_t tp = parallelism.layout.tp;
  const int32_t group = parallelism.layout.tp * parallelism.layout.cp;  // GPUs per rank
  const size_t num_actions = schedule.NumActions();
  std::map<std::tuple<int, int, int32_t, int32_t>, uint32_t> program_index;
  // 1F1B-like schedules have about one transfer per compute task.
  tasks.reserve(2 * num_actions * dp);

  Producers producers(schedule);
  graph->compute_begin.reserve(schedule.num_ranks + 1);
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    graph->compute_begin.push_back(static_cast<TaskId>(tasks.size()));
    const auto& order = schedule.orders[rank];
    for (size_t position = 0; position < order.size(); ++position) {
      const Action& action = order[position];
      const TaskId id = static_cast<TaskId>(tasks.size());
      for (int k = 0; k < action.num_ops(); ++k) producers.Add(action.op(k), id);
      const ComputeLoad load = ComputeLoadOf(costs, action, tp, parallelism.tp_step_latency_s);
      Task task = ComputeTaskOf(rank, position, load.duration_s);
      task.bytes = load.ring_bytes;
      if (parallelism.layout.cp > 1)
        graph->cp_bytes.push_back(costs.ActionCollectives(action).cp_bytes);
      if (!costs.moe.empty() && parallelism.layout.ep > 1) {
        // Programs depend on the ops' kinds and stages, not their microbatches.
        const Op& first = action.op(0);
        const Op& second = action.is_overlap() ? action.op(1) : first;
        const auto key = std::tuple(action.num_ops(), static_cast<int>(first.kind),
                                    first.stage.value(), second.stage.value());
        auto [it, added] = program_index.emplace(key, TaskGraph::kNoProgram);
        if (added) {
          TaskProgram program =
              ProgramOf(costs, action, parallelism.layout.ep, parallelism.overlap_compute_slowdown);
          if (!program.empty()) {
            it->second = static_cast<uint32_t>(graph->programs.size());
            graph->programs.push_back(std::move(program));
          }
        }
        graph->program_of.push_back(it->second);
      }
      tasks.push_back(task);
    }
  }
  graph->compute_begin.push_back(static_cast<TaskId>(tasks.size()));
  graph->compute_per_replica = static_cast<TaskId>(tasks.size());
  graph->num_replicas = dp;
  graph->layout.dp = parallelism.layout.dp;
  graph->layout.tp = tp;
  graph->layout.cp = parallelism.layout.cp;
  graph->tp_comm_overlap = parallelism.tp_comm_overlap;
  if (parallelism.layout.cp > 1) {
    const std::vector<int64_t> first(graph->cp_bytes);
    for (int32_t replica = 1; replica < dp; ++replica) {
      graph->cp_bytes.insert(graph->cp_bytes.end(), first.begin(), first.end());
    }
  }
  graph->layout.ep = parallelism.layout.ep;
  graph->node_limited_routing = parallelism.node_limited_routing;
  if (graph->programs.empty()) {
    graph->program_of.clear();
  } else {
    const std::vector<uint32_t> first(graph->program_of);
    for (int32_t replica = 1; replica < dp; ++replica) {
      graph->program_of.insert(graph->program_of.end(), first.begin(), first.end());
    }
    graph->part_begin.reserve(graph->program_of.size() + 1);
    size_t parts = 0;
    for (uint32_t program : graph->program_of) {
      graph->part_begin.push_back(parts);
      if (program != TaskGraph::kNoProgram) parts += graph->programs[program].size();
    }
    graph->part_begin.push_back(parts);
  }
  for (int32_t replica = 1; replica < dp; ++replica) {
    for (TaskId t = 0; t < graph->compute_per_replica; ++t) {
      Task task = tasks[t];
      task.replica = task.peer_replica = static_cast<uint16_t>(replica);
      tasks.push_back(task);
    }
  }

  // With p2p calls, the calls order each rank's stream.
  const bool calls_mode = parallelism.p2p_mode != P2pMode::kEager;
  std::vector<std::pair<TaskId, TaskId>> edges;
  edges.reserve(3 * num_actions * dp);
  const TaskId transfers_begin = static_cast<TaskId>(tasks.size());
  std::vector<std::pair<TaskId, TaskId>> transfer_ends;  // megatron: producer and consumer
  for (int32_t replica = 0; replica < dp; ++replica) {
    const TaskId offset = static_cast<TaskId>(replica) * graph->compute_per_replica;
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      const auto& order = schedule.orders[rank];
      for (size_t position = 0; position < order.size(); ++position) {
        const TaskId consumer = graph->ComputeTask(rank, position, replica);
        if (position > 0 && !calls_mode) edges.emplace_back(consumer - 1, consumer);
        const Action& action = order[position];
        for (int k = 0; k < action.num_ops(); ++k) {
          Need need;
          if (NeedsOf(action.op(k), schedule, &need) == 0) continue;
          const TaskId producer = producers.Of(need) + offset;
          const int32_t from = tasks[producer].rank;
          if (from == rank) {
            edges.emplace_back(producer, consumer);
            continue;
          }
          // The boundary crossed is between stages b and b + 1.
          const int32_t boundary =
              need.output == Output::kActivation ? need.stage : need.stage - 1;
          for (int32_t shard = 0; shard < group; ++shard) {
            const TaskId transfer = static_cast<TaskId>(tasks.size());
            tasks.push_back(TransferTaskOf(TaskKind::kTransfer, replica, replica, shard, from,
                                           rank, boundary,
                                           SplitBytes(costs.message_bytes[boundary], group, shard)));
            edges.emplace_back(producer, transfer);
            edges.emplace_back(transfer, consumer);
            if (calls_mode) transfer_ends.emplace_back(producer, consumer);
          }
        }
      }
    }
  }
  GradientSync sync;
  sync.last_steps.assign(schedule.num_stages, {});
  sync.gather_starts.assign(schedule.num_stages, {});
  // The experts' gradients are reduced over dp x tp x cp / e GPUs (with ep 1 and tp > 1 too:
  // every GPU of a tensor-parallel group holds the experts whole).
  if (parallelism.layout.dp * parallelism.layout.cp > 1 ||
      (!costs.expert_gradient_bytes.empty() &&
       parallelism.layout.dp * parallelism.layout.tp * parallelism.layout.cp >
           parallelism.layout.ep)) {
    AddGradientSync(schedule, costs, parallelism, graph, &edges, &sync);
  }
  graph->waits_begin = static_cast<TaskId>(tasks.size());
  if (calls_mode) {
    std::vector<std::vector<Call>> calls;
    Status status =
        parallelism.p2p_mode == P2pMode::kTorch
            ? TorchCallsOfRanks(schedule, *graph, transfer_ends, &calls)
            : MegatronCallsOfRanks(schedule, parallelism.p2p_mode == P2pMode::kMegatron, &calls);
    if (status.ok()) status = AddCalls(schedule, calls, transfer_ends, transfers_begin, graph, &edges);
    if (!status.ok()) return status;
  }
  // The last task on each rank's stream: its last action, or a wait after it.
  std::vector<std::vector<TaskId>> stream_end(dp, std::vector<TaskId>(schedule.num_ranks));
  for (int32_t replica = 0; replica < dp; ++replica) {
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      const size_t n = schedule.orders[rank].size();
      stream_end[replica][rank] =
          n == 0 ? TaskGraph::kNoTask : graph->ComputeTask(rank, n - 1, replica);
    }
  }
  for (TaskId w = graph->waits_begin; w < tasks.size(); ++w) {
    const Task& wait = tasks[w];
    if (wait.position == schedule.orders[wait.rank].size()) stream_end[wait.replica][wait.rank] = w;
  }
  AddOptimizerSteps(schedule, costs, sync, stream_end, graph, &edges);
  if (!sync.delays.empty()) {
    // A delay starts when the backward beside it can: it gets the backward's predecessors.
    std::vector<std::vector<TaskId>> delays_of(graph->num_compute_tasks());
    for (const auto& [compute, delay] : sync.delays) delays_of[compute].push_back(delay);
    const size_t count = edges.size();
    for (size_t e = 0; e < count; ++e) {
      const auto [from, to] = edges[e];
      if (to >= delays_of.size()) continue;
      for (TaskId delay : delays_of[to]) edges.emplace_back(from, delay);
    }
  }

  const size_t n = tasks.size();
  graph->num_predecessors.assign(n, 0);
  for (const auto& edge : edges) ++graph->num_predecessors[edge.second];
  graph->dag = TaskDag(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                       static_cast<TaskId>(n));
  edges = {};

  // Kahn's algorithm, first-in first-out from task order: deterministic.
  std::vector<TaskId> remaining = graph->num_predecessors;
  std::vector<TaskId>& order = graph->topological_order;
  order.reserve(n);
  for (TaskId t = 0; t < n; ++t) {
    if (remaining[t] == 0) order.push_back(t);
  }
  for (size_t head = 0; head < order.size(); ++head) {
    for (TaskId next : boost::make_iterator_range(boost::adjacent_vertices(order[head], graph->dag))) {
      if (--remaining[next] == 0) order.push_back(next);
    }
  }
  if (order.size() != n) {
    std::vector<bool> done(n, false);
    for (TaskId t : order) done[t] = true;
    return Status::Deadlock(DescribeDeadlock(schedule, *graph, producers, done));
  }
  return Status();
}

}  // namespace ppsim
