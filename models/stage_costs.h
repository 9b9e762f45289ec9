// Per-virtual-stage costs: how long each op takes and how much memory it holds.
//
// Durations are seconds, sizes bytes; every vector has one entry per virtual stage.
#ifndef PPSIM_MODELS_STAGE_COSTS_H_
#define PPSIM_MODELS_STAGE_COSTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "schedules/action.h"
#include "schedules/schedule.h"

namespace ppsim {

// A stage's mixture-of-experts layers as the engines run them with expert parallelism (all its
// MoE layers alike). A layer's forward is its attention part (norms, attention, router), the token
// dispatch all-to-all, its MLP part (routed and shared experts, token permutation) and the combine
// all-to-all; its backward runs the reverse: the combine's gradient all-to-all, the MLP's backward,
// the dispatch's gradient all-to-all, the attention's backward (I, and W where it is not split
// off). Full recomputation reruns the forward, all-to-alls included, at the start of I. The parts
// are sums of the layer's ops by models/op_costs.h's LayerPart: the attention part ends with the
// norm before the router and the router (its softmax and top-k too); the MLP part holds the token
// permutation, the routed experts' grouped GEMMs, the shared experts and, after the combine, the
// unpermutation and the residual add. Filled by ModelStageCosts (models/transformer.h) from a
// model with --ep > 1, with balanced routing (each GPU's experts receive its T_g k tokens).
// One MoE layer's seconds by part and pass, per microbatch on one GPU: forward, backward for
// inputs (I, without a full recompute's forward; selective recompute's attention is in I's
// attention part) and for weights (W).
struct MoeLayerSeconds {
  double forward_attention_s = 0;
  double forward_mlp_s = 0;
  double input_attention_s = 0;
  double input_mlp_s = 0;
  double weight_attention_s = 0;
  double weight_mlp_s = 0;
};

struct MoeStage {
  int32_t layers = 0;
  MoeLayerSeconds layer_seconds;  // one of its MoE layers (all alike)
  bool full_recompute = false;
  // Bytes one GPU sends in one all-to-all to its whole expert-parallel group, itself included
  // (each of the e members, itself too, gets 1/e: balanced routing): the dispatch (tokens x top-k
  // x hidden in the run's dtype) and the combine (16 bits); the backward's two all-to-alls move
  // 16-bit gradients of the combine's size.
  int64_t dispatch_bytes = 0;
  int64_t combine_bytes = 0;
  // Node-limited routing (--moe-node-limit; 0: not limited): the nodes N its expert-parallel group
  // spans, and the bytes one GPU sends over the network to the GPU of its own index on each other
  // node of its group in the dispatch, and in the combine and the backward's two
  // (sim/task_program.h TaskPart::node_bytes). Each GPU of a node then delivers over NVLink its
  // node's share of the tokens of all N nodes: N times dispatch (combine) bytes / e to each other
  // GPU of its node.
  int32_t group_nodes = 0;
  int64_t node_dispatch_bytes = 0;
  int64_t node_combine_bytes = 0;
};

struct StageCosts {
  std::vector<double> forward_s;          // F
  std::vector<double> backward_s;         // B (full backward). Default: I + W.
  std::vector<double> backward_input_s;   // I. Empty when only B was given.
  std::vector<double> backward_weight_s;  // W. Empty when only B was given.
  // OVERLAP_F_B duration, indexed by the stage of the pair's forward. Empty: F + B of the halves.
  std::vector<double> overlap_s;
  std::vector<int64_t> activation_bytes;    // M_B: held from F's start until the backward.
  std::vector<int64_t> activation_w_bytes;  // M_W: the part of M_B held from I until W.
  // Of M_B, the bytes activation offload (models/offload.h) copies to host memory after each
  // forward and back before its backward (sim/host_copies.h), per GPU and microbatch. Empty: none.
  std::vector<int64_t> offload_bytes;
  // The tensor crossing the boundary between stage s and s + 1 (activation forward, gradient
  // backward). The last stage's entry is not sent.
  std::vector<int64_t> message_bytes;
  // Memory held for the whole iteration on each GPU of the stage: static_bytes = weight_bytes +
  // gradient_bytes + optimizer_state_bytes, each part derived where static_bytes is (the model:
  // models/transformer.h StageModel; OverrideStageCosts for given and profiled values), so that a
  // run can say what its memory is made of (sim/metrics.h MemoryBreakdown). Empty: none. Costs
  // built with static_bytes alone (no parts) report their static bytes unsplit.
  std::vector<int64_t> static_bytes;
  // The parameters the GPU holds (16-bit with the model; a profile's params).
  std::vector<int64_t> weight_bytes;
  // The stage's gradients on each GPU (included in static_bytes): the bytes each GPU all-reduces
  // over the data-parallel replicas after the stage's last backward. Zeros when not given.
  std::vector<int64_t> gradient_bytes;
  // The optimizer's state on each GPU: fp32 main parameters and Adam's two moments (and the fp32
  // main gradient with 16-bit gradients), its shard with ZeRO-1; a profile's optimizer state.
  std::vector<int64_t> optimizer_state_bytes;
  // Of gradient_bytes, the routed experts' (a model with experts): reduced over each GPU's
  // expert-data-parallel group (sim/gradient_sync.h) instead of the data-parallel replicas. Empty:
  // none.
  std::vector<int64_t> expert_gradient_bytes;
  // ZeRO-2 and 3 (a model's): the gradients each GPU reduce-scatters, the stage's whole, while
  // gradient_bytes holds the memory of its shard and of what is in flight. Empty: gradient_bytes.
  std::vector<int64_t> gradient_sync_bytes;
  // The gradients the data-parallel collectives reduce: gradient_bytes (or gradient_sync_bytes)
  // less the experts'.
  int64_t DenseGradientBytes(int32_t stage) const {
    if (!gradient_sync_bytes.empty()) return gradient_sync_bytes[stage];
    if (gradient_bytes.empty()) return 0;
    return gradient_bytes[stage] -
           (expert_gradient_bytes.empty() ? 0 : expert_gradient_bytes[stage]);
  }
  // The stage's optimizer step on each GPU, after its gradients are synchronised: the HBM bytes it
  // reads and writes (its traffic, not the optimizer state it keeps, which is in static_bytes),
  // and its duration at the GPU's HBM bandwidth (set when the platform is known), or as a profile
  // measured it (CostValues::optimizer_step_s). Empty or zero: no step.
  std::vector<int64_t> optimizer_step_bytes;
  std::vector<double> optimizer_step_s;
  // ZeRO-1 (Megatron's distributed optimizer, --zero 1 with --dp > 1): the 16-bit parameters each
  // GPU all-gathers after the optimizer step; the gradients are then reduce-scattered, not
  // all-reduced. Empty: all-reduce.
  std::vector<int64_t> param_gather_bytes;
  // ZeRO-3 (FSDP2 as torchtitan runs it, sim/gradient_sync.h): per stage its FSDP units and the
  // 16-bit parameters each GPU all-gathers for all of them (split evenly over the units); the
  // gradients are reduce-scattered unit by unit over the stage's last backward. With fsdp_reshard
  // the units are gathered before every forward and every backward (B or I) of the stage, else
  // once, before its first forward. Empty: no FSDP.
  std::vector<int32_t> fsdp_units;
  std::vector<int64_t> fsdp_gather_bytes;
  bool fsdp_reshard = false;
  // HSDP: the replicas each shard group spans, S < dp (sim/gradient_sync.h); 0: all dp.
  int32_t fsdp_shard = 0;
  // Tensor-parallel collectives inside F and inside I (or B), from a model with --tp > 1: per op,
  // the ring steps of all its collectives (2(t - 1) per all-reduce, t - 1 per reduce-scatter or
  // all-gather) and the bytes each GPU of the group sends per step. Empty: none.
  std::vector<int32_t> tp_forward_steps;
  std::vector<int32_t> tp_backward_steps;
  std::vector<int64_t> tp_step_bytes;
  // Ring attention with context parallelism (--cp > 1): the bytes each GPU passes to the next
  // slice during F and during I (or B). Empty: none.
  std::vector<int64_t> cp_forward_bytes;
  std::vector<int64_t> cp_backward_bytes;
  // Those exchanges run before the op's compute, not alongside it (--cp-comm-type allgather or
  // a2a: models/transformer.h CpCommType).
  bool cp_serial = false;
  // Hierarchical context parallelism (--cp-comm-type a2a+p2p, models/transformer.h CpCommType):
  // the all-to-alls' bytes each GPU sends to its inner group during F and during I (or B), run
  // before the op's compute, and the inner group's size A (cp_* above: the ring over the cp / A
  // outer GPUs, slice j to slice j + A). Empty, and 1: none.
  std::vector<int64_t> cp_a2a_forward_bytes;
  std::vector<int64_t> cp_a2a_backward_bytes;
  int32_t cp_a2a_size = 1;
  // Mixture-of-experts layers whose all-to-alls the engines run (a model with --ep > 1), one
  // entry per stage (layers 0 where a stage has none). Empty: none.
  std::vector<MoeStage> moe;
  // Megatron-LM's --delay-wgrad-compute: a full backward's MoE layers run their weight gradients
  // (W) as parts of their own beside the all-to-alls (sim/task_program.h ProgramOf).
  bool delay_wgrad = false;

