#include "sim/gradient_sync.h"

#include <algorithm>
#include <cstdint>

#include "sim/collective_steps.h"

namespace ppsim {
namespace {

// The position of each stage's last backward (B or W; a W always follows its I) on its rank;
// -1: none.
std::vector<int64_t> LastBackwards(const Schedule& schedule) {
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
  return last_backward;
}

// One stage's gradients to synchronise.
struct StageGradients {
  int32_t rank = 0;
  int32_t stage = 0;
  int64_t dense_bytes = 0;   // the data-parallel collectives' (StageCosts::DenseGradientBytes)
  int64_t expert_bytes = 0;  // the experts' ring's
  int64_t buckets = 1;
  // Per bucket and compiled ring member (replica x cp + slice): the task after which its bucket
  // is ready.
  std::vector<std::vector<TaskId>> ready;
};

// When each bucket is ready, per member: a delay beside its replica's backward at `position`
// (the last bucket at the backward's end).
void AddBucketTimers(size_t position, int32_t cp, StageGradients* stage, GradientSync* sync,
                     TaskGraphBuilder* builder) {
  const int32_t replicas = builder->graph().num_replicas;
  const int64_t buckets = stage->buckets;
  stage->ready.assign(buckets, std::vector<TaskId>(static_cast<size_t>(replicas) * cp));
  for (int32_t replica = 0; replica < replicas; ++replica) {
    const TaskId backward = builder->graph().ComputeTask(stage->rank, position, replica);
    const double duration = builder->task(backward).duration_s;
    for (int64_t j = 0; j < buckets; ++j) {
      TaskId at = backward;
      if (j + 1 < buckets) {
        at = builder->Add(
            DelayTaskOf(stage->rank, static_cast<size_t>(stage->stage), replica,
                        duration * static_cast<double>(j + 1) / static_cast<double>(buckets)));
        sync->delays.emplace_back(backward, at);
      }
      for (int32_t slice = 0; slice < cp; ++slice) stage->ready[j][replica * cp + slice] = at;
    }
  }
}

// The replicas each FSDP shard group spans: HSDP's S (StageCosts::fsdp_shard), else all dp.
int32_t ShardReplicas(const StageCosts& costs, const Parallelism& par) {
  return costs.fsdp_shard > 0 ? costs.fsdp_shard : par.layout.dp;
}

// How many shard groups have compiled members: one when folded (replica 0's), else dp / S.
int32_t CompiledShardGroups(const StageCosts& costs, const Parallelism& par,
                            const TaskGraphBuilder& builder) {
  return builder.graph().folded() ? 1 : par.layout.dp / ShardReplicas(costs, par);
}

// The data-parallel group of `stage` (on `rank`) over the GPUs of tensor-parallel index `index`
// in the `replicas` consecutive replicas from `first`: their replicas x cp members, replica x cp +
// slice, of which the compiled ones are in the ring (folded: replica 0's, the last sending to
// replica 1's first).
CollectiveGroup DataParallelGroup(int32_t rank, int32_t stage, int32_t index, int32_t first,
                                  int32_t replicas, const Parallelism& par,
                                  const TaskGraphBuilder& builder) {
  const int32_t tp = par.layout.tp;
  const int32_t cp = par.layout.cp;
  const int32_t compiled = std::min(replicas, builder.graph().num_replicas - first);
  const int32_t m = compiled * cp;  // compiled ring members
  const int32_t n = replicas * cp;  // ring members
  CollectiveGroup group;
  group.ring.rank = rank;
  group.ring.stage = stage;
  group.ring.size = n;
  group.shard = index;
  group.replicas = replicas;
  for (int32_t i = 0; i < m; ++i) {
    group.ring.members.push_back({first + i / cp, (i % cp) * tp + index});
  }
  group.ring.wrap_to = m < n ? RingMember{first + compiled, index} : group.ring.members[0];
  return group;
}

// `count` entries of `v` from `from`.
std::vector<TaskId> Slice(const std::vector<TaskId>& v, size_t from, size_t count) {
  return std::vector<TaskId>(v.begin() + static_cast<std::ptrdiff_t>(from),
                             v.begin() + static_cast<std::ptrdiff_t>(from + count));
}

// A collective of `kind` over every compiled shard group of tensor-parallel index `index` (all
// dp replicas but with HSDP), each compiled member (replica x cp + slice) after its `ready` and
// `previous` task. Returns each compiled member's last task and appends their first ones to
// `first` when given. A group of one GPU moves nothing: its member's last task is its ready one.
std::vector<TaskId> AddGroupCollectives(int32_t rank, int32_t stage, int32_t index,
                                        const CollectivePlan& plan, CollectiveKind kind,
                                        int64_t bytes, const std::vector<TaskId>& ready,
                                        const std::vector<TaskId>& previous,
                                        const StageCosts& costs, const Parallelism& par,
                                        TaskGraphBuilder* builder,
                                        std::vector<TaskId>* first = nullptr) {
  const int32_t cp = par.layout.cp;
  const int32_t shard = kind == CollectiveKind::kAllReduce || costs.fsdp_units.empty()
                            ? par.layout.dp
                            : ShardReplicas(costs, par);
  if (shard * cp == 1) return ready;
  std::vector<TaskId> last(ready.size(), TaskGraph::kNoTask);
  for (int32_t g = 0; g < CompiledShardGroups(costs, par, *builder); ++g) {
    const CollectiveGroup group =
        DataParallelGroup(rank, stage, index, g * shard, shard, par, *builder);
    const size_t from = static_cast<size_t>(g) * shard * cp;
    const size_t m = group.ring.members.size();
    MemberSpan span = AddCollective(group, plan, kind, bytes,
                                    {Slice(ready, from, m), Slice(previous, from, m)}, builder);
    std::copy(span.last.begin(), span.last.end(), last.begin() + static_cast<std::ptrdiff_t>(from));
    if (first != nullptr) first->insert(first->end(), span.first.begin(), span.first.end());
  }
  return last;
}

// HSDP (StageCosts::fsdp_shard = S < dp): after a unit's reduce-scatter over its shard group, each
// GPU all-reduces its 1/(S x cp) of the unit's gradients with the GPUs of the same place in the
// other dp / S shard groups (replicas r mod S + j S): a ring of dp / S members, each compiled
// member's after its reduce-scatter (`ready`). Folded, replica 0's member sends to replica S's
// and stands for every member's send (a mirrored step). Returns each compiled member's last step.
std::vector<TaskId> AddReplicaAllReduce(int32_t rank, int32_t stage, int32_t index, int64_t bytes,
                                        const std::vector<TaskId>& ready, const StageCosts& costs,
                                        const Parallelism& par, TaskGraphBuilder* builder) {
  const int32_t tp = par.layout.tp;
  const int32_t cp = par.layout.cp;
  const int32_t shard = ShardReplicas(costs, par);
  const int32_t groups = par.layout.dp / shard;  // members of each ring
  std::vector<TaskId> last(ready.size(), TaskGraph::kNoTask);
  const RingSteps steps = {.first = 0, .count = 2 * (groups - 1), .bytes = bytes};
  const bool folded = builder->graph().folded();
  for (int32_t place = 0; place < (folded ? 1 : shard); ++place) {
    for (int32_t slice = 0; slice < cp; ++slice) {
      RingCollective ring;
      ring.rank = rank;
      ring.stage = stage;
      ring.size = groups;
      MemberWaits waits;
      for (int32_t j = 0; j < (folded ? 1 : groups); ++j) {
        const int32_t replica = place + j * shard;
        ring.members.push_back({replica, slice * tp + index});
        waits.ready.push_back(ready[static_cast<size_t>(replica) * cp + slice]);
        waits.previous.push_back(TaskGraph::kNoTask);
      }
      ring.wrap_to = folded ? RingMember{shard, slice * tp + index} : ring.members[0];
      if (folded) ring.source_replica = (groups - 1) * shard;
      const MemberSpan span = builder->AddRing(ring, steps, waits);
      for (size_t k = 0; k < ring.members.size(); ++k) {
        last[static_cast<size_t>(ring.members[k].replica) * cp + slice] = span.last[k];
      }
    }
  }
  return last;
}

// The data-parallel collectives of `stage` over the GPUs of tensor-parallel index `index`, one
// per bucket (each after its bucket is ready and the bucket before's), with ZeRO-1 each followed
// by its parameters' all-gather (whose first tasks go to sync->gather_starts), with HSDP each
// reduce-scatter by its replicas' all-reduce. Returns each compiled member's last reduce task.
std::vector<TaskId> AddShardCollectives(const StageGradients& stage, int32_t index,
                                        const StageCosts& costs, const Parallelism& par,
                                        GradientSync* sync, TaskGraphBuilder* builder) {
  const int32_t m = builder->graph().num_replicas * par.layout.cp;  // compiled ring members
  // ZeRO-1 and 2 reduce-scatter and gather after the step; ZeRO-3 (FSDP) reduce-scatters only.
  const bool zero = !costs.param_gather_bytes.empty() || !costs.fsdp_units.empty();
  const bool hsdp = costs.fsdp_shard > 0;
  const CollectivePlan reduce_plan =
      par.reduce_plans.empty() ? CollectivePlan() : par.reduce_plans[stage.stage];
  const CollectivePlan gather_plan =
      par.gather_plans.empty() ? CollectivePlan() : par.gather_plans[stage.stage];
  const std::vector<TaskId> none(m, TaskGraph::kNoTask);
  std::vector<TaskId> chain = none, gather_chain = none;
  for (int64_t j = 0; j < stage.buckets; ++j) {
    const int32_t bucket = static_cast<int32_t>(j);
    const int32_t buckets = static_cast<int32_t>(stage.buckets);
    const int64_t bytes = SplitBytes(stage.dense_bytes, buckets, bucket);
    chain = AddGroupCollectives(stage.rank, stage.stage, index, reduce_plan,
                                zero ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                                bytes, stage.ready[j], chain, costs, par, builder);
    if (hsdp) {
      const int64_t shard_bytes = (bytes + ShardReplicas(costs, par) * par.layout.cp - 1) /
                                  (ShardReplicas(costs, par) * par.layout.cp);
      chain = AddReplicaAllReduce(stage.rank, stage.stage, index, shard_bytes, chain, costs, par,
                                  builder);
    }
    if (costs.param_gather_bytes.empty()) continue;
    const int64_t params = SplitBytes(costs.param_gather_bytes[stage.stage], buckets, bucket);
    gather_chain = AddGroupCollectives(stage.rank, stage.stage, index, gather_plan,
                                       CollectiveKind::kAllGather, params, none, gather_chain,
                                       costs, par, builder, &sync->gather_starts[stage.stage]);
  }
  return chain;
}

// The experts' gradients of `stage`: a ring all-reduce over each expert-data-parallel group
// (see Parallelism::layout.ep) that has a compiled member, each member's steps after its
// replica's last bucket being ready and its data-parallel collectives' last task (`dense_end`,
// by compiled GPU). The rings' last steps go to sync->last_steps.
void AddExpertSync(const StageGradients& stage, const Parallelism& par,
                   const std::vector<TaskId>& dense_end, GradientSync* sync,
                   TaskGraphBuilder* builder) {
  const int32_t gpus = par.layout.tp * par.layout.cp;  // of a rank
  const int32_t total = par.layout.dp * gpus;          // the rank's GPUs over all replicas
  const int32_t compiled = builder->graph().num_replicas * gpus;
  const int32_t ep = par.layout.ep;
  const int32_t n = total / ep;  // members of a group
  if (n < 2) return;             // every GPU holds experts of its own
  const std::vector<TaskId>& ready = stage.ready.back();
  for (int32_t group = 0; group < std::min(ep, compiled); ++group) {
    // Members group, group + e, group + 2e, ...: the compiled ones come first.
    RingCollective ring;
    ring.rank = stage.rank;
    ring.stage = stage.stage;
    ring.size = n;
    MemberWaits waits;
    for (int32_t g = group; g < compiled; g += ep) {
      ring.members.push_back({g / gpus, g % gpus});
      waits.ready.push_back(ready[g / gpus * par.layout.cp]);
      waits.previous.push_back(dense_end[g]);
    }
    const int32_t c = static_cast<int32_t>(ring.members.size());
    const int32_t next = group + c * ep;  // the first member not compiled (folded)
    ring.wrap_to = c < n ? RingMember{next / gpus, next % gpus} : ring.members[0];
    ring.mirror_kind = Task::kExpertMirror;
    ring.source_replica = (group + (n - 1) * ep) / gpus;  // the group's last member's
    RingSteps steps;
    steps.count = 2 * (n - 1);
    steps.bytes = stage.expert_bytes;
    const MemberSpan span = builder->AddRing(ring, steps, waits);
    auto& last = sync->last_steps[stage.stage];
    last.insert(last.end(), span.last.begin(), span.last.end());
  }
}

// The collectives of one stage's gradients whose last backward is at `position` on its rank.
void AddStageSync(StageGradients stage, size_t position, const StageCosts& costs,
                  const Parallelism& par, GradientSync* sync, TaskGraphBuilder* builder) {
  const int32_t tp = par.layout.tp;
  const int32_t cp = par.layout.cp;
  AddBucketTimers(position, cp, &stage, sync, builder);
  // Per compiled GPU (replica x tp x cp + GPU of the rank's group): its last task of the
  // data-parallel collectives, which its expert ring follows (one NCCL stream).
  const int32_t replicas = builder->graph().num_replicas;
  std::vector<TaskId> dense_end(static_cast<size_t>(replicas) * tp * cp, TaskGraph::kNoTask);
  const bool shared = par.layout.dp * cp > 1;
  for (int32_t index = 0; index < tp && stage.dense_bytes > 0 && shared; ++index) {
    const std::vector<TaskId> last = AddShardCollectives(stage, index, costs, par, sync, builder);
    auto& last_steps = sync->last_steps[stage.stage];
    last_steps.insert(last_steps.end(), last.begin(), last.end());
    // Member i is GPU (i % cp) x tp + index of replica i / cp.
    for (size_t i = 0; i < last.size(); ++i) {
      dense_end[i / cp * tp * cp + (i % cp) * tp + index] = last[i];
    }
  }
  if (stage.expert_bytes > 0) AddExpertSync(stage, par, dense_end, sync, builder);
}

// Whether the op needs its stage's parameters gathered first (StageCosts::fsdp_units): every F
// and every B or I with resharding, else the stage's first F only.
bool NeedsGather(const Op& op, const StageCosts& costs, std::vector<bool>* gathered) {
  const int32_t stage = op.stage.value();
  if (costs.fsdp_units[stage] < 1) return false;
  if (op.kind == OpKind::kForward) {
    const bool first = !(*gathered)[stage];
    (*gathered)[stage] = true;
    return first || costs.fsdp_reshard;
  }
  return costs.fsdp_reshard && (op.kind == OpKind::kBackward || op.kind == OpKind::kBackwardInput);
}

// FSDP's parameter all-gathers of one op at `position` on `rank`: one collective per unit, in
// order, on one stream per GPU (`chain`, per tensor-parallel index and compiled member): the first
// unit after the rank's previous op (FSDP2 issues it when the op starts: exposed), the op after
// the first unit, the rank's next op (or its optimizer step) after the last (the others are
// prefetched while the op computes).
void AddOpGathers(const Schedule& schedule, int32_t rank, size_t position, int32_t stage,
                  const StageCosts& costs, const Parallelism& par,
                  std::vector<std::vector<TaskId>>* chain, GradientSync* sync,
                  TaskGraphBuilder* builder) {
  const int32_t cp = par.layout.cp;
  const int32_t units = costs.fsdp_units[stage];
  const CollectivePlan plan = par.gather_plans.empty() ? CollectivePlan() : par.gather_plans[stage];
  const int32_t m = builder->graph().num_replicas * cp;
  std::vector<TaskId> previous_op(m, TaskGraph::kNoTask);
  for (int32_t i = 0; position > 0 && i < m; ++i) {
    previous_op[i] = builder->graph().ComputeTask(rank, position - 1, i / cp);
  }
  const bool last_op = position + 1 == schedule.orders[rank].size();
  for (int32_t index = 0; index < par.layout.tp; ++index) {
    std::vector<TaskId>& previous = (*chain)[index];
    for (int32_t unit = 0; unit < units; ++unit) {
      const std::vector<TaskId> ready =
          unit == 0 ? previous_op : std::vector<TaskId>(m, TaskGraph::kNoTask);
      const int64_t bytes = SplitBytes(costs.fsdp_gather_bytes[stage], units, unit);
      previous = AddGroupCollectives(rank, stage, index, plan, CollectiveKind::kAllGather, bytes,
                                     ready, previous, costs, par, builder);
      for (int32_t i = 0; i < m; ++i) {
        if (unit == 0)
          builder->AddEdge(previous[i], builder->graph().ComputeTask(rank, position, i / cp));
        if (unit + 1 < units) continue;
        if (last_op) {
          sync->last_steps[stage].push_back(previous[i]);
        } else {
          builder->AddEdge(previous[i], builder->graph().ComputeTask(rank, position + 1, i / cp));
        }
      }
    }
  }
}

// FSDP's parameter all-gathers of every rank (NeedsGather, AddOpGathers).
void AddFsdpGathers(const Schedule& schedule, const StageCosts& costs, const Parallelism& par,
                    GradientSync* sync, TaskGraphBuilder* builder) {
  const int32_t m = builder->graph().num_replicas * par.layout.cp;
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    std::vector<bool> gathered(schedule.num_stages, false);
    std::vector<std::vector<TaskId>> chain(par.layout.tp,
                                           std::vector<TaskId>(m, TaskGraph::kNoTask));
    const auto& order = schedule.orders[rank];
    for (size_t position = 0; position < order.size(); ++position) {
      for (int k = 0; k < order[position].num_ops(); ++k) {
        const Op& op = order[position].op(k);
        if (!NeedsGather(op, costs, &gathered)) continue;
        AddOpGathers(schedule, rank, position, op.stage.value(), costs, par, &chain, sync, builder);
      }
    }
  }
}

}  // namespace

