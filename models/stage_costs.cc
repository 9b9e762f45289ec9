#include "models/stage_costs.h"

#include "models/profile.h"
#include "config/units.h"
#include "base/names.h"

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

// How the values of one field are laid out.
struct Layout {
  const RankShares* shares = nullptr;  // per rank share, split; null: per virtual stage
  bool split = true;                   // false: each stage gets its rank's whole value
};

// One field: the request's list when given, else the profile's column, else unset. A list holds
// one value for all, or one per rank (with shares) or per virtual stage.
template <class T>
Status Resolve(std::string_view field, const std::vector<T>& given, const Profile* profile,
               std::vector<T> Profile::*column, int32_t num_stages, const Locator& where,
               Layout given_layout, Layout profile_layout, std::vector<T>* out) {
  out->clear();
  const std::vector<T>* values = &given;
  Layout layout = given_layout;
  if (given.empty()) {
    if (profile == nullptr || (profile->*column).empty()) return Status();
    values = &(profile->*column);
    layout = profile_layout;
  }
  const int32_t units = layout.shares == nullptr ? num_stages : layout.shares->num_ranks;
  if (values->size() != 1 && static_cast<int32_t>(values->size()) != units) {
    // A profile's rows are checked before this.
    if (layout.shares == nullptr) {
      return where.Invalid(field, std::to_string(values->size()) + " values for " +
                                      std::to_string(num_stages) +
                                      " virtual stages; give one value for all stages or exactly " +
                                      std::to_string(num_stages) + ", comma-separated");
    }
    return where.Invalid(field, std::to_string(values->size()) + " values for " +
                                    std::to_string(units) +
                                    " ranks; give one value for all ranks or exactly " +
                                    std::to_string(units) + ", comma-separated (or " +
                                    where.Name("costs_per") +
                                    " virtual-stage and one per virtual stage)");
  }
  for (int32_t s = 0; s < num_stages; ++s) {
    if (layout.shares == nullptr) {
      out->push_back((*values)[values->size() == 1 ? 0 : s]);
      continue;
    }
    const RankShares& shares = *layout.shares;
    const T value = (*values)[values->size() == 1 ? 0 : shares.share[s]];
    out->push_back(layout.split ? ShareOf(value, shares.split[s], shares.index[s]) : value);
  }
  return Status();
}

}  // namespace

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
      return where.Invalid("costs_per",
                           "costs per rank share split a model copy's stages evenly, but stages " +
                               std::to_string(pipeline.first_stage) + ".." +
                               std::to_string(pipeline.last_stage) + " are " +
                               std::to_string(stages) + " for " +
                               std::to_string(schedule.num_ranks) + " ranks; give " +
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

Status BuildStageCosts(const CostInputs& inputs, const Profile* profile, int32_t num_stages,
                       const Locator& where, StageCosts* costs, const RankShares* shares,
                       bool profile_per_stage) {
  *costs = StageCosts();
  const Layout given_layout{shares, true};
  const Layout profile_layout{profile_per_stage ? nullptr : shares, true};
  if (profile != nullptr && profile->num_rows != 1) {
    const int32_t units =
        profile_layout.shares == nullptr ? num_stages : profile_layout.shares->num_ranks;
    if (profile->num_rows != units) {
      return Status::InvalidInput(
          profile->source + ": " + std::to_string(profile->num_rows) + " stages in the profile " +
          (profile_layout.shares == nullptr
               ? "for " + std::to_string(num_stages) +
                     " virtual stages; give one per virtual stage or one for all"
               : "for " + std::to_string(units) + " ranks; give one per rank or one for all (or " +
                     where.Name("costs_per") + " virtual-stage and one per virtual stage)"));
    }
  }
  Status status;
  auto times = [&](std::string_view field, const std::vector<double>& given,
                   std::vector<double> Profile::*column, std::vector<double>* out) {
    if (status.ok()) {
      status = Resolve(field, given, profile, column, num_stages, where, given_layout,
                       profile_layout, out);
    }
  };
  auto sizes = [&](std::string_view field, const std::vector<int64_t>& given,
                   std::vector<int64_t> Profile::*column, std::vector<int64_t>* out,
                   bool split = true) {
    if (status.ok()) {
      status = Resolve(field, given, profile, column, num_stages, where,
                       Layout{given_layout.shares, split}, Layout{profile_layout.shares, split},
                       out);
    }
    if (status.ok() && out->empty()) out->assign(num_stages, 0);
  };
  const std::vector<int64_t> none;
  times("f", inputs.forward_s, &Profile::f_s, &costs->forward_s);
  times("i", inputs.backward_input_s, &Profile::i_s, &costs->backward_input_s);
  times("w", inputs.backward_weight_s, &Profile::w_s, &costs->backward_weight_s);
  times("b", inputs.backward_s, &Profile::b_s, &costs->backward_s);
  times("overlap", inputs.overlap_s, &Profile::overlap_s, &costs->overlap_s);
  sizes("activation", inputs.activation_bytes, &Profile::activation_bytes,
        &costs->activation_bytes);
  sizes("activation_w", inputs.activation_w_bytes, &Profile::activation_w_bytes,
        &costs->activation_w_bytes);
  sizes("message_bytes", inputs.message_bytes, &Profile::message_bytes, &costs->message_bytes,
        /*split=*/false);
  std::vector<int64_t> params, grads, optimizer, other_static;
  sizes("params", none, &Profile::param_bytes, &params);
  sizes("grad_bytes", inputs.gradient_bytes, &Profile::grad_bytes, &grads);
  sizes("optimizer", none, &Profile::optimizer_state_bytes, &optimizer);
  sizes("static", none, &Profile::static_bytes, &other_static);
  if (!status.ok()) return status;

  const std::string from_profile = profile == nullptr ? "" : " (or in " + profile->source + ")";
  if (costs->forward_s.empty()) {
    return where.Invalid("f", std::string("required; give the forward time of ") +
                                  (shares != nullptr ? "one rank's share of the model"
                                                     : "each virtual stage") +
                                  ", e.g. " + where.Name("f") + " 1.2ms" + from_profile);
  }
  const bool has_i = !costs->backward_input_s.empty();
  const bool has_w = !costs->backward_weight_s.empty();
  if (has_i != has_w) {
    return where.Invalid(has_i ? "i" : "w",
                         "given without " + where.Name(has_i ? "w" : "i") +
                             "; a split backward needs both " + where.Name("i") + " and " +
                             where.Name("w") + from_profile);
  }
  if (costs->backward_s.empty()) {
    if (!has_i) {
      return where.Invalid("b", "required; give the full backward time (" + where.Name("b") +
                                    ") or its two parts (" + where.Name("i") + " and " +
                                    where.Name("w") + ")" + from_profile);
    }
    for (int32_t s = 0; s < num_stages; ++s) {
      costs->backward_s.push_back(costs->backward_input_s[s] + costs->backward_weight_s[s]);
    }
  }
  costs->gradient_bytes = grads;
  for (int32_t s = 0; s < num_stages; ++s) {
    costs->static_bytes.push_back(params[s] + grads[s] + optimizer[s] + other_static[s]);
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
        return Status::InvalidInput(
            where.Where("i") + "/" + where.Name("w") +
            ": the schedule splits the backward into I and W (first at " +
            DescribeActionAt(rank, index, order[index]) + "); give " + where.Name("i") + " and " +
            where.Name("w") + ", not only " + where.Name("b"));
      }
    }
  }
  return Status();
}

}  // namespace ppsim
