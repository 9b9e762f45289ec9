// The experiments library without argv: requests resolved with their locators, runs executed,
// a sweep planned and run, all through the same API the command line uses.
#include "experiments/request.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "batch/sweep.h"
#include "base/flag_locator.h"
#include "experiments/experiment.h"
#include "experiments/locators.h"
#include "tests/support/cli.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

std::string ResolveError(const proto::RunConfig& config, std::shared_ptr<const Locator> where) {
  RunRequest request;
  const Status status = ResolveRun(config, std::move(where), {}, &request);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  return status.message();
}

TEST(FlagLocator, NamesEveryFieldByItsFlag) {
  const FlagLocator flags;
  EXPECT_EQ(flags.Where("pp"), "--pp");
  EXPECT_EQ(flags.Where("layers_per_stage"), "--layers-per-stage");
  EXPECT_EQ(flags.Where("set.nic.bandwidth"), "--set nic.bandwidth");
  EXPECT_EQ(flags.Name("activation_w"), "--activation-w");
}

TEST(ResolveRun, ReportsEachFieldWhereItWasWritten) {
  proto::RunConfig config = IdealRun("1F1B", 4, 8, "1", "2", EngineKind::kSimGrid);
  config.set_pp(0);
  EXPECT_EQ(ResolveError(config, std::make_shared<FlagLocator>()),
            "--pp: must be at least 1; got 0");
  config.set_pp(4);
  config.set_f("1,fast");
  EXPECT_EQ(ResolveError(config, std::make_shared<FlagLocator>()),
            "--f: invalid duration 'fast'; expected a non-negative number with unit ns, us, ms or "
            "s (a bare number is seconds), e.g. 1.2ms");
  config.set_f("1");
  config.set_recompute("full");
  EXPECT_EQ(ResolveError(config, std::make_shared<FlagLocator>()),
            "--recompute: applies with --model only");
  EXPECT_EQ(ResolveError(config, std::make_shared<FieldNames>()),
            "recompute: applies with model only");
}

TEST(ResolveRun, CostsAreParsedOnceIntoSecondsAndBytes) {
  proto::RunConfig config = IdealRun("1F1B", 4, 8, "1ms,2ms", "", EngineKind::kSimGrid);
  config.set_i("500us");
  config.set_w("0.5ms");
  config.set_activation("1KiB");
  const RunSpec spec = SpecOf(config);
  EXPECT_EQ(spec.costs.forward_s, (std::vector<double>{0.001, 0.002}));
  EXPECT_EQ(spec.costs.backward_input_s, (std::vector<double>{0.0005}));
  EXPECT_EQ(spec.costs.activation_bytes, (std::vector<int64_t>{1024}));
}

TEST(ExecuteRequest, RunsTheOneFOneBClosedForm) {
  // 1F1B, p = 4, m = 8, F = 1 s, B = 2 s, nothing in between: (m + p - 1)(F + B) = 33 s.
  RunRequest request;
  ASSERT_TRUE(ResolveRun(IdealRun("1F1B,GPipe", 4, 8, "1", "2", EngineKind::kSimGrid),
                         std::make_shared<FlagLocator>(), {}, &request)
                  .ok());
  ASSERT_EQ(request.runs.size(), 2u);
  std::vector<RunResult> results;
  ASSERT_TRUE(ExecuteRequest(request, "test", &results).ok());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].label, "1F1B");
  EXPECT_NEAR(results[0].metrics.makespan_s, 33, 1e-12);
  EXPECT_NEAR(results[1].metrics.makespan_s, 33, 1e-12);  // GPipe: the same without memory
}

TEST(FileLocator, LocatesTheBaseAndEachPointsValues) {
  const std::string path = WriteFile("locator.yaml", R"(base:
  schedule: 1F1B
  pp: 4
  f: 1ms
  b: 2ms
  platform: ideal
axes:
  - field: microbatches
    values: ["8", "0"]
)");
  ExperimentPlan plan;
  ASSERT_TRUE(LoadExperiment(path, &plan).ok());
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &plan).ok());
  const FileLocator base(plan, nullptr);
  EXPECT_EQ(base.Where("pp"), path + ":3:7: base.pp");
  EXPECT_EQ(base.Where("dp"), path + ": base.dp");
  EXPECT_EQ(base.Where("set.nic.bandwidth"), path + ": base.set");
  const FileLocator second(plan, &plan.points[1]);
  EXPECT_EQ(second.Where("microbatches"), path + ":9:19: axes[0].values[1]");
  std::vector<PointJob> jobs;
  const Status status = PlanSweep(plan, 2, &jobs);
  EXPECT_EQ(status.message(),
            path + ":9:19: axes[0].values[1]: must be at least 1; got 0 (point 1: "
                   "microbatches=0)\n" + path + ": nothing ran; fix these points, or set skip_invalid: true to "
                   "record them as skipped");
}

TEST(RunSweep, WritesEveryPointThroughTheLibrary) {
  const std::string path = WriteFile("library-sweep.yaml", R"(base: {schedule: 1F1B, pp: 4, f: 1, b: 2, platform: ideal}
axes:
  - {field: microbatches, values: ["4", "8"]}
)");
  ExperimentPlan plan;
  ASSERT_TRUE(LoadExperiment(path, &plan).ok());
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &plan).ok());
  std::vector<PointJob> jobs;
  ASSERT_TRUE(PlanSweep(plan, 2, &jobs).ok());
  SweepOptions options;
  options.output = ::testing::TempDir() + "library-sweep.csv";
  options.jobs = 2;
  std::remove((options.output + ".partial").c_str());
  std::ostringstream progress;
  SweepSummary summary;
  ASSERT_TRUE(RunSweep(plan, jobs, options, progress, &summary).ok());
  EXPECT_EQ(summary.ok, 2u);
  const std::string csv = ReadFile(options.output);
  // (m + p - 1)(F + B): 21 s and 33 s.
  EXPECT_NE(csv.find("\n0,4,21,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,8,33,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace ppsim