  int32_t num_stages() const { return static_cast<int32_t>(forward_s.size()); }
  bool has_split_backward() const { return !backward_input_s.empty(); }

  // REQUIRES: op's stage in range; I and W only when has_split_backward().
  double OpDuration(const Op& op) const;
  // An overlap lasts overlap_s of its forward's stage, or F + B when overlap_s is empty.
  double ActionDuration(const Action& action) const;
  // The ring steps and bytes per GPU of the tensor-parallel collectives inside an action (0 when
  // there are none; W has none).
  struct Collectives {
    int64_t steps = 0;
    int64_t bytes = 0;
    int64_t cp_bytes = 0;      // ring attention's
    int64_t cp_a2a_bytes = 0;  // hierarchical context parallelism's inner all-to-alls
  };
  Collectives ActionCollectives(const Action& action) const;
};

// Per-stage values as the request's flags or a profile's rows give them: each list holds one value
// for every stage (or rank share), or one each; an empty list means "not given". Seconds and bytes.
// The comments name the request's fields; params and optimizer state come from profiles only.
struct CostValues {
  std::vector<double> forward_s;               // f (required, here, in a profile or from a model)
  std::vector<double> backward_input_s;        // i (with w)
  std::vector<double> backward_weight_s;       // w (with i)
  std::vector<double> backward_s;              // b (or i and w)
  std::vector<double> overlap_s;               // overlap. Default: F + B.
  std::vector<int64_t> activation_bytes;       // activation. Default: 0.
  std::vector<int64_t> activation_w_bytes;     // activation_w. Default: 0.
  std::vector<int64_t> message_bytes;          // message_bytes. Default: 0.
  std::vector<int64_t> gradient_bytes;         // grad_bytes. Default: 0.
  std::vector<int64_t> param_bytes;            // a profile's params. Default: 0.
  std::vector<int64_t> optimizer_state_bytes;  // a profile's optimizer state. Default: 0.
  // A profile's measured optimizer step (StageCosts::optimizer_step_s). Default: the model's.
  std::vector<double> optimizer_step_s;

