// PrepareRun's costs phases (experiments/run_phases.h): the model's costs, overridden by a profile
// and the request in one place, the schedules found from costs, and expert routing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "config/units.h"
#include "experiments/run_phases.h"
#include "models/offload.h"
#include "models/profile.h"
#include "schedules/zb_auto.h"

namespace ppsim {
namespace {

// The stages as the zero-bubble scheduler sees them (schedules/zb_auto.h), for a schedule found
// from costs (ZB-1p, ZB-2p, ZB-auto): F, I and W in nanoseconds; T_comm towards the next stage,
// the uncontended transfer of the boundary message (a GPU's share of it with tp or cp) from rank
// s to rank s + 1 of replica 0; M_B and M_W; and the limit: K x p x M_B for --memory-limit Kp,
// else the activations that fit beside the stage's static bytes and the reserve in the GPU's
// memory (no limit when the memory is not bounded).
Status ZeroBubbleStagesOf(const RunSpec& spec, const PreparedRun& run, const ScheduleInfo& info,
                          std::vector<ZeroBubbleStage>* stages) {
  const Locator& where = *spec.where;
  const StageCosts& costs = run.costs;
  const std::string name(info.name);
  if (spec.activation_limit_p > 0 && info.name != "ZB-auto") {
    return where.Invalid("memory_limit", std::to_string(spec.activation_limit_p) +
                                             "p limits ZB-auto's "
                                             "activations; " +
                                             name + " takes a size (the GPU's memory)");
  }
  if (costs.backward_input_s.empty() || costs.backward_weight_s.empty()) {
    return where.Invalid("i", name + " splits the backward into I and W; give " + where.Name("i") +
                                  " and " + where.Name("w") + ", not only " + where.Name("b"));
  }
  bool any_activation = false;
  for (int64_t bytes : costs.activation_bytes) any_activation = any_activation || bytes > 0;
  if (!any_activation) {
    return where.Invalid("activation", name +
                                           " places forwards as memory allows and needs each "
                                           "stage's activation bytes M_B; give " +
                                           where.Name("model") +
                                           ", a profile with activation, "
                                           "or " +
                                           where.Name("activation") + " (and " +
                                           where.Name("activation_w") + ")");
  }
  if (!run.platform.xml_file.empty()) {
    return where.Invalid("schedule",
                         name +
                             " times the boundary transfers on a cluster (a "
                             "preset or a cluster file); the routes of the XML platform " +
                             run.platform.xml_file + " are known to SimGrid only");
  }
  const RunMemory memory = RunMemoryOf(spec, run.platform, costs);
  const int32_t p = run.schedule.num_ranks;
  const int64_t group = spec.training.GpusPerRank();
  auto ticks = [](double seconds) { return std::llround(seconds * 1e9); };
  stages->assign(p, ZeroBubbleStage());
  for (int32_t s = 0; s < p; ++s) {
    ZeroBubbleStage& stage = (*stages)[s];
    stage.forward_ticks = ticks(costs.forward_s[s]);
    stage.backward_input_ticks = ticks(costs.backward_input_s[s]);
    stage.backward_weight_ticks = ticks(costs.backward_weight_s[s]);
    if (s + 1 < p) {
      const int64_t bytes = costs.message_bytes.empty() ? 0 : costs.message_bytes[s];
      stage.transfer_ticks = ticks(run.platform.UncontendedTransferTime(
          run.platform.GpuOf(0, s, 0), run.platform.GpuOf(0, s + 1, 0),
          (bytes + group - 1) / group));
    }
    stage.activation_bytes = costs.activation_bytes[s];
    stage.activation_w_bytes = costs.activation_w_bytes.empty() ? 0 : costs.activation_w_bytes[s];
    if (info.name != "ZB-auto") {
      // ZB-1p and ZB-2p set their own limits (p x M_B, 2p x M_B); out of memory is the run's to
      // report, as for any schedule.
    } else if (spec.activation_limit_p > 0) {
      stage.limit_bytes = int64_t{spec.activation_limit_p} * p * stage.activation_bytes;
    } else if (memory.capacity_bytes == 0) {
      stage.limit_bytes = std::numeric_limits<int64_t>::max() / 4;
    } else {
      const int64_t static_bytes = costs.static_bytes.empty() ? 0 : costs.static_bytes[s];
      stage.limit_bytes =
          MaxLiveActivationBytes(static_bytes, memory.capacity_bytes, memory.reserve);
      if (stage.limit_bytes < stage.activation_bytes) {
        return where.Invalid(
            "memory_limit",
            name + " cannot place a forward on stage " + std::to_string(s) + ": " +
                HumanBytes(static_cast<double>(memory.capacity_bytes)) + " of GPU memory leaves " +
                HumanBytes(static_cast<double>(std::max<int64_t>(stage.limit_bytes, 0))) +
                " for activations beside " + HumanBytes(static_cast<double>(static_bytes)) +
                " of parameters, gradients and optimizer state and the reserve, but one "
                "microbatch holds " +
                HumanBytes(static_cast<double>(stage.activation_bytes)) +
                "; valid: a limit that leaves at least that, or a multiple of p x M_B (1p)");
      }
    }
  }
  return Status();
}

// The schedule found from the costs (ZB-1p, ZB-2p, ZB-auto), generated once they are known.
Status GenerateFromCosts(PreparedRun* run) {
  const RunSpec& spec = run->spec;
  std::vector<ZeroBubbleStage> zero_bubble_stages;
  RETURN_IF_ERROR(ZeroBubbleStagesOf(spec, *run, *run->from_costs, &zero_bubble_stages));
  ScheduleParams params = ScheduleParamsOf(spec);
  params.stage_costs = &zero_bubble_stages;
  return GenerateSchedule(run->from_costs->name, params, &run->schedule);
}

// The MoE layers' parts and all-to-alls are the model's (with ep > 1): durations given instead of
// the model's would not hold the parts the engines run (overlap still replaces a pair's).
Status CheckMoeDurationsAreTheModels(const RunSpec& spec) {
  const Locator& where = *spec.where;
  for (const auto& [field, given] : {std::pair{"f", !spec.costs.forward_s.empty()},
                                     std::pair{"i", !spec.costs.backward_input_s.empty()},
                                     std::pair{"w", !spec.costs.backward_weight_s.empty()},
                                     std::pair{"b", !spec.costs.backward_s.empty()}}) {
    if (!given) continue;
    return where.Invalid(field,
                         "replaces the model's durations, whose MoE parts and "
                         "all-to-alls " +
                             where.Name("ep") + " " + std::to_string(spec.training.layout.ep) +
                             " simulates; give them with " + where.Name("ep") +
                             " 1, or leave them to the model");
  }
  return Status();
}

// Activation offload (--offload-modules, models/offload.h): each stage's offloaded bytes, over a
// platform whose GPUs have a host link.
Status ApplyOffload(const PreparedRun& run, StageCosts* costs) {
  const TrainingSetup& setup = run.setup;
  if (setup.offload_modules == 0) return Status();
  const PlatformSpec& platform = run.platform;
  if (!(platform.host_link_bandwidth_bytes_per_s > 0)) {
    return run.spec.where->Invalid(
        "offload_modules",
        "needs a GPU-to-host link; the platform has none (valid: a cluster with host_link, as "
        "the dgx-h100, dgx-b200 and gb200-nvl72 presets, or --set host_link.bandwidth=...)");
  }
  costs->offload_bytes.clear();
  for (const StageModel& stage : run.stages) {
    costs->offload_bytes.push_back(StageOffloadBytes(run.transformer, setup, stage));
  }
  return Status();
}

// The analytic model's costs on the platform's GPU (none without a model).
Status ModelCosts(PreparedRun* run, StageCosts* costs) {
  const RunSpec& spec = run->spec;
  if (spec.model.empty()) return Status();
  RETURN_IF_ERROR(CheckDtypeOnGpu(run->platform, spec.training.dtype, *spec.where));
  *costs = ModelStageCosts(
      run->stages,
      ModelStageSeconds(spec, run->transformer, run->setup, run->platform, run->stages),
      run->setup);
  costs->delay_wgrad = spec.delay_wgrad;
  run->gpu = GpuModelOf(run->platform, spec);
  return ApplyOffload(*run, costs);
}

// DeepSeek's node-limited routing (--moe-node-limit M) on `platform`: the expert-parallel group of
// a rank spans N nodes of P GPUs each (P the node's GPUs when N > 1, so that every GPU has a peer
// of its index on each other node); a token's k experts lie on min(M, N) of them, chosen uniformly,
// so it crosses the network to each other node with probability min(M, N)/N, once, and its k
// copies arrive at the expert GPUs over NVLink (sim/task_graph.h Parallelism). Sets each MoE
// stage's node bytes: T h x bytes per element x min(M, N)/N, T h x bytes = dispatch (combine)
// bytes / k.
Status ApplyNodeLimit(const RunSpec& spec, const TransformerSpec& model,
                      const PlatformSpec& platform, StageCosts* costs) {
  const Locator& where = *spec.where;
  const int32_t gpus = spec.training.GpusPerRank();
  const int32_t ep = spec.training.layout.ep;
  const int32_t members = spec.training.layout.dp * gpus;  // of each rank
  // Every group of every rank: the same number of nodes, each whole when there are several.
  int32_t nodes = 0;
  for (int32_t rank = 0; rank < platform.layout.pp; ++rank) {
    for (int32_t base = 0; base < members; base += ep) {
      std::map<int32_t, int32_t> per_node;
      for (int32_t m = base; m < base + ep; ++m) {
        ++per_node[platform.NodeOf(ExpertMemberGpu(platform, rank, m, gpus))];
      }
      const int32_t spanned = static_cast<int32_t>(per_node.size());
      for (const auto& [node, count] : per_node) {
        if ((spanned > 1 && count != platform.gpus_per_node) || (nodes > 0 && spanned != nodes)) {
          return where.Invalid(
              "moe_node_limit",
              "needs every expert-parallel group within one node or of whole nodes, as many for "
              "each group (a GPU of each index on every node of its group); " +
                  where.Name("ep") + " " + std::to_string(ep) + " puts " + std::to_string(count) +
                  " of node " + std::to_string(node) + "'s " +
                  std::to_string(platform.gpus_per_node) + " GPUs in a group of rank " +
                  std::to_string(rank) + " spanning " + std::to_string(spanned) +
                  " nodes (valid: " + where.Name("ep") + " within a node or a multiple of " +
                  std::to_string(platform.gpus_per_node) + ", contiguous placement)");
        }
      }
      nodes = spanned;
    }
  }
  const int64_t chosen = std::min(spec.moe_node_limit, nodes);
  const int64_t k = model.experts_per_token;
  for (MoeStage& stage : costs->moe) {
    stage.group_nodes = nodes;
    stage.node_dispatch_bytes = (stage.dispatch_bytes * chosen + k * nodes - 1) / (k * nodes);
    stage.node_combine_bytes = (stage.combine_bytes * chosen + k * nodes - 1) / (k * nodes);
  }
  return Status();
}

}  // namespace

Status PrepareCosts(PreparedRun* run) {
  const RunSpec& spec = run->spec;
  const Locator& where = *spec.where;
  Profile profile;
  const bool has_profile = !spec.profile_file.empty();
  if (has_profile) RETURN_IF_ERROR(ReadProfile(spec.profile_file, &profile));
  StageCosts costs;
  RETURN_IF_ERROR(ModelCosts(run, &costs));
  // Values per rank share (the request's, or a profile's rows) are split over the stages.
  RankShares shares;
  const bool per_share = spec.costs_per == CostsPer::kRank && (spec.costs.any() || has_profile);
  if (per_share) RETURN_IF_ERROR(RankSharesOf(run->schedule, where, &shares));
  RETURN_IF_ERROR(OverrideStageCosts(spec.costs, has_profile ? &profile : nullptr,
                                     run->schedule.num_stages, where, &costs,
                                     per_share ? &shares : nullptr));
  run->costs = std::move(costs);
  if (run->from_costs != nullptr) RETURN_IF_ERROR(GenerateFromCosts(run));
  RETURN_IF_ERROR(CheckCostsCoverSchedule(run->costs, run->schedule, where));
  if (!run->costs.moe.empty()) RETURN_IF_ERROR(CheckMoeDurationsAreTheModels(spec));
  if (run->seq_len == 0) run->seq_len = spec.training.seq_len;
  // The optimizer steps at the GPU's HBM bandwidth (none when the platform lists none), unless a
  // profile measured them.
  const double hbm = run->platform.gpu.memory_bandwidth_bytes_per_s;
  if (run->costs.optimizer_step_s.empty() && hbm > 0) {
    for (int64_t bytes : run->costs.optimizer_step_bytes) {
      run->costs.optimizer_step_s.push_back(static_cast<double>(bytes) / hbm);
    }
  }
  return Status();
}

Status CheckWorkload(const PreparedRun& run) {
  const RunSpec& spec = run.spec;
  const Locator& where = *spec.where;
  // Tokens of an iteration, counted in 64 bits.
  const double tokens = static_cast<double>(run.schedule.num_microbatches) *
                        static_cast<double>(spec.training.microbatch_size) *
                        spec.training.layout.dp *
                        static_cast<double>(std::max<int64_t>(run.seq_len, 1));
  if (tokens > static_cast<double>(kMaxCount)) {
    return where.Invalid("microbatch_size",
                         "the iteration's microbatches x sequences per microbatch x replicas x "
                         "sequence length come to more than 1e18 tokens");
  }
  if (spec.train_tokens > 0 && run.seq_len == 0) {
    return where.Invalid("train_tokens", "needs the tokens of an iteration; give " +
                                             where.Name("model") + " or " + where.Name("seq_len"));
  }
  if (spec.training.layout.dp <= 1) return Status();
  for (int64_t bytes : run.costs.gradient_bytes) {
    if (bytes > 0) return Status();
  }
  return where.Invalid("dp", std::to_string(spec.training.layout.dp) +
                                 " replicas all-reduce their gradients, but no stage has any; "
                                 "give " +
                                 where.Name("model") +
                                 ", a profile with grad_bytes, "
                                 "or " +
                                 where.Name("grad_bytes"));
}

Status PrepareExpertRouting(PreparedRun* run) {
  if (run->spec.moe_node_limit == 0 || run->costs.moe.empty()) return Status();
  return ApplyNodeLimit(run->spec, run->transformer, run->platform, &run->costs);
}

}  // namespace ppsim
