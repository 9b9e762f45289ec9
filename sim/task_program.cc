#include "sim/task_program.h"

#include <algorithm>
#include <iterator>

namespace ppsim {
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
  const MoeLayerSeconds& s = moe.layer_seconds;
  // --delay-wgrad-compute: B's W parts apart (their own chunk, so that no all-to-all waits for
  // them), each right after its I part on the compute stream.
  const bool apart = whole && costs.delay_wgrad;
  const double attention = s.input_attention_s + (whole && !apart ? s.weight_attention_s : 0);
  const double mlp = s.input_mlp_s + (whole && !apart ? s.weight_mlp_s : 0);
  const double total = whole ? costs.backward_s[stage] : costs.backward_input_s[stage];
  const double rest = total - n * (attention + mlp) -
                      (apart ? n * (s.weight_attention_s + s.weight_mlp_s) : 0) -
                      (moe.full_recompute ? forward_parts : 0);
  if (moe.full_recompute) forward_layers();
  for (int32_t l = n - 1; l >= 0; --l) {
    all_to_all(PartName::kCombine, true, l, per_peer_combine, node_combine);
    compute(PartName::kMlp, true, l, mlp);
    if (apart) {
      compute(PartName::kMlp, true, l, s.weight_mlp_s);
      parts.back().chunk = kWeightChunk;
    }
    all_to_all(PartName::kDispatch, true, l, per_peer_combine, node_combine);
    compute(PartName::kAttention, true, l, attention);
    if (apart) {
      compute(PartName::kAttention, true, l, s.weight_attention_s);
      parts.back().chunk = kWeightChunk;
    }
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
  // A layer is 4 parts in each chunk (6 in the backward with its W parts apart: after its MLP
  // and after its attention); the backward's rest is its last part.
  const size_t bl = costs.delay_wgrad ? 6 : 4;
  while (fi + 4 <= f.size() && bi + bl < b.size()) {
    // F attention, B combine, B MLP, F dispatch, F MLP, B dispatch, B attention, F combine;
    // apart, B MLP's W after B MLP and B attention's W after B attention, as Megatron-LM's
    // TransformerLayerSchedulePlan.run (megatron/core/models/common/model_chunk_schedule_plan.py)
    // calls mlp.backward_dw() before the dispatch's backward and pre_dispatch_computation.
    // backward_dw() after the attention's backward.
    if (bl == 4) {
      for (const TaskPart* part : {&f[fi], &b[bi], &b[bi + 1], &f[fi + 1], &f[fi + 2], &b[bi + 2],
                                   &b[bi + 3], &f[fi + 3]}) {
        program.push_back(*part);
      }
    } else {
      for (const TaskPart* part : {&f[fi], &b[bi], &b[bi + 1], &b[bi + 2], &f[fi + 1], &f[fi + 2],
                                   &b[bi + 3], &b[bi + 4], &b[bi + 5], &f[fi + 3]}) {
        program.push_back(*part);
      }
    }
    fi += 4;
    bi += bl;
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
    if (IsRing(program[i].kind)) continue;
    before[i] = last[program[i].chunk];
    last[program[i].chunk] = static_cast<int32_t>(i);
  }
  return before;
}

uint32_t ProgramTable::Of(const Action& action, int64_t tp_ring_bytes, int64_t cp_ring_bytes,
                          int64_t cp_a2a_bytes) {
  // The MoE parts depend on the ops' kinds and stages, not their microbatches.
  const Op& first = action.op(0);
  const Op& second = action.is_overlap() ? action.op(1) : first;
  const Key key(action.num_ops(), static_cast<int>(first.kind), first.stage.value(),
                second.stage.value(), tp_ring_bytes, cp_ring_bytes, cp_a2a_bytes);
  auto [it, added] = index_.emplace(key, kNoProgram);
  if (!added) return it->second;
  TaskProgram program = ProgramOf(costs_, action, ep_, compute_slowdown_);
  for (const auto& [kind, bytes] :
       {std::pair(PartKind::kTpRing, tp_ring_bytes), std::pair(PartKind::kCpA2a, cp_a2a_bytes),
        std::pair(PartKind::kCpRing, cp_ring_bytes)}) {
    if (bytes <= 0) continue;
    TaskPart ring;
    ring.kind = kind;
    ring.bytes = bytes;
    ring.serial = kind == PartKind::kCpA2a || (kind == PartKind::kCpRing && costs_.cp_serial);
    program.push_back(ring);
  }
  if (!program.empty()) {
    it->second = static_cast<uint32_t>(programs_.size());
    programs_.push_back(std::move(program));
  }
  return it->second;
}

}  // namespace ppsim
