// `ppsim profile`: traces in, a profile, an order and a summary out, and the replay's command.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace ppsim {
namespace {

const std::string kData = std::string(PPSIM_SOURCE_DIR) + "/tests/data/profiler/";

// The CPU 1F1B traces' medians, computed independently (tests/data/profiler/expected.py):
//   python3 expected.py cpu_1f1b rank0.pt.trace.json.gz rank1.pt.trace.json.gz
//   F stage 0 55314 us, stage 1 55717.5; B 46391, 70482.5; p2p (p10 of receive waits) 160 us;
//   median steady step 636589.5 us.
TEST(ProfileCommand, WritesTheProfileAndOrderAndReplaysThem) {
  const std::string profile = ::testing::TempDir() + "p1f1b.textproto";
  const std::string order = ::testing::TempDir() + "p1f1b.order.csv";
  const CliResult r =
      Cli({"profile", kData + "cpu_1f1b", "--ranks-in-order", "-o", profile, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ranks"].size(), 2u);
  ASSERT_EQ(j["steps"].size(), 4u);
  EXPECT_EQ(j["steps"][1]["name"], "ProfilerStep#1");
  EXPECT_DOUBLE_EQ(j["steps"][1]["duration_s"].get<double>(), 640156e-6);
  EXPECT_NEAR(j["median_step_s"].get<double>(), 636589.5e-6, 1e-9);
  ASSERT_EQ(j["stages"].size(), 2u);
  EXPECT_NEAR(j["stages"][0]["f"]["median_s"].get<double>(), 55314e-6, 1e-9);
  EXPECT_NEAR(j["stages"][1]["b"]["median_s"].get<double>(), 70482.5e-6, 1e-9);
  EXPECT_EQ(j["collectives"][0]["kind"], "send_recv");
  ASSERT_TRUE(j["replay"]["ran"].get<bool>()) << j["replay"]["note"];
  // The replay against the mean steady step (631712.3333 us): issue 28's bar, 3%.
  EXPECT_NEAR(j["replay"]["measured_s"].get<double>(), 631712.3333333334e-6, 1e-9);
  EXPECT_LT(std::abs(j["replay"]["error"].get<double>()), 0.03) << j["replay"];
  // The profile: the means (expected.py: stage 0 F 55386.4167 us, stage 1 B 71393.9167 us) to
  // the nanosecond.
  const std::string text = ReadFile(profile);
  EXPECT_NE(text.find("  f_s: 0.055386417  #"), std::string::npos) << text;
  EXPECT_NE(text.find("  b_s: 0.071393917  #"), std::string::npos) << text;
  EXPECT_EQ(ReadFile(order), "0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n");
  // The printed command reruns the replay: the same makespan.
  const std::string command = j["replay"]["command"];
  EXPECT_EQ(command, "ppsim run --schedule-file " + order + " --profile " + profile +
                         " --costs-per virtual-stage --platform ideal --p2p-latency 0.00016s "
                         "--engine simgrid");
  std::vector<std::string> args;
  for (size_t start = std::string("ppsim ").size(); start < command.size();) {
    size_t end = command.find(' ', start);
    if (end == std::string::npos) end = command.size();
    args.push_back(command.substr(start, end - start));
    start = end + 1;
  }
  args.push_back("--format");
  args.push_back("json");
  const CliResult rerun = Cli(args);
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  const nlohmann::json run = nlohmann::json::parse(rerun.out);
  const nlohmann::json& first = run.is_array() ? run[0] : run;
  EXPECT_NEAR(first["makespan_s"].get<double>(), j["replay"]["simulated_s"].get<double>(), 1e-12)
      << rerun.out;
}

TEST(ProfileCommand, RefusesToOverwriteAnInputAndNeedsEveryStage) {
  // A short path, that the message shows whole.
  const std::string rank1 =
      WriteFile("r1.json.gz", ReadFile(kData + "cpu_1f1b/rank1.pt.trace.json.gz"));
  CliResult r = Cli({"profile", rank1, "-o", rank1});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "-o: '" + rank1 + "' is also an input of this command (" + rank1 +
                       "); choose another file\n");
  r = Cli({"profile", rank1, "-o", ::testing::TempDir() + "one.textproto"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "-o: stage 0 has no forward in the traces given; a profile needs the traces "
            "of every pipeline rank\n");
  r = Cli({"profile", rank1, "-o", "p.csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "-o: 'p.csv': the profile is written as textproto; name it .textproto, .pbtxt "
            "or .txtpb\n");
  r = Cli({"profile", kData + "hta/nccl_data.json.gz", "--format", "xml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "--format: unknown format 'xml'; valid: table, json\n");
}

TEST(ProfileCommand, TableOfAnNcclTrace) {
  const CliResult r = Cli({"profile", kData + "hta/nccl_data.json.gz"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  all_reduce  15 ops, 292.5 MiB, 46.76 ms\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU busy 23.61% of 667.2 ms"), std::string::npos) << r.out;
}

// The Nsight Systems exports derived from the same CPU 1F1B traces (data/profiler/make_nsys.py):
// the same medians (expected.py's, as above), the same order, and no --ranks-in-order needed
// (RANK is in their recorded environment).
TEST(ProfileCommand, NsysExportsOfTheSameRunGiveTheSameProfile) {
  const std::string profile = ::testing::TempDir() + "nsys1f1b.textproto";
  const CliResult r = Cli({"profile", kData + "nsys/cpu_1f1b", "-o", profile, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stages"].size(), 2u);
  EXPECT_NEAR(j["median_step_s"].get<double>(), 636589.5e-6, 1e-9);
  EXPECT_NEAR(j["stages"][0]["f"]["median_s"].get<double>(), 55314e-6, 1e-9);
  EXPECT_NEAR(j["stages"][1]["b"]["median_s"].get<double>(), 70482.5e-6, 1e-9);
  const std::string text = ReadFile(profile);
  EXPECT_NE(text.find("  f_s: 0.055386417  #"), std::string::npos) << text;
  EXPECT_EQ(ReadFile(::testing::TempDir() + "nsys1f1b.order.csv"),
            "0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n");
}

// A real export without ProfilerStep ranges is read, then refused for want of steps.
TEST(ProfileCommand, RealNsysExportWithoutStepsIsRefused) {
  const CliResult r = Cli({"profile", kData + "nsys/saxpy.sqlite"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, kData +
                       "nsys/saxpy.sqlite: no ProfilerStep#N ranges; profile with a "
                       "torch.profiler schedule and call prof.step() once per step, or "
                       "(Nsight Systems) wrap each step in an NVTX range named ProfilerStep#N\n");
}

// A profile's measured optimizer step runs after each rank's last action: 1F1B on 2 ranks with 2
// microbatches, F = 1 s and B = 2 s on the ideal fabric ends rank 0's last B at (m + p - 1)(F + B)
// = 9 s, rank 1's at 7 s; 0.5 s of optimizer step each makes the iteration 9.5 s (9 s without).
// The same in a CSV profile's optimizer_step column.
TEST(ProfileFile, MeasuredOptimizerStepRunsAfterEachRanksLastAction) {
  auto run = [](const std::string& profile) {
    return Cli({"run", "--schedule", "1F1B", "--pp", "2", "--microbatches", "2", "--profile",
                profile, "--platform", "ideal", "--format", "json"});
  };
  const CliResult r = run(WriteFile("opt.textproto",
                                    "stages { f_s: 1 b_s: 2 optimizer_step: \"500ms\" }\n"));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["makespan_s"].get<double>(), 9.5);
  EXPECT_DOUBLE_EQ(j["ranks"][1]["last_end_s"].get<double>(), 7);
  EXPECT_DOUBLE_EQ(j["ranks"][1]["optimizer_s"].get<double>(), 0.5);
  const CliResult none = run(WriteFile("noopt.textproto", "stages { f_s: 1 b_s: 2 }\n"));
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(none.out)["makespan_s"].get<double>(), 9);
  const CliResult csv =
      run(WriteFile("opt.csv", "stage,f_ms,b_ms,optimizer_step_ms\n0,1000,2000,500\n"));
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(csv.out)["makespan_s"].get<double>(), 9.5);
}

}  // namespace
}  // namespace ppsim
