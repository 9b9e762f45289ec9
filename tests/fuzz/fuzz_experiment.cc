// Experiment files in the three formats (the first byte picks one), their checks, the points
// they expand to (a few at most) and each point's request resolved as a sweep resolves it.
#include <memory>

#include "experiments/experiment.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* sources[] = {"e.textproto", "e.json", "e.yaml"};
  const std::string source = sources[data[0] % 3];
  ppsim::ExperimentPlan plan;
  const ppsim::Status status =
      ppsim::ParseExperiment(ppsim::fuzz::Text(data + 1, size - 1), source, &plan);
  ppsim::fuzz::ExpectReadable(status, source);
  if (!status.ok()) return 0;
  if (!ppsim::ExpandPoints(64, &plan).ok()) return 0;
  for (const ppsim::SweepPoint& point : plan.points) {
    ppsim::RunRequest request;
    ppsim::ResolveOptions options;
    options.one_schedule = true;
    const ppsim::Status resolved = ppsim::ResolveRun(
        point.config, std::make_shared<ppsim::FileLocator>(plan, &point), options, &request);
    ppsim::fuzz::ExpectReadable(resolved, source);
  }
  return 0;
}
