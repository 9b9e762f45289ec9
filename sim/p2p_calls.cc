#include "sim/p2p_calls.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace ppsim {
namespace {

// A point of a rank's stream where it issues p2p ops: before action `before`, it posts the sends
// of the cross-rank outputs of the actions at `sends` and the receives of the cross-rank inputs
// of the actions at `recvs`, then waits until the ops named in `wait_sends` and `wait_recvs`
// (posted here or earlier) have ended.
struct Call {
  size_t before = 0;
  std::vector<size_t> sends;
  std::vector<size_t> recvs;
  std::vector<size_t> wait_sends;
  std::vector<size_t> wait_recvs;
};

// Megatron's shape of an order of n actions: `warmup` forwards, `pairs` forward-backward pairs,
// `warmup` cooldown backwards.
struct MegatronShape {
  size_t n = 0;
  size_t warmup = 0;
  size_t pairs = 0;
};

// The shape of `order`, or why it does not have Megatron's.
std::string MegatronShapeOf(const std::vector<Action>& order, MegatronShape* shape) {
  const size_t n = order.size();
  size_t forwards = 0;
  for (size_t i = 0; i < n; ++i) {
    const Action& a = order[i];
    if (a.num_ops() != 1 ||
        (a.op(0).kind != OpKind::kForward && a.op(0).kind != OpKind::kBackward)) {
      return "its action " + FormatAction(a) + " is not a single F or B";
    }
    forwards += a.op(0).kind == OpKind::kForward ? 1 : 0;
  }
  auto is_forward = [&](size_t i) { return order[i].op(0).kind == OpKind::kForward; };
  size_t leading = 0;
  while (leading < n && is_forward(leading)) ++leading;
  if (2 * forwards != n) {
    return "it has " + std::to_string(forwards) + " forwards in " + std::to_string(n) + " actions";
  }
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
  *shape = {n, warmup, pairs};
  return "";
}

// A rank's calls as they are written down.
class CallList {
 public:
  CallList(size_t n, std::vector<Call>* calls) : n_(n), calls_(calls) {}
  // Positions past the order dropped.
  std::vector<size_t> InRange(std::vector<size_t> positions) const {
    std::erase_if(positions, [&](size_t p) { return p >= n_; });
    return positions;
  }
  // A blocking call: posts and waits for the same ops.
  void Blocking(size_t before, std::vector<size_t> sends, std::vector<size_t> recvs) {
    recvs = InRange(std::move(recvs));
    calls_->push_back({before, sends, recvs, sends, recvs});
  }
  void Add(Call call) { calls_->push_back(std::move(call)); }

