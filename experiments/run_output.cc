#include "experiments/run_output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/json.h"
#include "base/names.h"
#include "config/units.h"
#include "experiments/framework_emit.h"
#include "models/offload.h"

namespace ppsim {
namespace {

// The ZeRO stage in the assumed line: " (ZeRO-1)", " (ZeRO-2)", " (ZeRO-3, shard 8, reshard on)".
std::string ZeroLabel(const TrainingSetup& t) {
  if (t.zero_stage == 0) return "";
  std::string label = " (ZeRO-" + std::to_string(t.zero_stage);
  if (t.zero_stage == 3) {
    label += ", shard " + std::to_string(t.dp_shard > 0 ? t.dp_shard : t.layout.dp) + ", reshard " +
             (t.ReshardAfterForward() ? "on" : "off");
  }
  return label + ")";
}

constexpr NamedValue<OutputFormat> kFormatNames[] = {
    {"table", OutputFormat::kTable},
    {"json", OutputFormat::kJson},
    {"csv", OutputFormat::kCsv},
};

int64_t MaxPeak(const RunMetrics& m) {
  int64_t peak = 0;
  for (const RankMetrics& r : m.ranks) peak = std::max(peak, r.peak_activation_bytes);
  return peak;
}

int64_t MaxPeakMemory(const RunMetrics& m) {
  int64_t peak = 0;
  for (const RankMetrics& r : m.ranks) peak = std::max(peak, r.peak_memory_bytes);
  return peak;
}

// "71.3 GiB of 80 GiB", with " OOM" when it does not fit.
std::string MemoryOf(const RankMetrics& k) {
  std::string text = HumanBytes(static_cast<double>(k.peak_memory_bytes));
  if (k.memory_capacity_bytes > 0) {
    text += " of " + HumanBytes(static_cast<double>(k.memory_capacity_bytes));
  }
  return text + (k.oom ? "  OOM" : "");
}

// A breakdown's parts in output order: the table's words, the JSON key, the bytes.
struct MemoryPart {
  const char* words;
  const char* key;
  int64_t bytes;
};
std::vector<MemoryPart> MemoryParts(const MemoryBreakdown& b) {
  return {{"weights", "weights_bytes", b.weights_bytes},
          {"gradients", "gradients_bytes", b.gradients_bytes},
          {"optimizer", "optimizer_state_bytes", b.optimizer_state_bytes},
          {"static unsplit", "unsplit_static_bytes", b.unsplit_static_bytes},
          {"activations", "activations_bytes", b.activations_bytes},
          {"fragmentation", "fragmentation_bytes", b.fragmentation_bytes},
          {"context and NCCL", "fixed_reserve_bytes", b.fixed_reserve_bytes}};
}

// The rank with the most peak memory (the first of equals) and what its peak is made of, the
// parts that are not zero: "rank 0: 63.8 GiB = weights 2.9 GiB + ... + context and NCCL 3 GiB";
// nothing when no rank holds any memory.
void AddPeakMemoryLine(const RunMetrics& m, std::vector<std::vector<std::string>>* summary) {
  const RankMetrics* largest = nullptr;
  for (const RankMetrics& k : m.ranks) {
    if (largest == nullptr || k.peak_memory_bytes > largest->peak_memory_bytes) largest = &k;
  }
  if (largest == nullptr || largest->peak_memory_bytes == 0) return;
  const std::vector<MemoryPart> parts = MemoryParts(largest->memory);
  std::string text;
  for (const MemoryPart& part : parts) {
    if (part.bytes == 0) continue;
    text += (text.empty() ? " = " : " + ") + std::string(part.words) + " " +
            HumanBytes(static_cast<double>(part.bytes));
  }
  const std::string peak = HumanBytes(static_cast<double>(largest->peak_memory_bytes));
  summary->push_back({"peak memory", "rank " + std::to_string(largest->rank) + ": " + peak + text});
}

// The largest rank's capacity (they are equal today); 0: unlimited.
int64_t Capacity(const RunMetrics& m) {
  int64_t capacity = 0;
  for (const RankMetrics& r : m.ranks) capacity = std::max(capacity, r.memory_capacity_bytes);
  return capacity;
}

// What the run assumed beyond what it was given: the workload's sizes, how costs were read, the
// memory reserve, and with a model its setup and the GPU constants of the op cost model.
nlohmann::ordered_json Assumptions(const RunResult& r) {
  const TrainingSetup& t = r.spec.training;
  nlohmann::ordered_json a;
  a["microbatch_size"] = t.microbatch_size;
  if (r.seq_len > 0) a["seq_len"] = r.seq_len;
  if (!r.model_notes.empty()) a["model_notes"] = r.model_notes;
  if (!r.spec.import_notes.empty()) a["import_notes"] = r.spec.import_notes;
  if (r.model.empty() || r.spec.costs.any()) {
    a["costs_per"] = std::string(CostsPerName(r.spec.costs_per));
  }
  if (!r.spec.unitless_durations.empty()) {
    a["unitless_durations_in_seconds"] = r.spec.unitless_durations;
  }
  a["memory_reserve_bytes"] = r.metrics.reserve.fixed_bytes;
  a["activation_overhead"] = JsonNumber(r.metrics.reserve.activation_fraction);
  if (!r.model.empty()) {
    a["dtype"] = std::string(DtypeName(t.dtype));
    a["recompute"] = std::string(RecomputeName(t.recompute));
    if (t.recompute_modules != 0)
      a["recompute_modules"] = RecomputeModulesName(t.recompute_modules);
    if (t.recompute_method != RecomputeMethod::kAll) {
      a["recompute_method"] = std::string(RecomputeMethodName(t.recompute_method));
      a["recompute_num_layers"] = t.recompute_num_layers;
    }
    if (t.offload_modules != 0) a["offload_modules"] = OffloadModulesName(t.offload_modules);
    a["flash_attention"] = t.flash_attention;
    a["sequence_parallel"] = t.sequence_parallel;
    a["tp_comm_overlap"] = r.spec.tp_comm_overlap;
    if (t.layout.cp > 1) a["cp_comm_type"] = std::string(CpCommTypeName(t.cp_comm_type));
    if (t.layout.cp > 1 && t.cp_comm_type == CpCommType::kA2aP2p) a["cp_a2a_size"] = t.cp_a2a_size;
    a["zero"] = t.zero_stage;
    if (t.zero_stage == 3) {  // FSDP's shard group and policy (README, Sharded data parallelism)
      a["dp_shard"] = t.dp_shard > 0 ? t.dp_shard : t.layout.dp;
      a["reshard_after_forward"] = t.ReshardAfterForward();
    }
    a["grad_dtype"] = t.fp32_grads ? "fp32" : "bf16";
    const ParamBytes bytes = RecipeBytes(t);
    a["bytes_per_param_replicated"] = bytes.replicated;
    a["bytes_per_param_sharded"] = bytes.sharded;
    a["layers_per_stage"] = r.layers_per_stage;
    if (r.spec.efficiency > 0) {
      a["cost_model"] = "efficiency";
      a["efficiency"] = JsonNumber(r.spec.efficiency);
    } else {
      a["cost_model"] = "per-op";
      a["matmul_efficiency"] = JsonNumber(r.gpu.matmul_efficiency);
      a["attention_efficiency"] = JsonNumber(r.gpu.attention_efficiency);
      a["memory_efficiency"] = JsonNumber(r.gpu.memory_efficiency);
    }
    a["peak_flops_per_s"] = JsonNumber(r.gpu.matmul_flops_per_s);
  }
  return a;
}

// "3,4,4,3": layers per stage.
std::string LayerList(const std::vector<int32_t>& layers) {
  std::string text;
  for (int32_t n : layers) text += (text.empty() ? "" : ",") + std::to_string(n);
  return text;
}

// The assumptions as one line of the table.
std::string AssumptionsLine(const RunResult& r) {
  const TrainingSetup& t = r.spec.training;
  std::string text = "microbatch size " + std::to_string(t.microbatch_size);
  if (r.seq_len > 0) text += ", sequence " + std::to_string(r.seq_len);
  if (r.model.empty() || r.spec.costs.any()) {
    text += r.spec.costs_per == CostsPer::kRank ? ", costs per rank (split over its stages)"
                                                : ", costs per virtual stage";
  }
  if (!r.model.empty()) {
    const ParamBytes bytes = RecipeBytes(t);
    std::string recompute(RecomputeName(t.recompute));
    if (t.recompute_modules != 0)
      recompute += " (" + RecomputeModulesName(t.recompute_modules) + ")";
    if (t.recompute_method != RecomputeMethod::kAll) {
      recompute += " (" + std::string(RecomputeMethodName(t.recompute_method)) + " " +
                   std::to_string(t.recompute_num_layers) + ")";
    }
    if (t.offload_modules != 0) recompute += ", offload " + OffloadModulesName(t.offload_modules);
    text += ", " + std::string(DtypeName(t.dtype)) + ", recompute " + recompute +
            ", flash attention " + (t.flash_attention ? "on" : "off") +
            (t.sequence_parallel ? ", sequence parallel" : "") +
            (r.spec.tp_comm_overlap ? ", TP communication overlapped" : "") +
            (t.layout.cp > 1 && t.cp_comm_type != CpCommType::kP2p
                 ? ", CP " + std::string(CpCommTypeName(t.cp_comm_type))
                 : "") +
            ", " + (t.fp32_grads ? "fp32" : "bf16") + " gradients, " +
            std::to_string(bytes.replicated) + "+" + std::to_string(bytes.sharded) +
            " bytes per parameter" + ZeroLabel(t) + ", layers " + LayerList(r.layers_per_stage);
    if (r.spec.efficiency > 0) {
      text += ", " + FormatNumber(r.spec.efficiency) + " of peak";
    } else {
      text += ", per-op model (matmul " + FormatNumber(r.gpu.matmul_efficiency) + ", attention " +
              FormatNumber(r.gpu.attention_efficiency) + ", HBM " +
              FormatNumber(r.gpu.memory_efficiency) + " of peak)";
    }
  }
  if (!r.spec.unitless_durations.empty()) {
    text += ", ";
    for (size_t k = 0; k < r.spec.unitless_durations.size(); ++k) {
      text += (k == 0 ? "" : " and ") + r.spec.unitless_durations[k];
    }
    text += " in seconds (no unit given)";
  }
  if (r.metrics.reserve.fixed_bytes > 0 || r.metrics.reserve.activation_fraction > 0) {
    text += ", reserve " + HumanBytes(static_cast<double>(r.metrics.reserve.fixed_bytes)) + " + " +
            HumanPercent(r.metrics.reserve.activation_fraction) + " of activations";
  }
  // What the model file stated that ppsim ignores or does not model, last.
  for (const std::string& note : r.model_notes) text += "; model: " + note;
  for (const std::string& note : r.spec.import_notes) text += "; " + note;
  return text;
}

// "1.23 M tokens/s", "640 samples/s": the workload's rates for tables.
std::string Rate(double per_s, const char* unit) { return HumanCount(per_s) + " " + unit + "/s"; }

}  // namespace

RunHeadline HeadlineOf(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  RunHeadline h;
  h.makespan_s = m.makespan_s;
  h.bubble_over_makespan = m.bubble_over_makespan;
  h.bubble_over_ideal = m.bubble_over_ideal;
  h.stage_bubble_rate = m.stage_bubble_rate;
  h.samples_per_s = r.samples_per_s;
  if (r.seq_len > 0) h.tokens_per_s = r.tokens_per_s;
  if (!r.model.empty()) h.mfu = r.mfu;
  if (!r.model.empty() && r.hardware_flops > 0) h.hfu = r.hfu;
  if (r.spec.train_tokens > 0) {
    h.time_to_train_s = r.time_to_train_s;
    h.gpu_hours = r.gpu_hours;
    if (r.spec.gpu_hour_cost >= 0) h.cost = r.cost;
  }
  h.peak_memory_bytes = MaxPeakMemory(m);
  h.memory_capacity_bytes = Capacity(m);
  h.oom = m.oom_ranks > 0;
  return h;
}

nlohmann::ordered_json LaunchJson(const FrameworkLaunch& l, const std::string& import_command,
                                  const std::string& file) {
  nlohmann::ordered_json j;
  j["framework"] = std::string(FrameworkName(l.framework));
  j["gpus"] = l.gpus;
  j["text"] = l.text;
  if (!l.schedule_csv.empty()) {
    j["schedule_csv_name"] = l.schedule_csv_name;
    j["schedule_csv"] = l.schedule_csv;
  }
  if (!file.empty()) j["file"] = file;
  j["import_command"] = import_command;
  j["notes"] = l.notes;
  return j;
}

std::string LaunchText(const FrameworkLaunch& l, const std::string& label,
                       const std::string& import_command, const std::string& file) {
  const bool megatron = l.framework == Framework::kMegatron;
  std::string out =
      "\n" +
      std::string(megatron ? "Megatron-LM arguments (pretrain_gpt.py)" : "torchtitan job file") +
      " for " + label + " on " + std::to_string(l.gpus) + " GPUs";
  if (!file.empty()) {
    out += ": written to " + file;
    if (!l.schedule_csv.empty()) out += ", its schedule CSV beside it";
    out += "\n";
  } else {
    out += ":\n" + l.text;
    if (!l.schedule_csv.empty()) {
      out += "\n" + l.schedule_csv_name + " (torch's schedule CSV, beside the job file):\n" +
             l.schedule_csv;
    }
  }
  out += "imported back by: " + import_command + "\n";
  for (const std::string& note : l.notes) out += "note: " + note + "\n";
  return out;
}

namespace {

// Each kind that occurs, in CommKind order (sim/communication.h): the run's largest total and
// exposed time over ranks and the ranks with them; and the exposed times alone.
void AddCommunicationJson(const RunCommunication& c, nlohmann::ordered_json* o) {
  nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
  nlohmann::ordered_json exposed = nlohmann::ordered_json::object();
  for (int k = 0; k < kNumCommKinds; ++k) {
    if (!c.occurs[k]) continue;
    const std::string key(CommKindName(CommKindAt(k)));
    kinds[key]["total_s"] = JsonNumber(c.max[k].total_s);
    kinds[key]["exposed_s"] = JsonNumber(c.max[k].exposed_s);
    kinds[key]["total_rank"] = c.total_rank[k];
    kinds[key]["exposed_rank"] = c.exposed_rank[k];
    exposed[key] = JsonNumber(c.max[k].exposed_s);
  }
  (*o)["communication"] = std::move(kinds);
  (*o)["exposed_s"] = std::move(exposed);
}

nlohmann::ordered_json RankCommunicationJson(const RunCommunication& c, int32_t rank) {
  nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
  for (int k = 0; k < kNumCommKinds; ++k) {
    if (!c.occurs[k] || static_cast<size_t>(rank) >= c.ranks.size()) continue;
    const CommSeconds& s = c.ranks[rank].kinds[k];
    const std::string key(CommKindName(CommKindAt(k)));
    kinds[key]["total_s"] = JsonNumber(s.total_s);
    kinds[key]["exposed_s"] = JsonNumber(s.exposed_s);
  }
  return kinds;
}

// "tp 1.2 s (300 ms exposed), dp ...": the run's largest per rank, or "" without communication.
std::string CommunicationLine(const RunCommunication& c) {
  std::string line;
  for (int k = 0; k < kNumCommKinds; ++k) {
    if (!c.occurs[k]) continue;
    line += (line.empty() ? "" : ", ") + std::string(CommKindName(CommKindAt(k))) + " " +
            HumanDuration(c.max[k].total_s) + " (" + HumanDuration(c.max[k].exposed_s) +
            " exposed)";
  }
  return line.empty() ? line : line + " (busiest rank of each, replica 0)";
}

}  // namespace

nlohmann::ordered_json RunJson(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  const RunHeadline h = HeadlineOf(r);
  nlohmann::ordered_json o;
  o["schedule"] = r.label;
  o["pp"] = r.num_ranks;
  o["stages"] = r.num_stages;
  o["microbatches"] = r.num_microbatches;
  o["platform"] = r.platform;
  o["engine"] = std::string(EngineName(r.spec.engine));
  o["dp"] = r.spec.training.layout.dp;
  o["tp"] = r.spec.training.layout.tp;
  o["cp"] = r.spec.training.layout.cp;
  o["makespan_s"] = JsonNumber(h.makespan_s);
  o["bubble_over_makespan"] = JsonNumber(h.bubble_over_makespan);
  o["bubble_over_ideal"] = JsonNumber(h.bubble_over_ideal);
  o["stage_bubble_rate"] = JsonNumber(h.stage_bubble_rate);
  o["peak_activation_bytes"] = MaxPeak(m);
  o["compute_tasks"] = m.num_compute_tasks;
  o["transfer_tasks"] = m.num_transfer_tasks;
  o["transfer_bytes"] = m.transfer_bytes;
  o["allreduce_tasks"] = m.num_allreduce_tasks;
  o["allreduce_bytes"] = m.allreduce_bytes;
  o["allreduce_tail_s"] = JsonNumber(m.allreduce_tail_s);
  o["p2p_mode"] = std::string(P2pModeName(r.spec.p2p_mode));
  o["p2p_wait_s"] = JsonNumber(m.p2p_wait_s);
  o["optimizer_tasks"] = m.num_optimizer_tasks;
  const bool experts = r.spec.training.layout.ep > 1;  // the expert-parallel fields, with --ep only
  if (experts) {
    o["ep"] = r.spec.training.layout.ep;
    o["alltoall_tasks"] = m.num_alltoall_tasks;
    o["alltoall_bytes"] = m.alltoall_bytes;
  }
  auto traffic = [experts](const TrafficMetrics& t) {
    nlohmann::ordered_json j;
    j["transfers"] = t.transfers;
    j["bytes"] = t.bytes;
    j["time_s"] = JsonNumber(t.time_s);
    if (experts) j["alltoall_bytes"] = t.alltoall_bytes;
    return j;
  };
  o["traffic"]["intra_node"] = traffic(m.intra_node);
  o["traffic"]["inter_node"] = traffic(m.inter_node);
  AddCommunicationJson(m.communication, &o);
  o["peak_memory_bytes"] = h.peak_memory_bytes;
  o["memory_capacity_bytes"] = h.memory_capacity_bytes;
  o["oom"] = h.oom;
  o["oom_ranks"] = m.oom_ranks;
  o["iteration_time_s"] = JsonNumber(m.makespan_s);
  o["gpus"] = r.gpus;
  o["replicas_simulated"] = r.replicas_simulated;
  nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
  for (const CollectiveRow& c : r.collectives) {
    nlohmann::ordered_json j;
    j["stage"] = c.stage;
    j["kind"] = std::string(CollectiveKindName(c.kind));
    j["bytes"] = c.bytes;
    j["members"] = c.members;
    j["members_per_node"] = c.members_per_node;
    j["algorithm"] = std::string(CollectiveAlgorithmName(c.algorithm));
    j["protocol"] = c.protocol;
    j["channels"] = c.channels;
    j["nccl_model_time_s"] = JsonNumber(c.model_time_s);
    if (!c.why.empty()) j["note"] = c.why;
    collectives.push_back(std::move(j));
  }
  o["collectives"] = std::move(collectives);
  o["sequences_per_iteration"] = r.sequences_per_iteration;
  o["samples_per_s"] = JsonNumber(h.samples_per_s);
  if (h.tokens_per_s) o["tokens_per_s"] = JsonNumber(*h.tokens_per_s);
  if (h.mfu) {
    o["model"] = r.model;
    o["model_flops"] = JsonNumber(r.model_flops);
    o["mfu"] = JsonNumber(*h.mfu);
    if (h.hfu) {
      o["hardware_flops"] = JsonNumber(r.hardware_flops);
      o["hfu"] = JsonNumber(*h.hfu);
    }
  }
  if (h.time_to_train_s) {
    o["train_tokens"] = r.spec.train_tokens;
    o["time_to_train_s"] = JsonNumber(*h.time_to_train_s);
    o["gpu_hours"] = JsonNumber(*h.gpu_hours);
    if (h.cost) {
      o["gpu_hour_cost"] = JsonNumber(r.spec.gpu_hour_cost);
      o["cost"] = JsonNumber(*h.cost);
    }
  }
  o["assumptions"] = Assumptions(r);
  o["ranks"] = nlohmann::ordered_json::array();
  for (const RankMetrics& k : m.ranks) {
    nlohmann::ordered_json rank;
    rank["rank"] = k.rank;
    rank["busy_s"] = JsonNumber(k.busy_s);
    rank["span_s"] = JsonNumber(k.span_s);
    rank["idle_in_span_s"] = JsonNumber(k.idle_in_span_s);
    rank["first_start_s"] = JsonNumber(k.first_start_s);
    rank["last_end_s"] = JsonNumber(k.last_end_s);
    rank["p2p_wait_s"] = JsonNumber(k.p2p_wait_s);
    rank["optimizer_s"] = JsonNumber(k.optimizer_s);
    rank["peak_activation_bytes"] = k.peak_activation_bytes;
    rank["peak_activation_time_s"] = JsonNumber(k.peak_activation_time_s);
    rank["static_memory_bytes"] = k.static_memory_bytes;
    rank["reserve_bytes"] = k.reserve_bytes;
    rank["peak_memory_bytes"] = k.peak_memory_bytes;
    rank["memory_capacity_bytes"] = k.memory_capacity_bytes;
    rank["oom"] = k.oom;
    nlohmann::ordered_json memory;
    for (const MemoryPart& part : MemoryParts(k.memory)) memory[part.key] = part.bytes;
    rank["memory"] = std::move(memory);
    rank["communication"] = RankCommunicationJson(m.communication, k.rank);
    o["ranks"].push_back(std::move(rank));
  }
  o["links"] = nlohmann::ordered_json::array();
  for (const LinkMetrics& l : m.links) {
    nlohmann::ordered_json link;
    link["link"] = l.name;
    link["inter_node"] = l.inter_node;
    link["bandwidth_bytes_per_s"] = JsonNumber(l.bandwidth_bytes_per_s);
    link["transfers"] = l.transfers;
    link["bytes"] = l.bytes;
    link["busy_s"] = JsonNumber(l.busy_s);
    link["utilization"] = JsonNumber(l.utilization);
    o["links"].push_back(std::move(link));
  }
  if (r.launch) o["launch"] = LaunchJson(*r.launch, r.import_command, r.spec.emit_file);
  return o;
}

namespace {

const char* kCsvHeader =
    "schedule,pp,stages,microbatches,platform,engine,makespan_s,bubble_over_makespan,"
    "bubble_over_ideal,stage_bubble_rate,peak_activation_bytes,compute_tasks,transfer_tasks,"
    "transfer_bytes,peak_memory_bytes,memory_capacity_bytes,oom_ranks,mfu,hfu,samples_per_s,"
    "tokens_per_s,time_to_train_s,gpu_hours,cost,dp,tp,allreduce_tail_s,intra_node_bytes,"
    "inter_node_bytes,model\n";

// A number, or an empty cell when the run has none.
std::string Optional(bool has, double value) { return has ? FormatNumber(value) : ""; }

std::string CsvRow(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  const bool training = r.spec.train_tokens > 0;
  return CsvField(r.label) + "," + std::to_string(r.num_ranks) + "," +
         std::to_string(r.num_stages) + "," + std::to_string(r.num_microbatches) + "," +
         CsvField(r.platform) + "," + std::string(EngineName(r.spec.engine)) + "," +
         FormatNumber(m.makespan_s) + "," + FormatNumber(m.bubble_over_makespan) + "," +
         FormatNumber(m.bubble_over_ideal) + "," + FormatNumber(m.stage_bubble_rate) + "," +
         std::to_string(MaxPeak(m)) + "," + std::to_string(m.num_compute_tasks) + "," +
         std::to_string(m.num_transfer_tasks) + "," + std::to_string(m.transfer_bytes) + "," +
         std::to_string(MaxPeakMemory(m)) + "," + std::to_string(Capacity(m)) + "," +
         std::to_string(m.oom_ranks) + "," + Optional(!r.model.empty(), r.mfu) + "," +
         Optional(r.hardware_flops > 0, r.hfu) + "," + FormatNumber(r.samples_per_s) + "," +
         Optional(r.seq_len > 0, r.tokens_per_s) + "," + Optional(training, r.time_to_train_s) +
         "," + Optional(training, r.gpu_hours) + "," +
         Optional(training && r.spec.gpu_hour_cost >= 0, r.cost) + "," +
         std::to_string(r.spec.training.layout.dp) + "," +
         std::to_string(r.spec.training.layout.tp) + "," + FormatNumber(m.allreduce_tail_s) + "," +
         std::to_string(m.intra_node.bytes) + "," + std::to_string(m.inter_node.bytes) + "," +
         CsvField(r.model) + "\n";
}

}  // namespace

std::string FormatColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

namespace {

// The table's collectives line: "tree/LL128 all-reduce x 3, ring/Simple all-reduce x 29 (128 GPUs
// per collective, ...)". REQUIRES: r.collectives is not empty.
std::string CollectivesLine(const RunResult& r) {
  std::vector<std::pair<std::string, int>> kinds;
  for (const CollectiveRow& c : r.collectives) {
    std::string name = std::string(CollectiveAlgorithmName(c.algorithm)) +
                       (c.protocol.empty() ? "" : "/" + c.protocol) + " " +
                       std::string(CollectiveKindName(c.kind));
    auto it =
        std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == name; });
    if (it == kinds.end()) {
      kinds.push_back({name, 1});
    } else {
      ++it->second;
    }
  }
  std::string text;
  for (const auto& [name, count] : kinds) {
    text += (text.empty() ? "" : ", ") + name + " x " + std::to_string(count);
  }
  const CollectiveRow& first = r.collectives.front();
  if (first.why == "HSDP") {
    // The shard groups' reduce-scatters and gathers, the replicas' all-reduce (CollectiveRow).
    const auto replicas =
        std::find_if(r.collectives.begin(), r.collectives.end(),
                     [](const auto& c) { return c.kind == CollectiveKind::kAllReduce; });
    const int32_t groups = replicas == r.collectives.end() ? 1 : replicas->members;
    return text + " (HSDP: " +
           std::to_string(first.kind == CollectiveKind::kAllReduce ? 1 : first.members) +
           " GPUs per shard group, " + std::to_string(groups) + " groups; rings)";
  }
  text += " (" + std::to_string(first.members) + " GPUs per collective";
  if (first.members_per_node > 0) {
    text += ", " + std::to_string(first.members_per_node) + " per node";
  }
  bool modelled = false;  // NCCL's model chose at least one
  for (const CollectiveRow& c : r.collectives) modelled = modelled || !c.protocol.empty();
  text += r.spec.collective_algorithm ? "; forced)"
          : modelled                  ? "; NCCL 2.23's choice)"
                                      : "; rings: " + first.why + ")";
  return text;
}

