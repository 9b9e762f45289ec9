#include "batch/search_space.h"

#include <algorithm>
#include <iterator>

#include "base/names.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "experiments/run_phases.h"
#include "interop/megatron_layout.h"
#include "models/offload.h"
#include "models/transformer.h"
#include "platforms/cluster.h"
#include "schedules/registry.h"

namespace ppsim {
namespace {

constexpr int32_t kDefaultMicrobatchSizes[] = {1, 2, 4, 8, 16};
constexpr const char* kRecomputeNames[] = {"none", "selective", "full"};
// ZeRO stages searched by default: 0 has stage 1's collectives (a reduce-scatter and an
// all-gather move what an all-reduce does) with more memory, so it cannot rank above stage 1.
constexpr int32_t kDefaultZero[] = {1, 2, 3};
// Default EP degrees: at most this many experts per GPU (DeepSeek-V3 runs 4, Mixtral 8x7B with
// EP 8 one; a 256-expert model on 8 GPUs would hold 32).
constexpr int32_t kMaxExpertsPerGpu = 16;
// Default CP degrees: none below this sequence length; above it, each GPU keeps at least
// kMinCpTokens of every sequence (Llama 3 at 131,072 tokens: CP 16, 8,192 per GPU).
constexpr int32_t kMinCpSeqLen = 32768;
constexpr int32_t kMinCpTokens = 8192;

std::vector<int32_t> DivisorsOf(int32_t n) {
  std::vector<int32_t> divisors;
  for (int32_t d = 1; d <= n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  return divisors;
}

bool IsLayoutString(const std::string& layout) {
  return layout != "even" && layout != "balanced";
}

// "layernorm+mlp" as a request's comma list.
std::string ModuleList(const std::string& item) {
  std::string list = item;
  std::replace(list.begin(), list.end(), '+', ',');
  return list;
}

// The recompute axis by default: none, selective (core_attn), full, and the module sets
// practitioners run: the norms and the MLP's input for every model (the largest share of a dense
// layer's activations after the attention's), DeepSeek-V3's norms and MLA up-projections for MLA
// models, the experts' activation function for MoE models.
std::vector<std::string> DefaultRecompute(const SpaceShape& shape) {
  std::vector<std::string> items(std::begin(kRecomputeNames), std::end(kRecomputeNames));
  items.push_back("layernorm+mlp");
  if (shape.mla) items.push_back("layernorm+mla_up_proj");
  if (shape.experts > 0) items.push_back("layernorm+moe_act");
  return items;
}

struct Split {
  int32_t v = 0;  // 0: the schedule's default
  std::string layout;  // even, balanced or a Megatron layout string
  std::vector<int32_t> layers_per_stage;  // for a layout string
};

// The V values and layer splits of `schedule` on `pp` ranks. A schedule that takes any V (the
// interleaved ones) gets its default, then every V >= 2 dividing the layers per rank (even) or
// the layers with the embedding and loss counted (balanced: Llama 3's one layer fewer on the
// first and last stage); a Megatron layout string its own V where its stages are a multiple of
// pp. Others only their own V.
std::vector<Split> SplitsOf(const SearchSpace& space, const SpaceShape& shape,
                            const ScheduleInfo& schedule, int32_t pp,
                            const std::vector<std::string>& layouts) {
  std::vector<Split> splits;
  for (const std::string& layout : layouts) {
    if (IsLayoutString(layout)) {
      MegatronLayout parsed;
      if (!ParseMegatronLayout(layout, pp, shape.layers, shape.mtp_layers, "--layouts", &parsed)
               .ok()) {
        continue;
      }
      const int32_t v = parsed.virtual_stages_per_rank;
      if (v > 1 && !schedule.any_stages_per_rank) continue;
      if (!space.stages_per_rank.empty() &&
          std::find(space.stages_per_rank.begin(), space.stages_per_rank.end(), v) ==
              space.stages_per_rank.end()) {
        continue;
      }
      splits.push_back({v > 1 ? v : 0, layout, parsed.decoder_layers});
      continue;
    }
    const int32_t slots = shape.layers + (layout == "balanced" ? 2 : 0);
    std::vector<int32_t> vs = space.stages_per_rank;
    if (vs.empty()) {
      vs.push_back(0);
      if (schedule.any_stages_per_rank && slots % pp == 0) {
        for (int32_t v = 2; v <= slots / pp; ++v) {
          if ((slots / pp) % v == 0) vs.push_back(v);
        }
      }
    }
    for (int32_t v : vs) {
      if (v > 0 && int64_t{pp} * v > slots) continue;
      splits.push_back({v, layout, {}});
    }
  }
  return splits;
}

// Default EP degrees of a MoE model on a stage's `gpus` (dp x tp x cp).
std::vector<int32_t> DefaultEp(const SpaceShape& shape, int64_t gpus) {
  std::vector<int32_t> eps;
  for (int32_t e : DivisorsOf(shape.experts)) {
    if (gpus % e == 0 && shape.experts / e <= kMaxExpertsPerGpu) eps.push_back(e);
  }
  if (eps.empty()) eps.push_back(1);
  return eps;
}

std::vector<int32_t> DefaultCp(const SpaceShape& shape) {
  std::vector<int32_t> cps = {1};
  if (shape.seq_len < kMinCpSeqLen) return cps;
  for (int32_t c = 2; shape.seq_len / c >= kMinCpTokens; c *= 2) cps.push_back(c);
  return cps;
}

// The memory axes of one (tp, cp, pp, dp): ZeRO with its shard degree, EP, recompute, offload.
struct Memory {
  int32_t zero = 0;
  int32_t dp_shard = 0;  // 0: unset (all dp)
  int32_t ep = 0;        // 0: unset
  std::string recompute;
  std::string offload;  // empty: none
};

std::vector<Memory> MemoryVariants(const SearchSpace& space, const SpaceShape& shape, int32_t tp,
                                   int32_t cp, int32_t dp) {
  std::vector<int32_t> zeros = space.zero;
  if (zeros.empty()) zeros.assign(std::begin(kDefaultZero), std::end(kDefaultZero));
  // One replica and no CP: nothing to shard over; every stage is the same run.
  if (int64_t{dp} * cp == 1) zeros = {*std::min_element(zeros.begin(), zeros.end())};
  std::vector<int32_t> eps = {0};
  if (shape.experts > 0) eps = space.ep.empty() ? DefaultEp(shape, int64_t{dp} * tp * cp) : space.ep;
  std::vector<std::string> recomputes =
      space.recompute.empty() ? DefaultRecompute(shape) : space.recompute;
  std::vector<std::string> offloads = space.offload.empty() ? std::vector<std::string>{"none"}
                                                             : space.offload;
  std::vector<Memory> variants;
  for (int32_t zero : zeros) {
    std::vector<int32_t> shards = {0};
    if (zero == 3 && !space.dp_shard.empty()) {
      shards.clear();
      for (int32_t s : space.dp_shard) {
        if (dp % s == 0) shards.push_back(s == dp ? 0 : s);
      }
    }
    for (int32_t shard : shards) {
      for (int32_t ep : eps) {
        if (shape.experts > 0 && zero >= 2) {
          // Routed experts shard with ZeRO 2 and 3 only as dense parameters (models/sharding.h).
          TrainingSetup setup;
          setup.zero_stage = zero;
          setup.layout.ep = std::max(ep, 1);
          setup.layout.tp = tp;
          if (!ExpertsShardAsDense(setup)) continue;
        }
        for (const std::string& recompute : recomputes) {
          for (const std::string& offload : offloads) {
            variants.push_back({zero, shard, ep, recompute, offload == "none" ? "" : offload});
          }
        }
      }
    }
  }
  return variants;
}

void SetMemory(const Memory& m, int32_t dp, int32_t cp, proto::RunConfig* c) {
  c->set_zero(m.zero);
  if (m.zero == 2 && int64_t{dp} * cp > 1) {
    c->set_grad_bucket(std::to_string(DefaultGradBucketBytes(dp)) + "B");
  }
  if (m.dp_shard > 0) c->set_dp_shard(m.dp_shard);
  if (m.ep > 0) c->set_ep(m.ep);
  if (m.recompute == "none" || m.recompute == "selective" || m.recompute == "full") {
    c->set_recompute(m.recompute);
  } else {
    c->set_recompute("selective");
    c->set_recompute_modules(ModuleList(m.recompute));
  }
  if (!m.offload.empty()) c->set_offload_modules(ModuleList(m.offload));
}

}  // namespace

int64_t DefaultGradBucketBytes(int32_t dp) {
  return std::max<int64_t>(40'000'000, int64_t{1'000'000} * dp) * 4;
}

Status CheckBase(SearchSpace* space, SpaceShape* shape) {
  const Locator& where = *space->where;
  proto::RunConfig& base = space->base;
  if (base.model().empty()) {
    return where.Invalid(
        "model", "required; give a preset (" + TransformerPresetNames() + ") or a model file");
  }
  if (base.global_batch().empty()) {
    return where.Invalid("global_batch",
                         "required; give sequences per iteration (1024) or tokens (4Mitok)");
  }
  if (space->gpus > 0 && base.has_nodes()) {
    return where.Invalid(
        "gpus", "give " + where.Name("gpus") + " or " + where.Name("nodes") + ", not both");
  }
  RunSpec spec;
  RETURN_IF_ERROR(ResolveModel(base, where, {}, &spec));
  RETURN_IF_ERROR(ResolvePlatform(base, where, {}, &spec));
  PlatformSpec cluster;
  RETURN_IF_ERROR(LoadCluster(spec.platform, where, &cluster));
  if (!cluster.xml_file.empty()) {
    return where.Invalid("platform", "ppsim search needs a cluster (a preset or a cluster file); " +
                                         cluster.xml_file + " is a SimGrid XML platform");
  }
  shape->gpus_per_node = cluster.gpus_per_node;
  shape->platform_name = cluster.name;
  if (cluster.gpus_per_node == 0) {
    // A cluster sized to the run (`ideal`): the GPUs given make its one node.
    if (space->gpus == 0) {
      return where.Invalid("gpus", "required with " + cluster.name +
                                       ", which has as many GPUs "
                                       "as a run needs; give the GPUs to search over, e.g. " +
                                       where.Name("gpus") + " 64");
    }
    shape->gpus_per_node = space->gpus;
    shape->gpus = space->gpus;
  } else if (space->gpus > 0) {
    if (space->gpus % cluster.gpus_per_node != 0) {
      return where.Invalid(
          "gpus", std::to_string(space->gpus) + " is not a multiple of the " +
                      std::to_string(cluster.gpus_per_node) + " GPUs per node of " + cluster.name +
                      "; give a multiple of " + std::to_string(cluster.gpus_per_node) + ", or " +
                      where.Name("nodes"));
    }
    base.set_nodes(space->gpus / cluster.gpus_per_node);
    spec.platform.nodes = base.nodes();
    RETURN_IF_ERROR(LoadCluster(spec.platform, where, &cluster));
  }
  if (cluster.gpus_per_node > 0) shape->gpus = cluster.gpus_per_node * cluster.num_nodes;
  TransformerSpec model;
  RETURN_IF_ERROR(LoadModel(spec, &model));
  shape->layers = model.layers;
  shape->mtp_layers = model.mtp_layers;
  shape->experts = model.experts;
  shape->mla = model.mla;
  // The rest of the base (global batch, sequence length, memory fields) as `ppsim run` reads it.
  proto::RunConfig probe = base;
  probe.set_schedule("1F1B");
  probe.set_pp(1);
  RunRequest request;
  RETURN_IF_ERROR(ResolveRun(probe, space->where, {}, &request));
  const RunSpec& resolved = request.runs.at(0);
  shape->seq_len = static_cast<int32_t>(resolved.training.seq_len);
  shape->sequences = resolved.global_batch;
  if (resolved.global_batch_in_tokens) {
    shape->sequences = resolved.training.seq_len > 0 &&
                               resolved.global_batch % resolved.training.seq_len == 0
                           ? resolved.global_batch / resolved.training.seq_len
                           : 0;
  }
  for (const std::string& name : space->schedules) {
    if (FindSchedule(name) == nullptr) {
      std::vector<std::string> names;
      for (const ScheduleInfo& info : AllSchedules()) names.emplace_back(info.name);
      return where.Invalid("schedules", UnknownName("schedule", name, names));
    }
  }
  for (const std::string& item : space->recompute) {
    if (item == "none" || item == "selective" || item == "full") continue;
    uint32_t modules = 0;
    Status status = ParseRecomputeModules(where.Where("recompute"), ModuleList(item), &modules);
    if (!status.ok()) {
      return status.WithMessage(status.message() +
                                " (an item of --recompute is none, selective, full or modules "
                                "joined by +, e.g. layernorm+mlp)");
    }
  }
  for (const std::string& item : space->offload) {
    if (item == "none") continue;
    uint32_t modules = 0;
    RETURN_IF_ERROR(ParseOffloadModules(where.Where("offload"), ModuleList(item), &modules));
  }
  for (int32_t zero : space->zero) {
    if (zero > 3) {
      return where.Invalid("zero", "ZeRO stage " + std::to_string(zero) + "; valid: 0, 1, 2, 3");
    }
  }
  // The default ZeRO stages include 3.
  const bool zero3 = space->zero.empty() ||
                     std::find(space->zero.begin(), space->zero.end(), 3) != space->zero.end();
  if (!space->dp_shard.empty() && !zero3) {
    return where.Invalid("dp_shard", "shards parameters over replicas with ZeRO 3; " +
                                         where.Name("zero") + " does not list 3");
  }
  if (!space->ep.empty() && shape->experts == 0) {
    return where.Invalid("ep", "shards a model's routed experts; " + model.name +
                                   " has none (leave " + where.Name("ep") + " out)");
  }
  for (const std::string& layout : space->layouts) {
    if (!IsLayoutString(layout)) continue;
    // Its syntax and layer counts, on one rank's worth of stages (pp 1 takes any number).
    MegatronLayout parsed;
    RETURN_IF_ERROR(
        ParseMegatronLayout(layout, 1, shape->layers, shape->mtp_layers, where.Where("layouts"),
                            &parsed));
  }
  return Status();
}

std::vector<Enumerated> Enumerate(const SearchSpace& space, const SpaceShape& shape) {
  const std::vector<int32_t> tps = space.tp.empty() ? DivisorsOf(shape.gpus_per_node) : space.tp;
  std::vector<int32_t> sizes(std::begin(kDefaultMicrobatchSizes),
                             std::end(kDefaultMicrobatchSizes));
  if (!space.microbatch_size.empty()) sizes = space.microbatch_size;
  std::vector<std::string> schedules = space.schedules;
  if (schedules.empty()) {
    // An alias gives the same order as the schedule it names.
    for (const ScheduleInfo& info : AllSchedules()) {
      if (info.alias_of.empty()) schedules.emplace_back(info.name);
    }
  }
  const std::vector<std::string> layouts =
      space.layouts.empty() ? std::vector<std::string>{"even", "balanced"} : space.layouts;
  std::vector<Enumerated> all;
  const std::vector<int32_t> cps = space.cp.empty() ? DefaultCp(shape) : space.cp;
  int64_t group = 0;
  for (int32_t tp : tps) {
    for (int32_t cp : cps) {
      std::vector<int32_t> pps = space.pp;
      if (pps.empty()) {
        for (int32_t pp : DivisorsOf(shape.gpus)) {
          if (shape.gpus % (int64_t{tp} * cp * pp) == 0 && pp <= shape.layers) pps.push_back(pp);
        }
      }
      for (int32_t pp : pps) {
        const int64_t gpus_per_pipeline = int64_t{tp} * cp * pp;
        const bool divides = shape.gpus % gpus_per_pipeline == 0;
        const int32_t dp = divides ? static_cast<int32_t>(shape.gpus / gpus_per_pipeline) : 1;
        const std::vector<Memory> memories = MemoryVariants(space, shape, tp, cp, dp);
        for (int32_t b : sizes) {
          // A microbatch size the replicas cannot split the batch into is no configuration
          // (listed sizes are kept, for PrepareRun to say why).
          if (space.microbatch_size.empty() && shape.sequences > 0 && divides &&
              shape.sequences % (int64_t{dp} * b) != 0) {
            continue;
          }
          const int64_t microbatches =
              shape.sequences > 0 && divides ? shape.sequences / (int64_t{dp} * b) : 0;
          for (const std::string& name : schedules) {
            const ScheduleInfo* schedule = FindSchedule(name);
            ++group;
            // Megatron-Interleaved's microbatch group: its default (pp), or the listed sizes.
            std::vector<int32_t> groups = {0};
            if (schedule->name == "Megatron-Interleaved" && !space.microbatch_group_size.empty()) {
              groups.clear();
              for (int32_t g : space.microbatch_group_size) {
                if (g >= pp && (microbatches == 0 || g <= microbatches)) groups.push_back(g);
              }
            }
            for (const Split& split : SplitsOf(space, shape, *schedule, pp, layouts)) {
              for (int32_t g : groups) {
                for (const Memory& memory : memories) {
                  Enumerated e;
                  e.group = group;
                  proto::RunConfig& c = e.config;
                  c = space.base;
                  c.set_schedule(name);
                  c.set_pp(pp);
                  if (split.v > 0) c.set_stages_per_rank(split.v);
                  if (g > 0) c.set_microbatch_group_size(g);
                  c.set_microbatch_size(b);
                  if (split.layout == "balanced") {
                    c.set_embedding_as_layer(true);
                    c.set_loss_as_layer(true);
                  } else if (!split.layers_per_stage.empty()) {
                    std::string list;
                    for (int32_t n : split.layers_per_stage) {
                      list += (list.empty() ? "" : ",") + std::to_string(n);
                    }
                    c.set_layers_per_stage(list);
                  }
                  c.set_tp(tp);
                  if (cp > 1) c.set_cp(cp);
                  c.set_sequence_parallel(tp > 1);
                  c.set_dp(dp);
                  SetMemory(memory, dp, cp, &c);
                  if (!divides) {
                    e.invalid = space.where->Where("pp") + ": tp " + std::to_string(tp) +
                                (cp > 1 ? " x cp " + std::to_string(cp) : std::string()) +
                                " x pp " + std::to_string(pp) + " does not divide the " +
                                std::to_string(shape.gpus) + " GPUs";
                  }
                  all.push_back(std::move(e));
                }
              }
            }
          }
        }
      }
    }
  }
  return all;
}

}  // namespace ppsim
