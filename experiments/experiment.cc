#include "experiments/experiment.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "experiments/request.h"
#include "platforms/cluster.h"

namespace ppsim {
namespace {

namespace pb = google::protobuf;

constexpr std::string_view kSetPrefix = "set.";

// The fields an axis or condition may name: RunConfig's scalar fields but `set` (swept as
// set.PATH) and the trace and timeline files (a sweep writes timelines with --timelines).
const std::vector<std::string>& SweepableFields() {
  static const std::vector<std::string> kFields = [] {
    std::vector<std::string> fields;
    for (const std::string& f : ScalarFieldPaths(proto::RunConfig::descriptor())) {
      if (f != "set" && !IsOutputFileField(f)) fields.push_back(f);
    }
    return fields;
  }();
  return kFields;
}

bool IsClusterPath(std::string_view path) {
  static const std::vector<std::string> kPaths = ScalarFieldPaths(proto::Cluster::descriptor());
  return std::find(kPaths.begin(), kPaths.end(), path) != kPaths.end();
}

// "" when `field` may be swept, else what is wrong with it.
std::string CheckField(const std::string& field) {
  if (field.rfind(kSetPrefix, 0) == 0) {
    const std::string path = field.substr(kSetPrefix.size());
    if (IsClusterPath(path)) return "";
    return UnknownName("cluster field", path, ScalarFieldPaths(proto::Cluster::descriptor()));
  }
  const std::vector<std::string>& fields = SweepableFields();
  if (std::find(fields.begin(), fields.end(), field) != fields.end()) return "";
  return UnknownName("field", field, fields, "set.PATH");
}

// Applies one value of a swept field to `config`; the message starts with `where`.
Status ApplyValue(const std::string& field, const std::string& value, const std::string& where,
                  proto::RunConfig* config) {
  if (field.rfind(kSetPrefix, 0) == 0) {
    config->add_set(field.substr(kSetPrefix.size()) + "=" + value);
    return Status();
  }
  return SetFieldFromText(field, value, where, config);
}

// The value of `field` in `config` as text ("" when unset).
std::string ValueText(const proto::RunConfig& config, const std::string& field) {
  if (field.rfind(kSetPrefix, 0) == 0) {
    const std::string prefix = field.substr(kSetPrefix.size()) + "=";
    std::string value;
    for (const std::string& s : config.set()) {
      if (s.rfind(prefix, 0) == 0) value = s.substr(prefix.size());
    }
    return value;
  }
  const pb::FieldDescriptor* f = config.GetDescriptor()->FindFieldByName(field);
  const pb::Reflection* r = config.GetReflection();
  if (f == nullptr || (f->has_presence() && !r->HasField(config, f))) return "";
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return r->GetString(config, f);
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(r->GetInt32(config, f));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return r->GetBool(config, f) ? "true" : "false";
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.17g", r->GetDouble(config, f));
      return buffer;
    }
    default:
      return "";
  }
}

struct Column {
  std::string field;
  std::string path;  // "axes[0]" or "axes[0].with[1]"
  const proto::Axis* axis;
};

}  // namespace

Status LoadExperiment(const std::string& path, ExperimentPlan* plan) {
  *plan = ExperimentPlan();
  plan->source = path;
  const size_t slash = path.rfind('/');
  plan->directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  RETURN_IF_ERROR(ReadConfigFile(path, &plan->experiment, &plan->locations));
  return CheckExperiment(plan);
}

Status ParseExperiment(std::string_view text, const std::string& source, ExperimentPlan* plan) {
  *plan = ExperimentPlan();
  plan->source = source;
  ConfigFormat format;
  RETURN_IF_ERROR(ConfigFormatOf(source, &format));
  RETURN_IF_ERROR(ParseConfig(text, format, source, &plan->experiment, &plan->locations));
  return CheckExperiment(plan);
}