std::string SingleTable(const RunResult& r) {
  const RunMetrics& m = r.metrics;
  std::string out = r.label + ": " + Plural(r.num_ranks, "rank") + ", " +
                    Plural(r.num_stages, "stage") + ", " +
                    Plural(r.num_microbatches, "microbatch", "microbatches") + " on " + r.platform +
                    " (" + std::string(EngineName(r.spec.engine)) + " engine)\n";
  std::vector<std::vector<std::string>> summary = {
      {"makespan", HumanDuration(m.makespan_s)},
      {"bubble / makespan", HumanPercent(m.bubble_over_makespan)},
      {"bubble / ideal", HumanPercent(m.bubble_over_ideal)},
      {"stage bubble rate", HumanPercent(m.stage_bubble_rate)},
      {"tasks", std::to_string(m.num_compute_tasks) + " compute, " +
                    std::to_string(m.num_transfer_tasks) + " transfers (" +
                    HumanBytes(static_cast<double>(m.transfer_bytes)) + ")"},
  };
  if (r.replicas_simulated < r.spec.training.layout.dp) {
    summary.back()[1] +=
        "; replica 0 simulated for all " + std::to_string(r.spec.training.layout.dp) +
        " (its tasks and traffic here; " + r.spec.where->Name("replicas") + " all simulates each)";
  }
  std::string throughput = Rate(r.samples_per_s, "samples");
  if (r.seq_len > 0) throughput += ", " + Rate(r.tokens_per_s, "tokens");
  summary.push_back({"throughput", throughput + " (" + std::to_string(r.sequences_per_iteration) +
                                       " sequences per iteration)"});
  if (!r.model.empty()) {
    summary.push_back({"model", r.model + ", " + HumanFlops(r.model_flops) +
                                    " per iteration, MFU " + HumanPercent(r.mfu) +
                                    (r.hardware_flops > 0 ? ", HFU " + HumanPercent(r.hfu) : "")});
  }
  if (r.spec.train_tokens > 0) {
    std::string training = HumanCount(static_cast<double>(r.spec.train_tokens)) + " tokens in " +
                           HumanDuration(r.time_to_train_s) + ", " + HumanCount(r.gpu_hours) +
                           " GPU-hours";
    if (r.spec.gpu_hour_cost >= 0) training += ", cost " + HumanCount(r.cost);
    summary.push_back({"training", training});
  }
  summary.push_back({"assumed", AssumptionsLine(r)});
  const int32_t dp = r.spec.training.layout.dp;
  const int32_t tp = r.spec.training.layout.tp;
  const int32_t cp = r.spec.training.layout.cp;
  if (dp > 1 || tp > 1 || cp > 1) {
    summary.push_back({"parallelism", "dp " + std::to_string(dp) + " x pp " +
                                          std::to_string(r.num_ranks) + " x tp " +
                                          std::to_string(tp) +
                                          (cp > 1 ? " x cp " + std::to_string(cp) : "") + " = " +
                                          std::to_string(dp * r.num_ranks * tp * cp) + " GPUs"});
  }
  if (r.spec.p2p_mode != P2pMode::kEager) {
    summary.push_back({"p2p calls", std::string(P2pModeName(r.spec.p2p_mode)) + ": " +
                                        std::to_string(m.num_wait_tasks) + " waits, " +
                                        HumanDuration(m.p2p_wait_s) +
                                        " blocked in them (all ranks)"});
  }
  if (!r.collectives.empty()) summary.push_back({"collectives", CollectivesLine(r)});
  if (m.num_allreduce_tasks > 0) {
    summary.push_back({"all-reduce", std::to_string(m.num_allreduce_tasks) + " steps (" +
                                         HumanBytes(static_cast<double>(m.allreduce_bytes)) +
                                         "), ends " + HumanDuration(m.allreduce_tail_s) +
                                         " after the last compute"});
  }
  if (m.num_alltoall_tasks > 0) {
    summary.push_back({"all-to-all", std::to_string(m.num_alltoall_tasks) + " calls (ep " +
                                         std::to_string(r.spec.training.layout.ep) + ", " +
                                         HumanBytes(static_cast<double>(m.alltoall_bytes)) +
                                         " sent)"});
  }
  if (const std::string line = CommunicationLine(m.communication); !line.empty()) {
    summary.push_back({"communication", line});
  }
  if (m.intra_node.transfers + m.inter_node.transfers > 0) {
    auto traffic = [](const TrafficMetrics& t) {
      return std::to_string(t.transfers) + " transfers, " +
             HumanBytes(static_cast<double>(t.bytes));
    };
    summary.push_back({"traffic", "intra-node " + traffic(m.intra_node) + "; inter-node " +
                                      traffic(m.inter_node)});
  }
  AddPeakMemoryLine(m, &summary);
  if (m.oom_ranks > 0) {
    summary.push_back({"out of memory", std::to_string(m.oom_ranks) + " of " +
                                            std::to_string(m.ranks.size()) + " ranks"});
  }
  out += FormatColumns(summary);
  bool reserved = false;
  for (const RankMetrics& k : m.ranks) reserved = reserved || k.reserve_bytes > 0;
  std::vector<std::vector<std::string>> rows = {
      {"rank", "busy", "span", "idle in span", "peak activation", "static", "peak memory"}};
  if (reserved) rows[0].insert(rows[0].end() - 1, "reserve");
  for (const RankMetrics& k : m.ranks) {
    rows.push_back({std::to_string(k.rank), HumanDuration(k.busy_s), HumanDuration(k.span_s),
                    HumanDuration(k.idle_in_span_s),
                    HumanBytes(static_cast<double>(k.peak_activation_bytes)),
                    HumanBytes(static_cast<double>(k.static_memory_bytes)), MemoryOf(k)});
    if (reserved) {
      rows.back().insert(rows.back().end() - 1, HumanBytes(static_cast<double>(k.reserve_bytes)));
    }
  }
  out += "\n" + FormatColumns(rows);
  if (!m.links.empty()) {
    // The busiest links: longest busy time first, then most bytes, then platform order.
    std::vector<const LinkMetrics*> links;
    for (const LinkMetrics& l : m.links) links.push_back(&l);
    std::stable_sort(links.begin(), links.end(), [](const LinkMetrics* a, const LinkMetrics* b) {
      return a->busy_s != b->busy_s ? a->busy_s > b->busy_s : a->bytes > b->bytes;
    });
    constexpr size_t kShown = 5;
    std::vector<std::vector<std::string>> link_rows = {
        {"busiest links", "transfers", "bytes", "busy", "busy/makespan", "utilization"}};
    for (size_t i = 0; i < links.size() && i < kShown; ++i) {
      const LinkMetrics& l = *links[i];
      link_rows.push_back({l.name, std::to_string(l.transfers),
                           HumanBytes(static_cast<double>(l.bytes)), HumanDuration(l.busy_s),
                           HumanPercent(m.makespan_s > 0 ? l.busy_s / m.makespan_s : 0),
                           HumanPercent(l.utilization)});
    }
    out += "\n" + FormatColumns(link_rows);
    if (links.size() > kShown) {
      out += "(" + std::to_string(links.size() - kShown) + " more links in " +
             r.spec.where->Name("format") + " json)\n";
    }
  }
  return out;
}