GradientSync AddGradientSync(const Schedule& schedule, const StageCosts& costs,
                             const Parallelism& par, TaskGraphBuilder* builder) {
  GradientSync sync;
  sync.last_steps.assign(schedule.num_stages, {});
  sync.gather_starts.assign(schedule.num_stages, {});
  // The experts' gradients are reduced over dp x tp x cp / e GPUs (with ep 1 and tp > 1 too:
  // every GPU of a tensor-parallel group holds the experts whole).
  const ParallelLayout& layout = par.layout;
  if (layout.dp * layout.cp == 1 &&
      (costs.expert_gradient_bytes.empty() || layout.dp * layout.tp * layout.cp <= layout.ep)) {
    return sync;
  }
  const std::vector<int64_t> last_backward = LastBackwards(schedule);
  for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
    StageGradients gradients;
    gradients.rank = schedule.stage_to_rank[stage].value();
    gradients.stage = stage;
    gradients.dense_bytes = costs.DenseGradientBytes(stage);
    gradients.expert_bytes =
        costs.expert_gradient_bytes.empty() ? 0 : costs.expert_gradient_bytes[stage];
    if ((gradients.dense_bytes == 0 && gradients.expert_bytes == 0) || last_backward[stage] < 0) {
      continue;
    }
    const int64_t bucket = par.grad_bucket_bytes;
    gradients.buckets = bucket > 0 ? (gradients.dense_bytes + bucket - 1) / bucket : 1;
    // FSDP reduce-scatters unit by unit as the backward finishes them.
    if (!costs.fsdp_units.empty()) gradients.buckets = std::max(1, costs.fsdp_units[stage]);
    AddStageSync(std::move(gradients), static_cast<size_t>(last_backward[stage]), costs, par, &sync,
                 builder);
  }
  if (!costs.fsdp_units.empty() && ShardReplicas(costs, par) * layout.cp > 1) {
    AddFsdpGathers(schedule, costs, par, &sync, builder);
  }
  return sync;
}