 private:
  size_t n_;
  std::vector<Call>* calls_;
};

// forward_backward_pipelining_without_interleaving: batched groups, each waited on.
void OneStageCalls(const MegatronShape& shape, CallList* calls) {
  const size_t w = shape.warmup;
  const size_t r = shape.pairs;
  for (size_t i = 0; i < w; ++i) {
    calls->Blocking(i, {}, {i});      // recv_forward
    calls->Blocking(i + 1, {i}, {});  // send_forward
  }
  if (r > 0) calls->Blocking(w, {}, {w});
  for (size_t i = 0; i < r; ++i) {
    const size_t f = w + 2 * i;
    const size_t b = f + 1;
    calls->Blocking(b, {f}, {b});  // send_forward_recv_backward
    if (i + 1 < r) {
      calls->Blocking(b + 1, {b}, {b + 1});  // send_backward_recv_forward
    } else {
      calls->Blocking(b + 1, {b}, {});  // send_backward
    }
  }
  for (size_t i = 0; i < w; ++i) {
    const size_t c = w + 2 * r + i;
    calls->Blocking(c, {}, {c});      // recv_backward
    calls->Blocking(c + 1, {c}, {});  // send_backward
  }
}

// Where an interleaved rank's receives go. Megatron posts, after its t-th forward (backward),
// the receive of the tensor its upstream rank sends in the same step (schedules.py,
// recv_tensor_from_previous_stage): for most ranks the input of its next forward (backward),
// t + 1; for the leading rank of the direction (rank 0 forward, the last rank backward) the
// output the other end of the pipeline computed p - 1 steps earlier, which feeds this rank's next
// chunk of that microbatch, a later action when microbatch groups are longer than p. In action
// positions of the rank's order; -1: no receive.
struct RecvTargets {
  std::vector<int64_t> after_forward, after_backward;  // by forward (backward) index
  std::vector<size_t> forward_at, backward_at;         // the position of each forward (backward)
};

RecvTargets RecvTargetsOf(const Schedule& schedule, int32_t rank) {
  const int32_t p = schedule.num_ranks;
  const std::vector<Action>& order = schedule.orders[rank];
  RecvTargets t;
  std::map<std::pair<int32_t, int32_t>, int64_t> forward_of, backward_of;  // (mb, stage) -> index
  std::vector<Op> forwards, backwards;
  for (size_t i = 0; i < order.size(); ++i) {
    const Op& op = order[i].op(0);
    const std::pair key(op.microbatch.value(), op.stage.value());
    if (op.kind == OpKind::kForward) {
      forward_of[key] = static_cast<int64_t>(forwards.size());
      forwards.push_back(op);
      t.forward_at.push_back(i);
    } else {
      backward_of[key] = static_cast<int64_t>(backwards.size());
      backwards.push_back(op);
      t.backward_at.push_back(i);
    }
  }
  auto targets = [&](const std::vector<Op>& ops, const auto& index_of, bool leading, int32_t step,
                     const std::vector<size_t>& at) {
    std::vector<int64_t> out(ops.size(), -1);
    for (size_t k = 0; k < ops.size(); ++k) {
      int64_t next = -1;
      if (!leading) {
        next = k + 1 < ops.size() ? static_cast<int64_t>(k + 1) : -1;
      } else if (k + 1 >= static_cast<size_t>(p)) {
        const Op& sent = ops[k + 1 - p];  // the other end's action of that step
        const auto it = index_of.find({sent.microbatch.value(), sent.stage.value() + step});
        if (it != index_of.end()) next = it->second;
      }
      out[k] = next < 0 ? -1 : static_cast<int64_t>(at[next]);
    }
    return out;
  };
  t.after_forward = targets(forwards, forward_of, rank == 0, p, t.forward_at);
  t.after_backward = targets(backwards, backward_of, rank == p - 1, -p, t.backward_at);
  return t;
}

std::vector<size_t> Target(int64_t position) {
  return position < 0 ? std::vector<size_t>{} : std::vector<size_t>{static_cast<size_t>(position)};
}

// forward_backward_pipelining_with_interleaving without overlap_p2p_comm: batched, blocking
// calls; the last warmup call also receives the first backward's input, and each steady pair
// runs F and B before one call that sends both outputs and receives both next inputs.
void InterleavedBlockingCalls(const MegatronShape& shape, const RecvTargets& t, CallList* calls) {
  const size_t w = shape.warmup;
  const size_t r = shape.pairs;
  calls->Blocking(0, {}, {0});  // recv_forward
  for (size_t k = 0; k < w; ++k) {
    std::vector<size_t> recvs = Target(t.after_forward[k]);
    if (k + 1 == w && r > 0) recvs.push_back(k + 2);  // also the first backward's input
    calls->Blocking(k + 1, {k}, recvs);  // send_forward(_backward)_recv_forward(_backward)
  }
  if (r == 0) calls->Blocking(w, {}, {w});  // recv_backward
  for (size_t k = 0; k < r; ++k) {
    const size_t f = w + 2 * k;
    const size_t b = f + 1;
    std::vector<size_t> recvs = Target(t.after_backward[k]);
    if (k + 1 < r) {
      const std::vector<size_t> forward = Target(t.after_forward[w + k]);
      recvs.insert(recvs.begin(), forward.begin(), forward.end());
    }
    calls->Blocking(b + 1, {f, b}, recvs);
  }
  for (size_t i = 0; i < w; ++i) {
    const size_t c = w + 2 * r + i;
    calls->Blocking(c + 1, {c}, Target(t.after_backward[r + i]));  // send_backward_recv_backward
  }
}

// forward_backward_pipelining_with_interleaving with overlap_p2p_comm (the training default for
// interleaved schedules): single ops, and handles waited on later: each wait is on the receive
// the previous step posted, whichever action it feeds.
void InterleavedOverlappedCalls(const MegatronShape& shape, const RecvTargets& t, CallList* calls) {
  const size_t w = shape.warmup;
  const size_t r = shape.pairs;
  calls->Blocking(0, {}, {0});  // recv_forward
  for (size_t k = 0; k < w; ++k) {
    calls->Blocking(k + 1, {k}, Target(t.after_forward[k]));  // send_forward_recv_forward, waited
    if (k + 1 == w && r > 0) {
      calls->Add({k + 1, {}, calls->InRange({k + 2}), {}, {}});  // recv for the first B, queued
    }
  }
  if (r == 0) calls->Blocking(w, {}, {w});              // recv_backward
  std::vector<size_t> forward_posted, backward_posted;  // the previous step's receives
  for (size_t k = 0; k < r; ++k) {
    const size_t f = w + 2 * k;
    const size_t b = f + 1;
    // pre_forward: the receive the previous pair's post_forward queued.
    if (k > 0) calls->Add({f, {}, {}, {}, forward_posted});
    // post_forward: send F's output and receive for the next step; the send is waited on at once
    // (deallocate_pipeline_outputs); pre_backward: the receive queued for this B.
    forward_posted = k + 1 < r ? Target(t.after_forward[w + k]) : std::vector<size_t>{};
    calls->Add({b, {f}, forward_posted, {f}, k == 0 ? calls->InRange({b}) : backward_posted});
    // post_backward: send B's output and receive for the next step; wait the previous B's send.
    backward_posted = calls->InRange(Target(t.after_backward[k]));
    std::vector<size_t> previous_send = k > 0 ? std::vector<size_t>{b - 2} : std::vector<size_t>{};
    calls->Add({b + 1, {b}, backward_posted, previous_send, {}});
  }
  for (size_t i = 0; i < w; ++i) {
    const size_t c = w + 2 * r + i;
    if (i == 0 && r > 0) calls->Add({c, {}, {}, {}, backward_posted});  // the queued receive
    calls->Blocking(c + 1, {c}, Target(t.after_backward[r + i]));  // send_backward_recv_backward
  }
  // The last pair's backward send is waited on at the end.
  if (r > 0) calls->Add({shape.n, {}, {}, {w + 2 * r - 1}, {}});
}

// Every rank's calls as Megatron issues them (with overlap_p2p_comm, its training default, or
// with --no-overlap-p2p-communication), or InvalidInput naming the first rank whose order does
// not have Megatron's shape.
Status MegatronCallsOfRanks(const Schedule& schedule, bool overlap_p2p_comm,
                            std::vector<std::vector<Call>>* calls) {
  const int32_t ranks = schedule.num_ranks;
  std::vector<int32_t> chunks(ranks, 0);
  for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
    ++chunks[schedule.stage_to_rank[stage].value()];
  }
  calls->assign(ranks, {});
  for (int32_t rank = 0; rank < ranks; ++rank) {
    MegatronShape shape;
    const std::string why = MegatronShapeOf(schedule.orders[rank], &shape);
    if (!why.empty()) {
      return Status::InvalidInput("megatron: rank " + std::to_string(rank) +
                                  "'s order is not Megatron-LM's: " + why +
                                  "; Megatron runs 1F1B, Interleaved1F1B and GPipe orders");
    }
    CallList list(shape.n, &(*calls)[rank]);
    if (chunks[rank] == 1) {
      OneStageCalls(shape, &list);
    } else if (overlap_p2p_comm) {
      InterleavedOverlappedCalls(shape, RecvTargetsOf(schedule, rank), &list);
    } else {
      InterleavedBlockingCalls(shape, RecvTargetsOf(schedule, rank), &list);
    }
  }
  return Status();
}

