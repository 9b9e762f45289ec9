// What every schedule generator takes, and the generators this library has.
#ifndef PPSIM_SCHEDULES_GENERATOR_H_
#define PPSIM_SCHEDULES_GENERATOR_H_

#include <cstdint>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "schedules/schedule.h"

namespace ppsim {

struct ZeroBubbleStage;  // schedules/zb_auto.h

struct ScheduleParams {
  int32_t num_ranks = 1;         // p, pipeline ranks.
  int32_t stages_per_rank = 0;   // v, virtual stages (model chunks) per rank; 0: the schedule's default.
  int32_t num_microbatches = 1;  // m.
  int32_t microbatch_group_size = 0;  // Megatron-Interleaved's g; 0: p. Others ignore it.
  // Megatron-LM's --overlap-moe-expert-parallel-comm (combined 1F1B): Megatron-Interleaved warms
  // up with one more forward and pairs its steady state's forward and backward as OVERLAP_F_B
  // actions; 1F1B with one rank (Megatron's forward_backward_no_pipelining) runs F0, (F(i+1);
  // B(i)) pairs, B(m-1). Every other schedule refuses it.
  bool moe_a2a_overlap = false;
  // What the schedules found from costs (ZB-1p, ZB-2p, ZB-auto; ScheduleInfo::needs_costs) know
  // of each stage; the others ignore it. Not owned; null: not known (those schedules refuse).
  const std::vector<ZeroBubbleStage>* stage_costs = nullptr;
  // Where the request wrote the parameters, for messages (base/locator.h): generators name a
  // parameter as the request does (pp, microbatches, stages_per_rank, microbatch_group_size,
  // schedule). Not owned; null: messages name no place.
  const Locator* where = nullptr;

  friend bool operator==(const ScheduleParams&, const ScheduleParams&) = default;
};

// Generators check their own rules (ranks, microbatches, stages per rank) and return InvalidInput
// where the parameter was written, naming the rule: "--microbatches: Interleaved1F1B needs
// microbatches to be a multiple of rounds = ...". This builds that message: "WHERE: what" at
// `field` of params.where, or "what" without a Locator.
Status ScheduleParamError(const ScheduleParams& params, std::string_view field,
                          const std::string& what);

// GPipe (Huang et al., 2019; torch.distributed.pipelining.ScheduleGPipe): every rank runs all
// forwards, then all backwards, both in microbatch order. One stage per rank.
Status GenerateGPipe(const ScheduleParams& params, Schedule* schedule);

// 1F1B (PipeDream-Flush, Narayanan et al., 2021; Megatron-LM's non-interleaved schedule): rank r
// runs k = min(p - r, m) forwards, then alternates B(i), F(k + i) while forwards remain, then the
// remaining backwards. Any m >= 1 is accepted (with m < p the warmup is simply shorter). One stage
// per rank. Not torch's Schedule1F1B.pipeline_order, which skips a forward on the last rank.
Status GenerateOneFOneB(const ScheduleParams& params, Schedule* schedule);

// torch.distributed.pipelining's multi-stage schedules (pytorch/pytorch
// torch/distributed/pipelining/schedules.py). Stage s on rank s % p ("loop" style); default v = 2.
Status GenerateInterleaved1F1B(const ScheduleParams& params, Schedule* schedule);
Status GenerateLoopedBFS(const ScheduleParams& params, Schedule* schedule);
Status GenerateInterleavedZeroBubble(const ScheduleParams& params, Schedule* schedule);

// torch's V schedules: exactly 2 stages per rank, rank r holds stages r and 2p - 1 - r.
Status GenerateZBVZeroBubble(const ScheduleParams& params, Schedule* schedule);
Status GenerateDualPipeV(const ScheduleParams& params, Schedule* schedule);

// Zero bubble (sail-sg/zero-bubble-pipeline-parallelism, arXiv 2401.10241): the handcrafted
// ZB-H1 and ZB-H2 (one stage per rank), and ZB-V, the authors' handcrafted V, whose order is
// torch's ZBVZeroBubble's for every configuration (an alias; messages name ZB-V).
Status GenerateZBH1(const ScheduleParams& params, Schedule* schedule);
Status GenerateZBH2(const ScheduleParams& params, Schedule* schedule);
Status GenerateZBV(const ScheduleParams& params, Schedule* schedule);

// Zero bubble's automatic scheduler (schedules/zb_auto.h) over params.stage_costs: ZB-1p and
// ZB-2p with each stage's limit set to p x M_B and 2p x M_B (the paper's), ZB-auto with the
// limits given.
Status GenerateZB1p(const ScheduleParams& params, Schedule* schedule);
Status GenerateZB2p(const ScheduleParams& params, Schedule* schedule);
Status GenerateZBAuto(const ScheduleParams& params, Schedule* schedule);

// Pipeline Parallelism with Controllable Memory (Qi, Wan, Amar, Lin, NeurIPS 2024, arXiv
// 2405.15362): V-Half and V-Min, V schedules built from a repeated building block whose lifespan
// holds each rank's live activations to about 1/2 and 1/3 of 1F1B's ((p + 2) / 2 and (p + 4) / 3
// microbatches of a rank's share, rounded down, when M_W = M_B), then squeezed and greedily
// reordered. The order is the authors' (sail-sg/zero-bubble-pipeline-parallelism, tag
// zero-bubble-v0.1.0, megatron/core/pipeline_parallel/v_schedule_greedy.py,
// PipelineGraph(p, m, "half" | "min", 1000, 1000, 1000, 1).get_schedule()), which does not depend
// on the costs. V placement (v_shape.h); any p >= 1 and m >= 1, as the reference.
Status GenerateVHalf(const ScheduleParams& params, Schedule* schedule);
Status GenerateVMin(const ScheduleParams& params, Schedule* schedule);

// Megatron-LM's interleaved 1F1B with microbatch groups of g (default p, g in [p, m]).
Status GenerateMegatronInterleaved(const ScheduleParams& params, Schedule* schedule);

// DeepSeek's DualPipe (deepseek-ai/DualPipe): two model copies in opposite directions.
Status GenerateDualPipe(const ScheduleParams& params, Schedule* schedule);

}  // namespace ppsim

#endif  // PPSIM_SCHEDULES_GENERATOR_H_
