#include "models/stage_costs.h"

#include "models/units.h"

namespace ppsim {

double StageCosts::OpDuration(const Op& op) const {
  const int32_t s = op.stage.value();
  switch (op.kind) {
    case OpKind::kForward: return forward_s[s];
    case OpKind::kBackwardInput: return backward_input_s[s];
    case OpKind::kBackwardWeight: return backward_weight_s[s];
    case OpKind::kBackward: return backward_s[s];
  }
  return 0;
}

double StageCosts::ActionDuration(const Action& action) const {
  if (!action.is_overlap()) return OpDuration(action.op(0));
  if (!overlap_s.empty()) return overlap_s[action.op(0).stage.value()];
  return OpDuration(action.op(0)) + OpDuration(action.op(1));
}

Status BuildStageCosts(const CostText& text, int32_t num_stages, StageCosts* costs) {
  *costs = StageCosts();
  if (text.forward.empty()) {
    return Status::InvalidInput(
        "--f: required; give the forward time of each virtual stage, e.g. --f 1.2ms");
  }
  Status status = ParseDurationList("--f", text.forward, num_stages, &costs->forward_s);
  if (!status.ok()) return status;

  const bool has_i = !text.backward_input.empty();
  const bool has_w = !text.backward_weight.empty();
  if (has_i != has_w) {
    return Status::InvalidInput(std::string(has_i ? "--i" : "--w") + ": given without " +
                                (has_i ? "--w" : "--i") +
                                "; a split backward needs both --i and --w");
  }
  if (has_i) {
    status = ParseDurationList("--i", text.backward_input, num_stages, &costs->backward_input_s);
    if (!status.ok()) return status;
    status = ParseDurationList("--w", text.backward_weight, num_stages, &costs->backward_weight_s);
    if (!status.ok()) return status;
  }
  if (!text.backward.empty()) {
    status = ParseDurationList("--b", text.backward, num_stages, &costs->backward_s);
    if (!status.ok()) return status;
  } else if (has_i) {
    for (int32_t s = 0; s < num_stages; ++s) {
      costs->backward_s.push_back(costs->backward_input_s[s] + costs->backward_weight_s[s]);
    }
  } else {
    return Status::InvalidInput(
        "--b: required; give the full backward time (--b) or its two parts (--i and --w)");
  }
  if (!text.overlap.empty()) {
    status = ParseDurationList("--overlap", text.overlap, num_stages, &costs->overlap_s);
    if (!status.ok()) return status;
  }

  auto sizes = [&](const char* flag, const std::string& value, std::vector<int64_t>* out) {
    return ParseSizeList(flag, value.empty() ? "0" : value, num_stages, out);
  };
  if (!(status = sizes("--activation", text.activation, &costs->activation_bytes)).ok()) {
    return status;
  }
  if (!(status = sizes("--activation-w", text.activation_w, &costs->activation_w_bytes)).ok()) {
    return status;
  }
  if (!(status = sizes("--message-bytes", text.message, &costs->message_bytes)).ok()) {
    return status;
  }
  for (int32_t s = 0; s < num_stages; ++s) {
    if (costs->activation_w_bytes[s] > costs->activation_bytes[s]) {
      return Status::InvalidInput(
          "--activation-w: " + std::to_string(costs->activation_w_bytes[s]) +
          " bytes at stage " + std::to_string(s) + " exceed --activation (" +
          std::to_string(costs->activation_bytes[s]) +
          " bytes); M_W is the part of M_B held from I until W");
    }
  }
  return Status();
}

Status CheckCostsCoverSchedule(const StageCosts& costs, const Schedule& schedule) {
  if (costs.num_stages() != schedule.num_stages) {
    return Status::InvalidInput("costs: " + std::to_string(costs.num_stages()) +
                                " virtual stages of costs for a schedule of " +
                                std::to_string(schedule.num_stages) + " stages");
  }
  if (costs.has_split_backward()) return Status();
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    for (size_t index = 0; index < order.size(); ++index) {
      const OpKind kind = order[index].op(0).kind;
      if (kind == OpKind::kBackwardInput || kind == OpKind::kBackwardWeight) {
        return Status::InvalidInput(
            "--i/--w: the schedule splits the backward into I and W (first at " +
            DescribeActionAt(rank, index, order[index]) +
            "); give --i and --w, not only --b");
      }
    }
  }
  return Status();
}

}  // namespace ppsim
