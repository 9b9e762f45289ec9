#include "schedules/registry.h"

#include "base/escape.h"
#include "base/names.h"

namespace ppsim {

Status ScheduleParamError(const ScheduleParams& params, std::string_view field,
                          const std::string& what) {
  return params.where != nullptr ? params.where->Invalid(field, what) : Status::InvalidInput(what);
}

const std::vector<ScheduleInfo>& AllSchedules() {
  static const std::vector<ScheduleInfo> kSchedules = {
      {"GPipe", "all forwards, then all backwards (Huang et al. 2019; torch ScheduleGPipe)",
       &GenerateGPipe, /*needs_costs=*/false, /*alias_of=*/{}},
      {"1F1B", "warmup forwards, then one forward one backward (PipeDream-Flush, Megatron-LM)",
       &GenerateOneFOneB, /*needs_costs=*/false, /*alias_of=*/{}},
      {"Interleaved1F1B", "interleaved 1F1B over v chunks per rank (torch ScheduleInterleaved1F1B)",
       &GenerateInterleaved1F1B, /*needs_costs=*/false, /*alias_of=*/{},
       /*any_stages_per_rank=*/true},
      {"LoopedBFS", "breadth-first over v chunks per rank (torch ScheduleLoopedBFS)",
       &GenerateLoopedBFS, /*needs_costs=*/false, /*alias_of=*/{},
       /*any_stages_per_rank=*/true},
      {"InterleavedZeroBubble",
       "interleaved 1F1B with split I/W backward (torch ScheduleInterleavedZeroBubble)",
       &GenerateInterleavedZeroBubble, /*needs_costs=*/false, /*alias_of=*/{},
       /*any_stages_per_rank=*/true},
      {"ZBVZeroBubble", "zero-bubble V, 2 chunks per rank (torch ScheduleZBVZeroBubble)",
       &GenerateZBVZeroBubble, /*needs_costs=*/false, /*alias_of=*/{}},
      {"DualPipeV",
       "DualPipe cut in half: V placement with overlapped F&B (torch ScheduleDualPipeV)",
       &GenerateDualPipeV, /*needs_costs=*/false, /*alias_of=*/{}},
      {"Megatron-Interleaved",
       "Megatron-LM interleaved 1F1B with microbatch groups ({microbatch_group_size})",
       &GenerateMegatronInterleaved, /*needs_costs=*/false, /*alias_of=*/{},
       /*any_stages_per_rank=*/true},
      {"ZB-H1", "zero bubble, handcrafted H1: 1F1B memory, W delayed (Qi et al. 2024)",
       &GenerateZBH1, /*needs_costs=*/false, /*alias_of=*/{}},
      {"ZB-H2", "zero bubble, handcrafted H2: longer warmup, no bubble (Qi et al. 2024)",
       &GenerateZBH2, /*needs_costs=*/false, /*alias_of=*/{}},
      {"ZB-1p", "zero bubble, found by the paper's heuristic within p x M_B of activations",
       &GenerateZB1p, /*needs_costs=*/true, /*alias_of=*/{}},
      {"ZB-2p", "zero bubble, found by the paper's heuristic within 2p x M_B of activations",
       &GenerateZB2p, /*needs_costs=*/true, /*alias_of=*/{}},
      {"ZB-auto",
       "zero bubble, found by the paper's heuristic within {memory_limit} (default: what fits)",
       &GenerateZBAuto, /*needs_costs=*/true, /*alias_of=*/{}},
      {"ZB-V", "zero bubble, handcrafted V (Qi et al. 2024); alias of ZBVZeroBubble, same order",
       &GenerateZBV, /*needs_costs=*/false, /*alias_of=*/"ZBVZeroBubble"},
      {"V-Half", "controllable-memory V: 1/2 of 1F1B's activations (Qi et al., arXiv 2405.15362)",
       &GenerateVHalf, /*needs_costs=*/false, /*alias_of=*/{}},
      {"V-Min", "controllable-memory V: 1/3 of 1F1B's activations (Qi et al., arXiv 2405.15362)",
       &GenerateVMin, /*needs_costs=*/false, /*alias_of=*/{}},
      {"DualPipe", "DeepSeek DualPipe: two model copies, microbatches from both ends",
       &GenerateDualPipe, /*needs_costs=*/false, /*alias_of=*/{}},
  };
  return kSchedules;
}

std::string ScheduleNames() {
  std::string names;
  for (const ScheduleInfo& info : AllSchedules()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

const ScheduleInfo* FindSchedule(std::string_view name) {
  for (const ScheduleInfo& info : AllSchedules()) {
    if (EqualsIgnoringCase(info.name, name)) return &info;
  }
  return nullptr;
}

Status GenerateSchedule(std::string_view name, const ScheduleParams& params, Schedule* schedule) {
  const ScheduleInfo* info = FindSchedule(name);
  if (info == nullptr) {
    return Status::InvalidInput("unknown schedule " + Quoted(name) + "; valid: " + ScheduleNames());
  }
  if (params.moe_a2a_overlap && info->name != "1F1B" && info->name != "Megatron-Interleaved") {
    return ScheduleParamError(params, "overlap_moe_expert_parallel_comm",
                              "Megatron-LM's combined 1F1B runs with its interleaved schedule "
                              "(or without pipelining); got " +
                                  std::string(info->name) +
                                  "; valid: Megatron-Interleaved, or 1F1B with pp 1");
  }
  // The last schedule generated from its parameters alone, kept: a search asks for the same
  // order for many candidates in a row (the V-Half and V-Min orders take up to a second).
  struct Last {
    const ScheduleInfo* info = nullptr;
    ScheduleParams params;
    Schedule schedule;
  };
  thread_local Last last;
  ScheduleParams shape = params;
  shape.stage_costs = nullptr;
  if (last.info == info && !info->needs_costs && last.params == shape) {
    *schedule = last.schedule;
    return Status();
  }
  Status status = info->generate(params, schedule);
  if (status.ok()) status = CheckSchedule(*schedule);
  constexpr size_t kMostActionsKept = 1 << 20;  // 12 MB
  if (!status.ok() || info->needs_costs || schedule->NumActions() > kMostActionsKept) {
    return status;
  }
  last = {info, shape, *schedule};
  return Status();
}

}  // namespace ppsim
