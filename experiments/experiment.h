// Experiment files (experiments/experiment.proto): reading them and expanding their sweep into
// points, each a RunConfig (experiments/run_config.proto) that the resolver turns into a run.
#ifndef PPSIM_EXPERIMENTS_EXPERIMENT_H_
#define PPSIM_EXPERIMENTS_EXPERIMENT_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "config/config_file.h"
#include "experiments/experiment.pb.h"

namespace ppsim {

// One point of a sweep.
struct SweepPoint {
  int64_t index = 0;
  std::vector<std::string> values;  // the text of every column of ExperimentPlan::columns
  std::vector<std::string> value_locations;  // where each value was written ("FILE:LINE:COL")
  proto::RunConfig config;          // the base run with the point's values applied
  bool skipped = false;             // by a Skip rule
  std::string reason;               // the rule's reason
};

struct ExperimentPlan {
  std::string source;     // the file
  std::string directory;  // its directory ("" for the current one), for relative paths
  proto::Experiment experiment;
  ConfigLocations locations;
  // The swept fields in column order: each axis, then the fields zipped with it.
  std::vector<std::string> columns;
  std::vector<std::string> column_paths;  // where each column is written: "axes[0].with[1]"
  std::vector<int64_t> dimension_sizes;   // values per axis, in axis order
  int64_t num_points = 1;  // the product of dimension_sizes; -1 past 2^63 - 1
  std::vector<SweepPoint> points;         // ExpandPoints fills it
};

// Reads `path`, checks it and counts its points (without making them). Checks: the file parses (see
// config/config_file.h); every axis, zipped axis and condition names a RunConfig field or
// "set.PATH" with PATH a cluster field; an axis has values, a zipped axis as many as its axis; a
// column is swept once; every value suits its field (an integer for pp, ...). Every problem is
// reported at once, located: "e.yaml:7:14: axes[1].field: unknown field 'microbatch'; valid: ...
// (did you mean microbatches?)". Whether a point makes a valid run is for the caller to check
// (ResolveRun with a FileLocator, then PrepareRun).
Status LoadExperiment(const std::string& path, ExperimentPlan* plan);
// The same for `text` read from `source` (whose extension gives the format); relative paths in it
// stay as they are.
Status ParseExperiment(std::string_view text, const std::string& source, ExperimentPlan* plan);
// The checks and the point count of LoadExperiment, on plan->experiment as read.
Status CheckExperiment(ExperimentPlan* plan);

// At most how many points a sweep expands unless told otherwise (each holds a run request of about
// a kilobyte): `ppsim sweep --max-points`.
inline constexpr int64_t kDefaultMaxPoints = 1'000'000;

// Makes point `index` (0 <= index < plan.num_points): the base with the point's axis values.
Status MakePoint(const ExperimentPlan& plan, int64_t index, SweepPoint* point);

// Makes every point of `plan` into plan->points. InvalidInput, located at the axes, when there are
// more than `max_points` (before any is made).
// `options` names the option that sets max_points in messages.
Status ExpandPoints(int64_t max_points, ExperimentPlan* plan,
                    const Locator& options = FieldNames());

// "schedule=1F1B, microbatches=8": the point's values, for messages.
std::string DescribePoint(const ExperimentPlan& plan, const SweepPoint& point);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_EXPERIMENT_H_
