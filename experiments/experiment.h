// Experiment files (experiments/experiment.proto): reading them and expanding their sweep into
// points, each a RunConfig (experiments/run_config.proto) that the resolver turns into a run.
#ifndef PPSIM_EXPERIMENTS_EXPERIMENT_H_
#define PPSIM_EXPERIMENTS_EXPERIMENT_H_

#include <string>
#include <vector>

#include "experiments/experiment.pb.h"
#include "models/config_file.h"
#include "base/status.h"

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
  std::vector<SweepPoint> points;
};

// Reads `path`, checks it and expands its points. Checks: the file parses (see
// models/config_file.h); every axis, zipped axis and condition names a RunConfig field or
// "set.PATH" with PATH a cluster field; an axis has values, a zipped axis as many as its axis; a
// column is swept once; every value suits its field (an integer for pp, ...). Every problem is
// reported at once, located: "e.yaml:7:14: axes[1].field: unknown field 'microbatch'; valid: ...
// (did you mean microbatches?)". Whether a point makes a valid run is for the caller to check
// (ResolveRun with a FileLocator, then PrepareRun).
Status LoadExperiment(const std::string& path, ExperimentPlan* plan);

// "schedule=1F1B, microbatches=8": the point's values, for messages.
std::string DescribePoint(const ExperimentPlan& plan, const SweepPoint& point);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_EXPERIMENT_H_
