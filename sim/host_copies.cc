#include "sim/host_copies.h"

#include <algorithm>
#include <map>

#include "sim/metrics.h"

namespace ppsim {
namespace {

Task HostCopyOf(int32_t rank, size_t position, int32_t replica, uint16_t direction, int64_t bytes) {
  Task task = ComputeTaskOf(rank, position, 0);
  task.kind = TaskKind::kHostCopy;
  task.replica = task.peer_replica = static_cast<uint16_t>(replica);
  task.peer_shard = direction;
  task.bytes = bytes;
  return task;
}

bool IsBackward(const Op& op) {
  return op.kind == OpKind::kBackward || op.kind == OpKind::kBackwardInput;
}

// The position of each (stage, microbatch)'s backward (B or I) in `order`.
std::map<std::pair<int32_t, int32_t>, size_t> BackwardPositions(const std::vector<Action>& order) {
  std::map<std::pair<int32_t, int32_t>, size_t> at;
  for (size_t p = 0; p < order.size(); ++p) {
    for (int k = 0; k < order[p].num_ops(); ++k) {
      const Op& op = order[p].op(k);
      if (IsBackward(op)) at[{op.stage.value(), op.microbatch.value()}] = p;
    }
  }
  return at;
}

// The bytes the forward `op` at position p of an order offloads: its stage's offload bytes unless
// its backward is the very next action (or absent); 0 when not offloaded.
int64_t OffloadedBytes(const Op& op, size_t p,
                       const std::map<std::pair<int32_t, int32_t>, size_t>& backward_at,
                       const StageCosts& costs) {
  if (op.kind != OpKind::kForward) return 0;
  const int64_t bytes = costs.offload_bytes[op.stage.value()];
  const auto backward = backward_at.find({op.stage.value(), op.microbatch.value()});
  if (bytes <= 0 || backward == backward_at.end() || backward->second <= p + 1) return 0;
  return bytes;
}

// One rank of one replica: its offloads in forward order and reloads in backward order.
void AddRankCopies(const std::vector<Action>& order, const StageCosts& costs, int32_t rank,
                   int32_t replica, TaskGraphBuilder* builder,
                   std::vector<std::pair<TaskId, TaskId>>* prefetch) {
  const auto backward_at = BackwardPositions(order);
  std::map<std::pair<int32_t, int32_t>, TaskId> offloaded;
  TaskId last_offload = TaskGraph::kNoTask, last_reload = TaskGraph::kNoTask;
  for (size_t p = 0; p < order.size(); ++p) {
    const TaskId compute = builder->graph().ComputeTask(rank, p, replica);
    for (int k = 0; k < order[p].num_ops(); ++k) {
      const Op& op = order[p].op(k);
      const std::pair<int32_t, int32_t> key{op.stage.value(), op.microbatch.value()};
      if (IsBackward(op)) {
        const auto it = offloaded.find(key);
        if (it == offloaded.end()) continue;
        const TaskId reload = builder->Add(
            HostCopyOf(rank, p, replica, kHostToDevice, builder->task(it->second).bytes));
        builder->AddEdge(it->second, reload);
        builder->AddEdgeFrom(last_reload, reload);
        builder->AddEdge(reload, compute);
        // p > 0: the forward came before.
        prefetch->emplace_back(builder->graph().ComputeTask(rank, p - 1, replica), reload);
        last_reload = reload;
        continue;
      }
      const int64_t bytes = OffloadedBytes(op, p, backward_at, costs);
      if (bytes == 0) continue;
      const TaskId offload = builder->Add(HostCopyOf(rank, p, replica, kDeviceToHost, bytes));
      builder->AddEdge(compute, offload);
      builder->AddEdgeFrom(last_offload, offload);
      offloaded[key] = offload;
      last_offload = offload;
    }
  }
}

}  // namespace

std::vector<int64_t> PeakMemoryLowerBoundBytes(const Schedule& schedule, const StageCosts& costs,
                                               const MemoryReserve& reserve) {
  if (std::none_of(costs.offload_bytes.begin(), costs.offload_bytes.end(),
                   [](int64_t b) { return b > 0; })) {
    return PeakMemoryBytes(schedule, costs, reserve);
  }
  const std::vector<int64_t> static_bytes = StaticBytesPerRank(schedule, costs);
  std::vector<int64_t> peaks;
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const std::vector<Action>& order = schedule.orders[rank];
    const auto backward_at = BackwardPositions(order);
    // Bytes that leave after the action at a position ends, and return as one starts.
    std::vector<int64_t> leave(order.size(), 0), back(order.size(), 0);
    for (size_t p = 0; p < order.size(); ++p) {
      for (int k = 0; k < order[p].num_ops(); ++k) {
        const Op& op = order[p].op(k);
        const int64_t bytes = OffloadedBytes(op, p, backward_at, costs);
        if (bytes == 0) continue;
        leave[p] += bytes;
        back[backward_at.at({op.stage.value(), op.microbatch.value()}) - 1] += bytes;
      }
    }
    int64_t live = 0, peak = 0;
    for (size_t p = 0; p < order.size(); ++p) {
      live += back[p] + ActivationAllocatedAtStart(order[p], costs);
      peak = std::max(peak, live);
      live -= ActivationFreedAtEnd(order[p], costs) + leave[p];
    }
    peaks.push_back(RankMemoryBytes(static_bytes[rank], peak, reserve));
  }
  return peaks;
}

std::vector<std::pair<TaskId, TaskId>> AddHostCopies(const Schedule& schedule,
                                                     const StageCosts& costs,
                                                     TaskGraphBuilder* builder) {
  std::vector<std::pair<TaskId, TaskId>> prefetch;
  if (std::none_of(costs.offload_bytes.begin(), costs.offload_bytes.end(),
                   [](int64_t b) { return b > 0; })) {
    return prefetch;
  }
  const TaskId first = builder->next_id();
  for (int32_t replica = 0; replica < builder->graph().num_replicas; ++replica) {
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      AddRankCopies(schedule.orders[rank], costs, rank, replica, builder, &prefetch);
    }
  }
  builder->graph().has_host_copies = builder->next_id() > first;
  return prefetch;
}

}  // namespace ppsim
