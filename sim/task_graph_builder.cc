#include "sim/task_graph_builder.h"

#include <algorithm>
#include <set>

namespace ppsim {

Task ComputeTaskOf(int32_t rank, size_t position, double duration_s) {
  Task task;
  task.kind = TaskKind::kCompute;
  task.rank = rank;
  task.peer = rank;
  task.position = static_cast<uint32_t>(position);
  task.duration_s = duration_s;
  return task;
}

Task DelayTaskOf(int32_t rank, size_t position, int32_t replica, double duration_s) {
  Task task = ComputeTaskOf(rank, position, duration_s);
  task.kind = TaskKind::kDelay;
  task.replica = task.peer_replica = static_cast<uint16_t>(replica);
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

TaskGraphBuilder::TaskGraphBuilder(size_t expected_tasks, size_t expected_edges) {
  graph_.tasks.reserve(expected_tasks);
  edges_.reserve(expected_edges);
}

MemberSpan TaskGraphBuilder::AddRing(const RingCollective& ring, const RingSteps& steps,
                                     const MemberWaits& waits) {
  const int32_t m = static_cast<int32_t>(ring.members.size());
  const int32_t n = ring.size;
  const bool folded = m < n;
  // Member 0's predecessor: the last member of the last replica (or source_replica's).
  const auto source_replica =
      static_cast<uint16_t>(ring.source_replica >= 0 ? ring.source_replica : n / m - 1);
  MemberSpan span;
  span.first.resize(m);
  std::set<int32_t> replicas;
  for (const RingMember& member : ring.members) replicas.insert(member.replica);
  // Task::steps holds the count: a ring of more than 32,768 members keeps its steps apart.
  if (steps.merge && steps.count > 1 && steps.count <= UINT16_MAX &&
      static_cast<int32_t>(replicas.size()) == m) {
    span.last.resize(m);
    for (int32_t i = 0; i < m; ++i) {
      const RingMember& from = ring.members[i];
      const RingMember& to = i + 1 < m ? ring.members[i + 1] : ring.wrap_to;
      int64_t bytes = 0;
      for (int32_t k = 0; k < steps.count; ++k) {
        const int32_t chunk = ((i - (steps.first + k)) % n + n) % n;
        bytes += OnTheWire(SplitBytes(steps.bytes, n, chunk), steps.wire_factor);
      }
      Task task = TransferTaskOf(TaskKind::kAllReduce, from.replica, to.replica, from.shard,
                                 ring.rank, ring.rank, ring.stage, bytes);
      task.peer_shard = static_cast<uint16_t>(to.shard);
      task.steps = static_cast<uint16_t>(steps.count);
      task.mirrored = folded && i + 1 == m ? ring.mirror_kind : 0;
      if (task.mirrored) task.source_replica = source_replica;
      const TaskId id = Add(task);
      AddEdgeFrom(waits.ready[i], id);
      AddEdgeFrom(waits.previous[i], id);
      span.first[i] = span.last[i] = id;
    }
    return span;
  }
  std::vector<TaskId> previous(m), current(m);
  for (int32_t k = 0; k < steps.count; ++k) {
    const int32_t step = steps.first + k;
    for (int32_t i = 0; i < m; ++i) {
      const RingMember& from = ring.members[i];
      const RingMember& to = i + 1 < m ? ring.members[i + 1] : ring.wrap_to;
      const int32_t chunk = ((i - step) % n + n) % n;
      Task task = TransferTaskOf(TaskKind::kAllReduce, from.replica, to.replica, from.shard,
                                 ring.rank, ring.rank, ring.stage,
                                 OnTheWire(SplitBytes(steps.bytes, n, chunk), steps.wire_factor));
      task.peer_shard = static_cast<uint16_t>(to.shard);
      task.mirrored = folded && i + 1 == m ? ring.mirror_kind : 0;
      if (task.mirrored) task.source_replica = source_replica;
      current[i] = Add(task);
      if (k == 0) {
        AddEdgeFrom(waits.ready[i], current[i]);
        AddEdgeFrom(waits.previous[i], current[i]);
        span.first[i] = current[i];
      } else {
        AddEdge(previous[i], current[i]);
        const TaskId sender = previous[(i + m - 1) % m];
        if (sender != previous[i]) AddEdge(sender, current[i]);
      }
    }
    previous.swap(current);
  }
  span.last = std::move(previous);
  return span;
}

void TaskGraphBuilder::CopyPredecessors(const std::vector<std::pair<TaskId, TaskId>>& pairs) {
  if (pairs.empty()) return;
  TaskId most = 0;
  for (const auto& pair : pairs) most = std::max(most, pair.first);
  std::vector<std::vector<TaskId>> copies_of(static_cast<size_t>(most) + 1);
  for (const auto& [task, copy] : pairs) copies_of[task].push_back(copy);
  const size_t count = edges_.size();  // the edges added below are not copied again
  for (size_t e = 0; e < count; ++e) {
    const auto [from, to] = edges_[e];
    if (to >= copies_of.size()) continue;
    for (TaskId copy : copies_of[to]) edges_.emplace_back(from, copy);
  }
}

bool TaskGraphBuilder::Finish(TaskGraph* graph) {
  *graph = std::move(graph_);
  graph_ = TaskGraph();
  const size_t n = graph->tasks.size();
  graph->num_predecessors.assign(n, 0);
  for (const auto& edge : edges_) ++graph->num_predecessors[edge.second];
  graph->dag = TaskDag(boost::edges_are_unsorted_multi_pass, edges_.begin(), edges_.end(),
                       static_cast<TaskId>(n));
  edges_ = {};

  std::vector<TaskId> remaining = graph->num_predecessors;
  std::vector<TaskId>& order = graph->topological_order;
  order.reserve(n);
  for (TaskId t = 0; t < n; ++t) {
    if (remaining[t] == 0) order.push_back(t);
  }
  for (size_t head = 0; head < order.size(); ++head) {
    for (TaskId next :
         boost::make_iterator_range(boost::adjacent_vertices(order[head], graph->dag))) {
      if (--remaining[next] == 0) order.push_back(next);
    }
  }
  return order.size() == n;
}

}  // namespace ppsim