std::string ComparisonTable(const std::vector<RunResult>& results) {
  struct Column {
    const char* header;
    bool (*applies)(const RunResult&);  // shown when it applies to any run; "-" where not
    std::string (*cell)(const RunResult&);
  };
  static constexpr auto always = [](const RunResult&) { return true; };
  static const Column kColumns[] = {
      {"schedule", always, [](const RunResult& r) { return r.label; }},
      {"ranks", always, [](const RunResult& r) { return std::to_string(r.num_ranks); }},
      {"microbatches", always,
       [](const RunResult& r) { return std::to_string(r.num_microbatches); }},
      {"makespan", always, [](const RunResult& r) { return HumanDuration(r.metrics.makespan_s); }},
      {"samples/s", always, [](const RunResult& r) { return HumanCount(r.samples_per_s); }},
      {"tokens/s", [](const RunResult& r) { return r.seq_len > 0; },
       [](const RunResult& r) { return HumanCount(r.tokens_per_s); }},
      {"MFU", [](const RunResult& r) { return !r.model.empty(); },
       [](const RunResult& r) { return HumanPercent(r.mfu); }},
      {"HFU", [](const RunResult& r) { return r.hardware_flops > 0; },
       [](const RunResult& r) { return HumanPercent(r.hfu); }},
      {"bubble/makespan", always,
       [](const RunResult& r) { return HumanPercent(r.metrics.bubble_over_makespan); }},
      {"bubble/ideal", always,
       [](const RunResult& r) { return HumanPercent(r.metrics.bubble_over_ideal); }},
      {"stage bubble", always,
       [](const RunResult& r) { return HumanPercent(r.metrics.stage_bubble_rate); }},
      {"peak activation", always,
       [](const RunResult& r) { return HumanBytes(static_cast<double>(MaxPeak(r.metrics))); }},
      {"peak memory", always,
       [](const RunResult& r) {
         return HumanBytes(static_cast<double>(MaxPeakMemory(r.metrics))) +
                (r.metrics.oom_ranks > 0 ? "  OOM" : "");
       }},
      {"OOM ranks", always, [](const RunResult& r) { return std::to_string(r.metrics.oom_ranks); }},
      {"time to train", [](const RunResult& r) { return r.time_to_train_s > 0; },
       [](const RunResult& r) { return HumanDuration(r.time_to_train_s); }},
      {"GPU-hours", [](const RunResult& r) { return r.time_to_train_s > 0; },
       [](const RunResult& r) { return HumanCount(r.gpu_hours); }},
      {"cost",
       [](const RunResult& r) { return r.time_to_train_s > 0 && r.spec.gpu_hour_cost >= 0; },
       [](const RunResult& r) { return HumanCount(r.cost); }},
  };
  std::vector<const Column*> shown;
  for (const Column& column : kColumns) {
    for (const RunResult& r : results) {
      if (column.applies(r)) {
        shown.push_back(&column);
        break;
      }
    }
  }
  std::vector<std::vector<std::string>> rows(1);
  for (const Column* column : shown) rows[0].push_back(column->header);
  for (const RunResult& r : results) {
    rows.emplace_back();
    for (const Column* column : shown) {
      rows.back().push_back(column->applies(r) ? column->cell(r) : "-");
    }
  }
  return FormatColumns(rows);
}

}  // namespace