// Per rank and position: the (rank, position) of the other ranks' actions it takes inputs from or
// gives outputs to (replica 0's transfers).
struct CrossRankEnds {
  std::vector<std::vector<std::vector<std::pair<int32_t, size_t>>>> inputs, outputs;
};

CrossRankEnds CrossRankEndsOf(const Schedule& schedule, const TaskGraph& graph,
                              const std::vector<std::pair<TaskId, TaskId>>& ends) {
  CrossRankEnds cross;
  cross.inputs.resize(schedule.num_ranks);
  cross.outputs.resize(schedule.num_ranks);
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    cross.inputs[rank].resize(schedule.orders[rank].size());
    cross.outputs[rank].resize(schedule.orders[rank].size());
  }
  for (const auto& [producer, consumer] : ends) {
    const Task& from = graph.tasks[producer];
    const Task& to = graph.tasks[consumer];
    if (from.replica != 0) continue;
    cross.inputs[to.rank][to.position].emplace_back(from.rank, from.position);
    cross.outputs[from.rank][from.position].emplace_back(to.rank, to.position);
  }
  return cross;
}

// Each rank's sends waited on at the end of the step, and its calls in stream order (at one
// point, posts before waits).
void EndTorchStep(const Schedule& schedule, std::vector<std::vector<Call>>* calls) {
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    std::vector<Call>& list = (*calls)[rank];
    std::vector<size_t> sent;
    for (const Call& call : list) sent.insert(sent.end(), call.sends.begin(), call.sends.end());
    if (!sent.empty()) list.push_back({schedule.orders[rank].size(), {}, {}, sent, {}});
    std::stable_sort(list.begin(), list.end(), [](const Call& a, const Call& b) {
      const bool a_waits = !a.wait_sends.empty() || !a.wait_recvs.empty();
      const bool b_waits = !b.wait_sends.empty() || !b.wait_recvs.empty();
      return std::pair(a.before, a_waits) < std::pair(b.before, b_waits);
    });
  }
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
  const CrossRankEnds cross = CrossRankEndsOf(schedule, graph, ends);
  std::vector<size_t> lowered(ranks, 0);  // actions lowered per rank
  size_t remaining = schedule.NumActions();
  while (remaining > 0) {
    bool progress = false;
    for (int32_t rank = 0; rank < ranks; ++rank) {
      const size_t position = lowered[rank];
      if (position == schedule.orders[rank].size()) continue;
      const auto& inputs = cross.inputs[rank][position];
      bool ready = true;
      for (const auto& [from, p] : inputs) ready = ready && lowered[from] > p;
      // Inputs from this rank come earlier in its own order (CheckSchedule and the compiler's
      // deadlock check hold that).
      if (!ready) continue;
      lowered[rank] = position + 1;
      --remaining;
      progress = true;
      for (const auto& [to, q] : cross.outputs[rank][position]) {
        (*calls)[rank].push_back({position + 1, {position}, {}, {}, {}});  // SEND after it
        (*calls)[to].push_back({lowered[to], {}, {q}, {}, {}});  // RECV at the receiver's end
      }
      if (!inputs.empty()) {
        (*calls)[rank].push_back({position, {}, {}, {}, {position}});  // wait just before it
      }
    }
    if (!progress) return Status::Deadlock("torch: the orders cannot be lowered");
  }
  EndTorchStep(schedule, calls);
  return Status();
}