namespace {

// The baseline names a point: its number, or a value of the first axis.
Status CheckBaseline(const ExperimentPlan& plan) {
  const proto::Experiment& e = plan.experiment;
  const std::string& baseline = e.baseline();
  if (baseline.empty()) return Status();
  int64_t number = -1;
  if (ParseWhole(baseline, &number) && number >= 0 &&
      (plan.num_points < 0 || number < plan.num_points)) {
    return Status();
  }
  std::string valid = plan.num_points == 1 ? "the point 0" : "a point number";
  if (plan.num_points > 1) valid += " (0-" + std::to_string(plan.num_points - 1) + ")";
  if (e.axes_size() > 0) {
    const proto::Axis& first = e.axes(0);
    if (std::find(first.values().begin(), first.values().end(), baseline) != first.values().end()) {
      return Status();
    }
    valid += " or a value of the first axis, " + first.field() + " (";
    for (int v = 0; v < first.values_size(); ++v) {
      valid += (v == 0 ? "" : ", ") + first.values(v);
    }
    valid += ")";
  }
  return Status::InvalidInput(plan.locations.Where("baseline") + ": baseline: no point " +
                              Quoted(baseline) + "; valid: " + valid);
}

}  // namespace

Status CheckExperiment(ExperimentPlan* plan) {
  const proto::Experiment& e = plan->experiment;
  ErrorList errors;
  auto where = [&](const std::string& field_path) {
    return plan->locations.Where(field_path) + ": " + field_path;
  };

  // The columns: each axis, then the fields zipped with it.
  std::vector<Column> columns;
  std::vector<size_t> dimension_sizes;
  for (int a = 0; a < e.axes_size(); ++a) {
    const proto::Axis& axis = e.axes(a);
    const std::string axis_path = "axes[" + std::to_string(a) + "]";
    if (axis.values_size() == 0) {
      errors.Add(where(axis_path + ".values") + ": no values; an axis needs at least one");
    }
    dimension_sizes.push_back(static_cast<size_t>(axis.values_size()));
    columns.push_back({axis.field(), axis_path, &axis});
    for (int w = 0; w < axis.with_size(); ++w) {
      const proto::Axis& with = axis.with(w);
      const std::string with_path = axis_path + ".with[" + std::to_string(w) + "]";
      if (with.values_size() != axis.values_size()) {
        errors.Add(where(with_path + ".values") + ": " + std::to_string(with.values_size()) +
                   " values zipped with the " + std::to_string(axis.values_size()) + " of " +
                   axis.field() + "; give exactly one per value of the axis");
      }
      if (with.with_size() > 0) {
        errors.Add(where(with_path + ".with") +
                   ": a zipped field has no zipped fields of its own; list them all in the "
                   "axis's with");
      }
      columns.push_back({with.field(), with_path, &with});
    }
  }
  std::set<std::string> seen;
  for (const Column& c : columns) {
    const std::string problem = CheckField(c.field);
    if (!problem.empty()) {
      errors.Add(where(c.path + ".field") + ": " + problem);
    } else if (!seen.insert(c.field).second) {
      errors.Add(where(c.path + ".field") + ": " + c.field +
                 " is swept twice; sweep a field in one axis (zip fields that vary "
                 "together with `with`)");
    }
    plan->columns.push_back(c.field);
  }
  for (int k = 0; k < e.skip_size(); ++k) {
    for (int c = 0; c < e.skip(k).when_size(); ++c) {
      const std::string problem = CheckField(e.skip(k).when(c).field());
      if (!problem.empty()) {
        errors.Add(where("skip[" + std::to_string(k) + "].when[" + std::to_string(c) + "].field") +
                   ": " + problem);
      }
    }
  }
  // Every value must suit its field (checked once per value, on a scratch config).
  for (const Column& c : columns) {
    if (!CheckField(c.field).empty()) continue;
    for (int v = 0; v < c.axis->values_size(); ++v) {
      proto::RunConfig scratch;
      const std::string value_path = c.path + ".values[" + std::to_string(v) + "]";
      errors.Check(ApplyValue(c.field, c.axis->values(v), where(value_path), &scratch));
    }
  }
  RETURN_IF_ERROR(errors.ToStatus());

  // The points: a mixed-radix count over the dimensions, the first varying slowest. Counted,
  // not made: a sweep expands them (ExpandPoints), a base run does not need them.
  plan->dimension_sizes.assign(dimension_sizes.begin(), dimension_sizes.end());
  for (const Column& c : columns) plan->column_paths.push_back(c.path);
  plan->num_points = 1;
  for (size_t size : dimension_sizes) {
    if (__builtin_mul_overflow(plan->num_points, static_cast<int64_t>(size), &plan->num_points)) {
      plan->num_points = -1;
      break;
    }
  }
  return CheckBaseline(*plan);
}