std::vector<double> OptimizerStepSeconds(const Schedule& schedule, const StageCosts& costs) {
  std::vector<double> duration(schedule.num_ranks, 0.0);
  for (int32_t stage = 0; stage < static_cast<int32_t>(costs.optimizer_step_s.size()); ++stage) {
    duration[schedule.stage_to_rank[stage].value()] += costs.optimizer_step_s[stage];
  }
  return duration;
}

void AddOptimizerSteps(const Schedule& schedule, const StageCosts& costs, const GradientSync& sync,
                       const std::vector<std::vector<TaskId>>& stream_end,
                       TaskGraphBuilder* builder) {
  builder->graph().optimizer_begin = builder->next_id();
  const std::vector<double> duration = OptimizerStepSeconds(schedule, costs);
  for (int32_t replica = 0; replica < builder->graph().num_replicas; ++replica) {
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      TaskId step = TaskGraph::kNoTask;
      if (duration[rank] > 0) {
        Task task = ComputeTaskOf(rank, schedule.orders[rank].size(), duration[rank]);
        task.kind = TaskKind::kOptimizer;
        task.replica = task.peer_replica = static_cast<uint16_t>(replica);
        step = builder->Add(task);
        builder->AddEdgeFrom(stream_end[replica][rank], step);
      }
      for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
        if (schedule.stage_to_rank[stage].value() != rank) continue;
        // After the step (or without one, after the stage's reduce steps), the all-gathers.
        auto gathers_after = [&](TaskId before) {
          for (TaskId gather : sync.gather_starts[stage]) {
            if (builder->task(gather).replica == replica) builder->AddEdge(before, gather);
          }
        };
        for (TaskId last : sync.last_steps[stage]) {
          // The replica's GPUs have their shards once they have sent and received the last step.
          const Task& step_task = builder->task(last);
          if (step_task.replica != replica && step_task.peer_replica != replica) continue;
          if (step != TaskGraph::kNoTask) {
            builder->AddEdge(last, step);
          } else {
            gathers_after(last);
          }
        }
        if (step != TaskGraph::kNoTask) gathers_after(step);
      }
    }
  }
}

}  // namespace ppsim