// Per rank and position: the calls posting and waiting on the send of its outputs and on the
// receive of its inputs (-1: none).
struct CallsOfOps {
  std::vector<int32_t> send_post, send_wait, recv_post, recv_wait;
};

std::vector<CallsOfOps> CallsOfOpsOf(const Schedule& schedule,
                                     const std::vector<std::vector<Call>>& calls) {
  std::vector<CallsOfOps> ops(schedule.num_ranks);
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    CallsOfOps& o = ops[rank];
    for (auto* v : {&o.send_post, &o.send_wait, &o.recv_post, &o.recv_wait}) {
      v->assign(schedule.orders[rank].size(), -1);
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
  return ops;
}

// Lowers every rank's calls into wait tasks and edges (see AddP2pCalls).
class CallLowering {
 public:
  CallLowering(const Schedule& schedule, const std::vector<std::vector<Call>>& calls,
               const BoundaryTransfers& transfers, TaskGraphBuilder* builder)
      : schedule_(schedule),
        calls_(calls),
        transfers_(transfers),
        builder_(builder),
        ops_(CallsOfOpsOf(schedule, calls)) {}

  Status Run() {
    RETURN_IF_ERROR(FindWaitingCalls());
    builder_->graph().waits_begin = builder_->next_id();
    const int32_t replicas = builder_->graph().num_replicas;
    post_.assign(replicas, std::vector<std::vector<TaskId>>(schedule_.num_ranks));
    wait_.assign(replicas, std::vector<std::vector<TaskId>>(schedule_.num_ranks));
    for (int32_t replica = 0; replica < replicas; ++replica) {
      for (int32_t rank = 0; rank < schedule_.num_ranks; ++rank) AddStream(replica, rank);
    }
    ConnectTransfers();
    return Status();
  }

 private:
  std::pair<int32_t, size_t> RankAndPosition(TaskId compute) const {
    const Task& task = builder_->task(compute);
    return {task.rank, task.position};
  }

  // Which calls wait on something (the same in every replica): those get a wait task.
  Status FindWaitingCalls() {
    waits_.resize(schedule_.num_ranks);
    for (int32_t rank = 0; rank < schedule_.num_ranks; ++rank) {
      waits_[rank].assign(calls_[rank].size(), false);
    }
    for (const auto& [producer, consumer] : transfers_.ends) {
      const auto [from, p] = RankAndPosition(producer);
      const auto [to, q] = RankAndPosition(consumer);
      if (ops_[from].send_post[p] < 0 || ops_[to].recv_post[q] < 0 || ops_[from].send_wait[p] < 0 ||
          ops_[to].recv_wait[q] < 0) {
        return Status::Internal("p2p calls: none moves the transfer from rank " +
                                std::to_string(from) + " to rank " + std::to_string(to));
      }
      waits_[from][ops_[from].send_wait[p]] = true;
      waits_[to][ops_[to].recv_wait[q]] = true;
    }
    return Status();
  }

  // The stream of (replica, rank): its actions in order, with the wait tasks of its calls
  // between them. Records, per call, the task before it (where its ops are posted) and its wait.
  void AddStream(int32_t replica, int32_t rank) {
    const std::vector<Call>& calls = calls_[rank];
    std::vector<TaskId>& post = post_[replica][rank];
    std::vector<TaskId>& wait = wait_[replica][rank];
    post.assign(calls.size(), TaskGraph::kNoTask);
    wait.assign(calls.size(), TaskGraph::kNoTask);
    TaskId previous = TaskGraph::kNoTask;
    size_t next_call = 0;
    const size_t n = schedule_.orders[rank].size();
    for (size_t position = 0; position <= n; ++position) {
      for (; next_call < calls.size() && calls[next_call].before == position; ++next_call) {
        post[next_call] = previous;
        if (!waits_[rank][next_call]) continue;
        Task task;
        task.kind = TaskKind::kWait;
        task.replica = task.peer_replica = static_cast<uint16_t>(replica);
        task.rank = task.peer = rank;
        task.position = static_cast<uint32_t>(position);
        const TaskId w = builder_->Add(task);
        builder_->graph().wait_after.push_back(previous);
        builder_->AddEdgeFrom(previous, w);
        wait[next_call] = w;
        previous = w;
      }
      if (position == n) break;
      const TaskId compute = builder_->graph().ComputeTask(rank, position, replica);
      builder_->AddEdgeFrom(previous, compute);
      previous = compute;
    }
  }

  // Each transfer starts once both its ops are posted (NCCL's rendezvous) and ends both waits.
  void ConnectTransfers() {
    for (size_t i = 0; i < transfers_.ends.size(); ++i) {
      const TaskId transfer = transfers_.begin + static_cast<TaskId>(i);
      const int32_t replica = builder_->task(transfer).replica;
      const auto [from, p] = RankAndPosition(transfers_.ends[i].first);
      const auto [to, q] = RankAndPosition(transfers_.ends[i].second);
      for (const auto& [rank, posted, waited] :
           {std::tuple(from, ops_[from].send_post[p], ops_[from].send_wait[p]),
            std::tuple(to, ops_[to].recv_post[q], ops_[to].recv_wait[q])}) {
        builder_->AddEdgeFrom(post_[replica][rank][posted], transfer);
        builder_->AddEdge(transfer, wait_[replica][rank][waited]);
      }
    }
  }

  const Schedule& schedule_;
  const std::vector<std::vector<Call>>& calls_;
  const BoundaryTransfers& transfers_;
  TaskGraphBuilder* builder_;
  std::vector<CallsOfOps> ops_;
  std::vector<std::vector<bool>> waits_;  // per rank and call: whether it gets a wait task
  // Per replica, rank and call: the task before the call on the rank's stream, and its wait.
  std::vector<std::vector<std::vector<TaskId>>> post_, wait_;
};

}  // namespace

Status AddP2pCalls(const Schedule& schedule, P2pMode mode, const BoundaryTransfers& transfers,
                   TaskGraphBuilder* builder) {
  std::vector<std::vector<Call>> calls;
  RETURN_IF_ERROR(mode == P2pMode::kTorch
                      ? TorchCallsOfRanks(schedule, builder->graph(), transfers.ends, &calls)
                      : MegatronCallsOfRanks(schedule, mode == P2pMode::kMegatron, &calls));
  return CallLowering(schedule, calls, transfers, builder).Run();
}

}  // namespace ppsim
