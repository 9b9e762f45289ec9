#include "models/stage_costs.h"

#include <type_traits>
#include <utility>

#include "base/names.h"
#include "config/units.h"
#include "models/profile.h"

namespace ppsim {

double StageCosts::OpDuration(const Op& op) const {
  const int32_t s = op.stage.value();
  switch (op.kind) {
    case OpKind::kForward:
      return forward_s[s];
    case OpKind::kBackwardInput:
      return backward_input_s[s];
    case OpKind::kBackwardWeight:
      return backward_weight_s[s];
    case OpKind::kBackward:
      return backward_s[s];
  }
  return 0;
}

double StageCosts::ActionDuration(const Action& action) const {
  if (!action.is_overlap()) return OpDuration(action.op(0));
  if (!overlap_s.empty()) return overlap_s[action.op(0).stage.value()];
  return OpDuration(action.op(0)) + OpDuration(action.op(1));
}

StageCosts::Collectives StageCosts::ActionCollectives(const Action& action) const {
  Collectives sum;
  for (int k = 0; k < action.num_ops(); ++k) {
    const Op& op = action.op(k);
    const size_t stage = op.stage.value();
    const bool forward = op.kind == OpKind::kForward;
    if (!forward && op.kind != OpKind::kBackward && op.kind != OpKind::kBackwardInput) continue;
    if (!tp_step_bytes.empty()) {
      const int64_t steps = forward ? tp_forward_steps[stage] : tp_backward_steps[stage];
      sum.steps += steps;
      sum.bytes += steps * tp_step_bytes[stage];
    }
    if (!cp_forward_bytes.empty()) {
      sum.cp_bytes += forward ? cp_forward_bytes[stage] : cp_backward_bytes[stage];
    }
    if (!cp_a2a_forward_bytes.empty()) {
      sum.cp_a2a_bytes += forward ? cp_a2a_forward_bytes[stage] : cp_a2a_backward_bytes[stage];
    }
  }
  return sum;
}

namespace {

constexpr NamedValue<CostsPer> kCostsPer[] = {
    {"rank", CostsPer::kRank},
    {"virtual-stage", CostsPer::kVirtualStage},
};

// A rank's value over its `split` stages: durations exactly, bytes in whole bytes (the first
// `value mod split` stages one byte more).
double ShareOf(double value, int32_t split, int32_t) { return value / split; }
int64_t ShareOf(int64_t value, int32_t split, int32_t index) {
  return value / split + (index < value % split ? 1 : 0);
}

// One field: the request's list when given, else the profile's column, else unset. A list holds
// one value for all, or one per rank (with `shares`) or per virtual stage. With `shares` each
// stage gets its share of its rank's value, or with `split` false the rank's whole value.
template <class T>
Status Resolve(std::string_view field, const std::vector<T>& given, const Profile* profile,
               std::vector<T> CostValues::*column, int32_t num_stages, const Locator& where,
               const RankShares* shares, bool split, std::vector<T>* out) {
  out->clear();
  const std::vector<T>* values = &given;
  if (given.empty()) {
    if (profile == nullptr || (profile->values.*column).empty()) return Status();
    values = &(profile->values.*column);
  }
  const int32_t units = shares == nullptr ? num_stages : shares->num_ranks;
  if (values->size() != 1 && static_cast<int32_t>(values->size()) != units) {
    // A profile's rows are checked before this.
    if (shares == nullptr) {
      return where.Invalid(field, std::to_string(values->size()) + " values for " +
                                      std::to_string(num_stages) +
                                      " virtual stages; give one value for all stages or exactly " +
                                      std::to_string(num_stages) + ", comma-separated");
    }
    return where.Invalid(
        field, std::to_string(values->size()) + " values for " + std::to_string(units) +
                   " ranks; give one value for all ranks or exactly " + std::to_string(units) +
                   ", comma-separated (or " + where.Name("costs_per") +
                   " virtual-stage and one per virtual stage)");
  }
  for (int32_t s = 0; s < num_stages; ++s) {
    if (shares == nullptr) {
      out->push_back((*values)[values->size() == 1 ? 0 : s]);
      continue;
    }
    const T value = (*values)[values->size() == 1 ? 0 : shares->share[s]];
    out->push_back(split ? ShareOf(value, shares->split[s], shares->index[s]) : value);
  }
  return Status();
}

// InvalidInput when the profile has neither one row nor one per stage (or rank share).
Status CheckProfileRows(const Profile& profile, int32_t num_stages, const RankShares* shares,
                        const Locator& where) {
  const int32_t units = shares == nullptr ? num_stages : shares->num_ranks;
  if (profile.num_rows == 1 || profile.num_rows == units) return Status();
  return Status::InvalidInput(
      profile.source + ": " + std::to_string(profile.num_rows) + " stages in the profile " +
      (shares == nullptr
           ? "for " + std::to_string(num_stages) +
                 " virtual stages; give one per virtual stage or one for all"
           : "for " + std::to_string(units) + " ranks; give one per rank or one for all (or " +
                 where.Name("costs_per") + " virtual-stage and one per virtual stage)"));
}

// F is there, and B or both I and W (B defaults to I + W); M_W <= M_B.
Status CompleteDurations(const Profile* profile, bool per_share, const Locator& where,
                         StageCosts* costs) {
  const std::string from_profile = profile == nullptr ? "" : " (or in " + profile->source + ")";
  if (costs->forward_s.empty()) {
    return where.Invalid(
        "f", std::string("required; give the forward time of ") +
                 (per_share ? "one rank's share of the model" : "each virtual stage") + ", e.g. " +
                 where.Name("f") + " 1.2ms" + from_profile);
  }
  const bool has_i = !costs->backward_input_s.empty();
  const bool has_w = !costs->backward_weight_s.empty();
  if (has_i != has_w) {
    return where.Invalid(has_i ? "i" : "w", "given without " + where.Name(has_i ? "w" : "i") +
                                                "; a split backward needs both " + where.Name("i") +
                                                " and " + where.Name("w") + from_profile);
  }
  if (!costs->backward_s.empty()) return Status();
  if (!has_i) {
    return where.Invalid("b", "required; give the full backward time (" + where.Name("b") +
                                  ") or its two parts (" + where.Name("i") + " and " +
                                  where.Name("w") + ")" + from_profile);
  }
  for (int32_t s = 0; s < costs->num_stages(); ++s) {
    costs->backward_s.push_back(costs->backward_input_s[s] + costs->backward_weight_s[s]);
  }
  return Status();
}

}  // namespace

bool CostValues::any() const {
  return !forward_s.empty() || !backward_input_s.empty() || !backward_weight_s.empty() ||
         !backward_s.empty() || !overlap_s.empty() || !activation_bytes.empty() ||
         !activation_w_bytes.empty() || !message_bytes.empty() || !gradient_bytes.empty() ||
         !param_bytes.empty() || !optimizer_state_bytes.empty() || !optimizer_step_s.empty();
}

Status ParseCostsPer(std::string_view what, std::string_view text, CostsPer* costs_per) {
  return ParseNamed(kCostsPer, "value", what, text, costs_per);
}

std::string_view CostsPerName(CostsPer costs_per) { return NameOf(kCostsPer, costs_per); }

Status RankSharesOf(const Schedule& schedule, const Locator& where, RankShares* shares) {
  *shares = RankShares();
  shares->num_ranks = schedule.num_ranks;
  shares->share.resize(schedule.num_stages);
  shares->split.resize(schedule.num_stages);
  shares->index.resize(schedule.num_stages);
  for (const Pipeline& pipeline : schedule.AllPipelines()) {
    const int32_t stages = pipeline.last_stage - pipeline.first_stage + 1;
    if (stages % schedule.num_ranks != 0) {
      return where.Invalid(
          "costs_per", "costs per rank share split a model copy's stages evenly, but stages " +
                           std::to_string(pipeline.first_stage) + ".." +
                           std::to_string(pipeline.last_stage) + " are " + std::to_string(stages) +
                           " for " + std::to_string(schedule.num_ranks) + " ranks; give " +
                           where.Name("costs_per") + " virtual-stage and per-stage costs");
    }
    const int32_t split = stages / schedule.num_ranks;
    for (int32_t k = 0; k < stages; ++k) {
      const int32_t s = pipeline.first_stage + k;
      shares->share[s] = k / split;
      shares->split[s] = split;
      shares->index[s] = k % split;
    }
  }
  return Status();
}

Status OverrideStageCosts(const CostValues& given, const Profile* profile, int32_t num_stages,
                          const Locator& where, StageCosts* costs, const RankShares* shares) {
  if (profile != nullptr) RETURN_IF_ERROR(CheckProfileRows(*profile, num_stages, shares, where));
  // Each field given or profiled replaces the model's (or nothing).
  auto override_field = [&](std::string_view field, auto column, auto* out, bool split = true) {
    std::remove_reference_t<decltype(*out)> values;
    RETURN_IF_ERROR(
        Resolve(field, given.*column, profile, column, num_stages, where, shares, split, &values));
    if (!values.empty()) *out = std::move(values);
    return Status();
  };
  // The model's static memory by part (models/transformer.h StageModel splits it); what it holds
  // besides its parts stays unsplit.
  std::vector<int64_t> model_weights(num_stages, 0), model_optimizer(num_stages, 0),
      unsplit_static(num_stages, 0);
  for (size_t s = 0; s < costs->static_bytes.size(); ++s) {
    if (!costs->weight_bytes.empty()) model_weights[s] = costs->weight_bytes[s];
    if (!costs->optimizer_state_bytes.empty()) model_optimizer[s] = costs->optimizer_state_bytes[s];
    unsplit_static[s] =
        costs->static_bytes[s] - costs->gradient_bytes[s] - model_weights[s] - model_optimizer[s];
  }
  std::vector<int64_t> params, optimizer_state;
  RETURN_IF_ERROR(override_field("f", &CostValues::forward_s, &costs->forward_s));
  RETURN_IF_ERROR(override_field("i", &CostValues::backward_input_s, &costs->backward_input_s));
  RETURN_IF_ERROR(override_field("w", &CostValues::backward_weight_s, &costs->backward_weight_s));
  RETURN_IF_ERROR(override_field("b", &CostValues::backward_s, &costs->backward_s));
  RETURN_IF_ERROR(override_field("overlap", &CostValues::overlap_s, &costs->overlap_s));
  RETURN_IF_ERROR(
      override_field("activation", &CostValues::activation_bytes, &costs->activation_bytes));
  RETURN_IF_ERROR(
      override_field("activation_w", &CostValues::activation_w_bytes, &costs->activation_w_bytes));
  RETURN_IF_ERROR(override_field("message_bytes", &CostValues::message_bytes, &costs->message_bytes,
                                 /*split=*/false));
  RETURN_IF_ERROR(override_field("params", &CostValues::param_bytes, &params));
  RETURN_IF_ERROR(
      override_field("grad_bytes", &CostValues::gradient_bytes, &costs->gradient_bytes));
  RETURN_IF_ERROR(
      override_field("optimizer", &CostValues::optimizer_state_bytes, &optimizer_state));
  // A measured optimizer step replaces the model's (experiments/prepare_costs.cc).
  RETURN_IF_ERROR(
      override_field("optimizer_step", &CostValues::optimizer_step_s, &costs->optimizer_step_s));
  for (std::vector<int64_t>* sizes :
       {&costs->activation_bytes, &costs->activation_w_bytes, &costs->message_bytes,
        &costs->gradient_bytes, &params, &optimizer_state}) {
    if (sizes->empty()) sizes->assign(num_stages, 0);
  }
  // The one place given and profiled static memory joins the model's, part by part.
  costs->static_bytes.resize(num_stages);
  costs->weight_bytes.resize(num_stages);
  costs->optimizer_state_bytes.resize(num_stages);
  for (int32_t s = 0; s < num_stages; ++s) {
    costs->weight_bytes[s] = params[s] + model_weights[s];
    costs->optimizer_state_bytes[s] = optimizer_state[s] + model_optimizer[s];
    costs->static_bytes[s] = costs->weight_bytes[s] + costs->gradient_bytes[s] +
                             costs->optimizer_state_bytes[s] + unsplit_static[s];
  }
  RETURN_IF_ERROR(CompleteDurations(profile, shares != nullptr, where, costs));
  for (int32_t s = 0; s < num_stages; ++s) {
    if (costs->activation_w_bytes[s] > costs->activation_bytes[s]) {
      return where.Invalid("activation_w",
                           std::to_string(costs->activation_w_bytes[s]) + " bytes at stage " +
                               std::to_string(s) + " exceed " + where.Name("activation") + " (" +
                               std::to_string(costs->activation_bytes[s]) +
                               " bytes); M_W is the part of M_B held from I until W");
    }
  }
  return Status();
}

Status CheckCostsCoverSchedule(const StageCosts& costs, const Schedule& schedule,
                               const Locator& where) {
  if (costs.num_stages() != schedule.num_stages) {
    return Status::Internal("costs: " + std::to_string(costs.num_stages()) +
                            " virtual stages of costs for a schedule of " +
                            std::to_string(schedule.num_stages) + " stages");
  }
  if (costs.has_split_backward()) return Status();
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    for (size_t index = 0; index < order.size(); ++index) {
      const OpKind kind = order[index].op(0).kind;
      if (kind == OpKind::kBackwardInput || kind == OpKind::kBackwardWeight) {
        return Status::InvalidInput(where.Where("i") + "/" + where.Name("w") +
                                    ": the schedule splits the backward into I and W (first at " +
                                    DescribeActionAt(rank, index, order[index]) + "); give " +
                                    where.Name("i") + " and " + where.Name("w") + ", not only " +
                                    where.Name("b"));
      }
    }
  }
  return Status();
}

}  // namespace ppsim