Status ParseOutputFormat(std::string_view what, std::string_view text, OutputFormat* format) {
  return ParseNamed(kFormatNames, "format", what, text, format);
}

std::string FormatResults(const std::vector<RunResult>& results, OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable: {
      std::string out = results.size() == 1 ? SingleTable(results[0]) : ComparisonTable(results);
      for (const RunResult& r : results) {
        if (r.launch) out += LaunchText(*r.launch, r.label, r.import_command, r.spec.emit_file);
      }
      return out;
    }
    case OutputFormat::kJson: {
      if (results.size() == 1) return FormatJsonPretty(RunJson(results[0])) + "\n";
      std::string out = "[";
      for (size_t i = 0; i < results.size(); ++i) {
        out += (i ? ",\n" : "\n") + FormatJsonPretty(RunJson(results[i]));
      }
      return out + "\n]\n";
    }
    case OutputFormat::kCsv: {
      std::string out = kCsvHeader;
      for (const RunResult& r : results) out += CsvRow(r);
      return out;
    }
  }
  return "";
}

std::string FormatResultJsonLine(const RunResult& result) {
  return FormatJsonCompact(RunJson(result));
}

std::string OutOfMemoryReport(const std::vector<RunResult>& results) {
  std::string oom;
  for (const RunResult& r : results) {
    for (const RankMetrics& k : r.metrics.ranks) {
      if (!k.oom) continue;
      oom += std::string(oom.empty() ? "" : "; ") + r.label + " rank " + std::to_string(k.rank) +
             " needs " + HumanBytes(static_cast<double>(k.peak_memory_bytes)) + " of " +
             HumanBytes(static_cast<double>(k.memory_capacity_bytes));
    }
  }
  return oom.empty() ? "" : "out of memory: " + oom;
}

}  // namespace ppsim
