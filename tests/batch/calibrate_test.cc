// ppsim calibrate end to end (batch/calibrate.h, cli/calibrate.cc, platforms/calibration.h):
// recovering planted parameters, reporting what the data cannot determine, and the errors.
#include "batch/calibrate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace ppsim {
namespace {

struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Small runs of gpt3-1.5b on one H100 node (critical-path engine: each well under 10 ms).
const std::string kModel =
    "--model gpt3-1.5b --platform h100-node --schedule 1F1B "
    "--engine critical-path ";

// What ppsim predicts for `run` with `planted` settings: the JSON field `field`.
double Simulated(const std::string& run, const std::string& planted, const char* field) {
  std::vector<std::string> args = Words("run " + kModel + run + " " + planted + " --format json");
  const CliResult r = Cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out)[field].get<double>();
}

std::string Entry(const std::string& run, const std::string& measured) {
  return "  - run: \"" + kModel + run + "\"\n    " + measured + "\n";
}

char kNumber[64];
std::string Exact(double v) {
  std::snprintf(kNumber, sizeof(kNumber), "%.17g", v);
  return kNumber;
}

TEST(CalibrateTest, RecoversPlantedParameters) {
  // The truth: these three per-GPU values (the preset's are 0.75, 0.85 and the default 3 GiB).
  const std::string planted =
      "--set gpu.matmul_efficiency=0.61 --set gpu.memory_efficiency=0.7 "
      "--memory-reserve 4.5GiB";
  // Runs whose mix of GEMMs, element-wise kernels and attention differs (tp, pp, sequence
  // length, microbatches), so that the parameters are separable.
  const std::vector<std::string> runs = {"--tp 1 --pp 2 --microbatches 4",
                                         "--tp 2 --pp 2 --microbatches 8",
                                         "--tp 4 --pp 1 --microbatches 2 --seq-len 4096"};
  std::string yaml = "measurements:\n";
  for (const std::string& run : runs) {
    yaml += Entry(run, "iteration_time: " + Exact(Simulated(run, planted, "makespan_s")) + "s");
  }
  const std::string mfu_run = "--tp 2 --pp 1 --microbatches 4 --seq-len 2048";
  yaml += Entry(mfu_run, "mfu: " + Exact(Simulated(mfu_run, planted, "mfu")));
  yaml += Entry(runs[0],
                "peak_memory: " + Exact(Simulated(runs[0], planted, "peak_memory_bytes")) + "B");
  const std::string dir = ::testing::TempDir();
  Write(dir + "planted.yaml", yaml);
  const CliResult r =
      Cli({"calibrate", dir + "planted.yaml", "-o", dir + "planted.textproto", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"], "H100 SXM");
  std::map<std::string, nlohmann::json> p;
  for (const nlohmann::json& row : j["parameters"]) p[row["name"]] = row;
  EXPECT_NEAR(p["gpu.matmul_efficiency"]["value"].get<double>(), 0.61, 0.61 * 0.005);
  EXPECT_NEAR(p["gpu.memory_efficiency"]["value"].get<double>(), 0.7, 0.7 * 0.005);
  EXPECT_NEAR(p["memory_reserve"]["value"].get<double>(), 4.5 * (1 << 30), 4.5 * (1 << 30) * 0.005);
  EXPECT_EQ(p["gpu.matmul_efficiency"]["start"].get<double>(), 0.75);
  for (const nlohmann::json& row : j["measurements"]) {
    EXPECT_LT(std::abs(row["residual"].get<double>()), 0.005) << row.dump();
  }
  // The file applies: a run with it predicts as the planted settings do.
  const CliResult applied = Cli(Words("run " + kModel + runs[1] + " --format json --calibration " +
                                      dir + "planted.textproto"));
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_NEAR(nlohmann::json::parse(applied.out)["makespan_s"].get<double>(),
              Simulated(runs[1], planted, "makespan_s"),
              Simulated(runs[1], planted, "makespan_s") * 0.005);
  // Deterministic: the same file gives the same calibration, byte for byte.
  const std::string first = Read(dir + "planted.textproto");
  ASSERT_EQ(Cli({"calibrate", dir + "planted.yaml", "-o", dir + "again.textproto"}).code, 0);
  EXPECT_EQ(Read(dir + "again.textproto"), first);
}

TEST(CalibrateTest, SingleGpuRunsLeaveCommunicationUndetermined) {
  const std::string dir = ::testing::TempDir();
  Write(dir + "single.yaml",
        "measurements:\n" + Entry("--pp 1 --microbatches 2", "iteration_time: 40ms") +
            Entry("--pp 1 --microbatches 4 --seq-len 4096", "iteration_time: 190ms"));
  const CliResult r =
      Cli({"calibrate", dir + "single.yaml", "--format", "json", "-o", dir + "single.textproto"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const nlohmann::json& row : j["parameters"]) {
    const std::string name = row["name"];
    if (name != "intra_node.bandwidth" && name != "nic.bandwidth") continue;
    EXPECT_FALSE(row["determined"].get<bool>()) << name;
    EXPECT_EQ(row["value"].get<double>(), 1) << name;
    EXPECT_EQ(row["why"], "no measurement depends on it (changing it moves no prediction)");
  }
  const std::string file = Read(dir + "single.textproto");
  EXPECT_EQ(file.find("scale {"), std::string::npos) << file;
  EXPECT_NE(file.find("# Undetermined, left at the preset's: nic.bandwidth"), std::string::npos);
}

std::string CalibrateError(const std::string& name, const std::string& yaml) {
  const std::string path = ::testing::TempDir() + name;
  Write(path, yaml);
  const CliResult r = Cli({"calibrate", path});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  const std::string prefix = ::testing::TempDir();
  std::string err = r.err;
  for (size_t at; (at = err.find(prefix)) != std::string::npos;) err.erase(at, prefix.size());
  return err;
}

TEST(CalibrateTest, ErrorsAreLocated) {
  EXPECT_EQ(CalibrateError("e1.yaml", "measurments:\n  - run: \"--pp 1\"\n"),
            "e1.yaml:1:1: measurments: unknown field; did you mean measurements?\n");
  EXPECT_EQ(CalibrateError("e2.yaml", "measurements:\n" + Entry("--pp 1 --tpp 2", "mfu: 0.3")),
            "e2.yaml:2:10: run: --tpp: unknown option; did you mean --pp? see 'ppsim run --help' "
            "for the valid options\n");
  EXPECT_EQ(CalibrateError("e3.yaml",
                           "measurements:\n" + Entry("--pp 1", "iteration_time: 1s\n    mfu: 0.4")),
            "e3.yaml:2:5: measurements[0]: gives both iteration_time and mfu; give exactly one\n");
  EXPECT_EQ(CalibrateError("e4.yaml", "measurements:\n" + Entry("--pp 0", "iteration_time: 1s") +
                                          Entry("--pp 1 --seq-len 'x", "iteration_time: 1s")),
            "e4.yaml:2:10: run: --pp: must be at least 1; got 0\n"
            // kModel is 78 characters, "--pp 1 --seq-len " 17: the quote is the 96th.
            "e4.yaml:4:10: run: unterminated single quote opened at character 96; close it "
            "with '\n");
  const std::string a100 =
      "  - run: \"--model gpt3-1.5b --platform dgx-a100 --schedule 1F1B "
      "--pp 1 --microbatches 2\"\n    iteration_time: 1s\n";
  EXPECT_EQ(
      CalibrateError("e5.yaml", "measurements:\n" +
                                    Entry("--pp 1 --microbatches 2", "iteration_time: 1s") + a100),
      "e5.yaml: measurements on 2 GPUs: H100 SXM (e5.yaml:2:5); A100 SXM4 80GB "
      "(e5.yaml:4:5); a calibration is of one GPU: give each GPU a file of its own\n");
  const CliResult missing = Cli({"calibrate", "/nonexistent/m.yaml"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "/nonexistent/m.yaml: cannot read: No such file or directory\n");
}

TEST(CalibrateTest, ACalibrationIsForItsGpuOnly) {
  const std::string path = ::testing::TempDir() + "h100.textproto";
  Write(path, "gpu: \"H100 SXM\"\nset: \"gpu.matmul_efficiency=0.5\"\n");
  const std::string run =
      "run --model gpt3-1.5b --schedule 1F1B --pp 1 --microbatches 2 "
      "--engine critical-path --calibration " +
      path;
  const CliResult other = Cli(Words(run + " --platform dgx-a100"));
  EXPECT_EQ(other.code, 2);
  EXPECT_EQ(other.err, "--calibration: " + path +
                           " was fitted on H100 SXM; this run's GPU is A100 SXM4 80GB; "
                           "calibrate on this GPU\n");
  // Explicit --set wins over the calibration.
  const CliResult mine = Cli(Words(run + " --platform h100-node --set gpu.matmul_efficiency=0.7"));
  ASSERT_EQ(mine.code, 0) << mine.err;
  EXPECT_NE(mine.out.find("(matmul 0.7, "), std::string::npos) << mine.out;
  const CliResult calibrated = Cli(Words(run + " --platform h100-node"));
  EXPECT_NE(calibrated.out.find("(matmul 0.5, "), std::string::npos) << calibrated.out;
  const CliResult unreadable = Cli(Words(run + ".missing.textproto --platform h100-node"));
  EXPECT_EQ(unreadable.code, 2);
  EXPECT_EQ(unreadable.err, "--calibration: " + path +
                                ".missing.textproto: cannot read: No such file or directory\n");
}

TEST(CalibrateTest, AnExperimentFileNamesItsCalibrationRelativeToItself) {
  const std::string dir = ::testing::TempDir() + "calibrated-experiment/";
  std::filesystem::create_directories(dir);
  Write(dir + "h100.textproto", "gpu: \"H100 SXM\"\nset: \"gpu.matmul_efficiency=0.5\"\n");
  Write(dir + "e.yaml",
        "base: {model: gpt3-1.5b, schedule: 1F1B, pp: 1, microbatches: 2, platform: h100-node, "
        "engine: critical-path, calibration: h100.textproto}\n");
  const CliResult r = Cli({"run", dir + "e.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(matmul 0.5, "), std::string::npos) << r.out;
  Write(dir + "other.yaml",
        "base: {model: gpt3-1.5b, schedule: 1F1B, pp: 1, microbatches: 2, platform: dgx-a100, "
        "calibration: h100.textproto}\n");
  const CliResult other = Cli({"run", dir + "other.yaml"});
  EXPECT_EQ(other.code, 2);
  EXPECT_EQ(other.err, dir + "other.yaml:1:99: base.calibration: " + dir +
                           "h100.textproto was fitted on H100 SXM; this run's GPU is A100 SXM4 "
                           "80GB; calibrate on this GPU\n");
}

TEST(CalibrateTest, SearchCandidatesCarryTheCalibration) {
  const std::string path = ::testing::TempDir() + "search-h100.textproto";
  Write(path, "gpu: \"H100 SXM\"\nset: \"gpu.matmul_efficiency=0.5\"\n");
  const std::vector<std::string> search = {
      "search",    "--model",     "gpt3-1.5b", "--platform",
      "h100-node", "--nodes",     "1",         "--global-batch",
      "8",         "--tp",        "1",         "--pp",
      "2",         "--schedules", "1F1B",      "--microbatch-size",
      "1",         "--recompute", "none",      "-j",
      "1",         "--format",    "json"};
  std::vector<std::string> calibrated = search;
  calibrated.insert(calibrated.end(), {"--calibration", path});
  const CliResult with = Cli(calibrated);
  const CliResult without = Cli(search);
  ASSERT_EQ(with.code, 0) << with.err;
  ASSERT_EQ(without.code, 0) << without.err;
  const nlohmann::json best = nlohmann::json::parse(with.out)["candidates"][0];
  const nlohmann::json preset = nlohmann::json::parse(without.out)["candidates"][0];
  EXPECT_NE(best["command"].get<std::string>().find("--calibration " + path), std::string::npos);
  // Matmul at 0.5 of peak instead of the preset's 0.75: the same candidate, slower.
  EXPECT_GT(best["iteration_s"].get<double>(), preset["iteration_s"].get<double>());
}

}  // namespace
}  // namespace ppsim