  bool any() const;
};

struct Profile;  // models/profile.h: CostValues read from a file

// What a given cost value describes (README, Costs). kRank: one rank's share of a model copy
// (1/pp of the model, see RankShares) for one microbatch, split evenly over the virtual stages
// that hold it, so that the same values give every schedule the same work. kVirtualStage: one
// virtual stage, as given.
enum class CostsPer { kRank, kVirtualStage };
Status ParseCostsPer(std::string_view what, std::string_view text, CostsPer* costs_per);
std::string_view CostsPerName(CostsPer costs_per);  // "rank", "virtual-stage"

// How values per rank share map onto a schedule's virtual stages. Share i is the i-th 1/pp of a
// model copy, in layer order: what rank i holds under 1F1B. A model copy (a pipeline) of v x pp
// stages cuts each share into v consecutive stages, so its k-th stage holds 1/v of share k / v:
// interleaved and V schedules v = 2 (on whichever ranks they place those stages), DualPipe's two
// copies v = 1 each (rank r holds share r of copy A and share pp - 1 - r of copy B). For each
// virtual stage: its share, v, and which of the share's v stages it is.
struct RankShares {
  int32_t num_ranks = 0;
  std::vector<int32_t> share;
  std::vector<int32_t> split;
  std::vector<int32_t> index;
};
// InvalidInput (at costs_per) when a pipeline's stages are not a multiple of the ranks.
Status RankSharesOf(const Schedule& schedule, const Locator& where, RankShares* shares);

// The one place where costs are overridden. `costs` holds the analytic model's costs of
// `num_stages` virtual stages (models/transformer.h ModelStageCosts: every field, one entry per
// stage), or nothing. Each field the overrides hold replaces the model's: the request's value
// (`given`) when it gives one, else the profile's column (`profile`, may be null); a field none of
// them has keeps the model's value, or takes its default (B = I + W; overlap F + B; sizes 0). The
// fields only the model fills (MoE parts, tensor- and context-parallel collectives, the optimizer
// step, ZeRO-1's gather, the experts' gradients) stay as they are. Static memory is the profile's
// params, the gradients and the profile's optimizer state, plus what the model holds besides its
// gradients, part by part: weight_bytes = params + the model's weights, optimizer_state_bytes = the
// profile's optimizer state + the model's; static bytes the costs held without parts stay unsplit
// in static_bytes. With `shares` (CostsPer::kRank) the given values and the profile's rows are per
// rank: one for all ranks or one per rank, each split evenly over the rank's stages of a pipeline
// (durations exactly; bytes in whole bytes, the first stages one byte more; the boundary message
// is the same tensor however the rank's share is cut, so it is not split). Without `shares`,
// values and rows are per virtual stage: one for all or one per stage. Messages about a given
// field start where it was written (`where`, with the request's field names: f, i, w, b, overlap,
// activation, activation_w, message_bytes, grad_bytes, costs_per); about the profile, with its
// file. Then checks that F and B (or I and W) are there and M_W <= M_B.
Status OverrideStageCosts(const CostValues& given, const Profile* profile, int32_t num_stages,
                          const Locator& where, StageCosts* costs,
                          const RankShares* shares = nullptr);

// Checks that `costs` has a duration for every kind of op `schedule` uses (I and W need i and w)
// and one entry per virtual stage of the schedule.
Status CheckCostsCoverSchedule(const StageCosts& costs, const Schedule& schedule,
                               const Locator& where);

}  // namespace ppsim

#endif  // PPSIM_MODELS_STAGE_COSTS_H_