Status MakePoint(const ExperimentPlan& plan, int64_t index, SweepPoint* point) {
  const proto::Experiment& e = plan.experiment;
  *point = SweepPoint();
  point->index = index;
  point->config = e.base();
  const std::vector<int64_t>& sizes = plan.dimension_sizes;
  std::vector<int64_t> choice(sizes.size());
  int64_t rest = index;
  for (size_t d = sizes.size(); d-- > 0;) {
    choice[d] = rest % sizes[d];
    rest /= sizes[d];
  }
  size_t column = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const proto::Axis& axis = e.axes(static_cast<int>(d));
    for (int w = -1; w < axis.with_size(); ++w, ++column) {
      const proto::Axis& a = w < 0 ? axis : axis.with(w);
      const std::string& value = a.values(static_cast<int>(choice[d]));
      const std::string value_path =
          plan.column_paths[column] + ".values[" + std::to_string(choice[d]) + "]";
      point->values.push_back(value);
      point->value_locations.push_back(plan.locations.Where(value_path) + ": " + value_path);
      if (!ApplyValue(a.field(), value, "", &point->config).ok()) {
        return Status::Internal(value_path + ": a checked value did not apply");
      }
    }
  }
  for (const proto::Skip& skip : e.skip()) {
    bool all = true;
    for (const proto::Condition& c : skip.when()) {
      const std::string value = ValueText(point->config, c.field());
      const bool in_equals = c.equals_size() == 0 || std::find(c.equals().begin(), c.equals().end(),
                                                               value) != c.equals().end();
      const bool in_not_equals =
          std::find(c.not_equals().begin(), c.not_equals().end(), value) != c.not_equals().end();
      all = all && in_equals && !in_not_equals;
    }
    if (all && skip.when_size() > 0) {
      point->skipped = true;
      point->reason = skip.reason().empty() ? "skipped by a skip rule" : skip.reason();
      break;
    }
  }
  return Status();
}

Status ExpandPoints(int64_t max_points, ExperimentPlan* plan, const Locator& options) {
  plan->points.clear();
  if (plan->num_points < 0 || plan->num_points > max_points) {
    char count[64];
    std::snprintf(count, sizeof(count), "%.1e",
                  plan->num_points < 0 ? 9.3e18 : static_cast<double>(plan->num_points));
    return Status::InvalidInput(plan->locations.Where("axes") + ": axes: the axes multiply to " +
                                (plan->num_points < 0 ? "more than " : "") + count +
                                " points; the limit is " + std::to_string(max_points) + " (" +
                                options.Name("max_points") +
                                "); split the sweep or raise the limit");
  }
  plan->points.resize(static_cast<size_t>(plan->num_points));
  for (int64_t index = 0; index < plan->num_points; ++index) {
    RETURN_IF_ERROR(MakePoint(*plan, index, &plan->points[static_cast<size_t>(index)]));
  }
  return Status();
}

std::string DescribePoint(const ExperimentPlan& plan, const SweepPoint& point) {
  std::string out;
  for (size_t c = 0; c < plan.columns.size(); ++c) {
    out += (c == 0 ? "" : ", ") + plan.columns[c] + "=" + point.values[c];
  }
  return out.empty() ? "the base run" : out;
}

}  // namespace ppsim
