#include "batch/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/flag_locator.h"
#include "base/shell_words.h"
#include "cli/commands.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "experiments/run_command.h"
#include "models/transformer.h"
#include "schedules/registry.h"

namespace ppsim {
namespace {

using Json = nlohmann::json;

// The small space every test searches: gpt3-1.5b (22 layers, 24 heads) on one DGX H100 node,
// 32 sequences of 1024 tokens, without optimizer sharding (ZeRO 0; Search.MemoryAxes... tests
// that axis). 2 x 2 x 2 x 3 x 2 = 48 candidates and the interleaved V; with the reserve some do
// not fit. No headroom: whatever fits ranks (Search.HeadroomLeavesOutWhatFitsTooTightly tests it).
const std::vector<std::string> kSpace = {"--model",
                                         "gpt3-1.5b",
                                         "--platform",
                                         "dgx-h100",
                                         "--nodes",
                                         "1",
                                         "--global-batch",
                                         "32",
                                         "--memory-reserve",
                                         "64GiB",
                                         "--zero",
                                         "0",
                                         "--tp",
                                         "1,2",
                                         "--pp",
                                         "2,4",
                                         "--microbatch-size",
                                         "1,2",
                                         "--schedules",
                                         "1F1B,ZB-H1,Interleaved1F1B",
                                         "--recompute",
                                         "none",
                                         "--headroom",
                                         "0%"};

struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

CliResult Search(std::vector<std::string> args) {
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::SearchCommand(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The same space, enumerated here on its own and simulated with SimGrid candidate by candidate.
struct Point {
  double tokens_per_s = 0;
  int64_t peak_memory_bytes = 0;
  bool operator==(const Point& o) const {
    return tokens_per_s == o.tokens_per_s && peak_memory_bytes == o.peak_memory_bytes;
  }
};

std::vector<Point> Exhaustive(const std::vector<std::string>& schedules = {"1F1B", "ZB-H1",
                                                                           "Interleaved1F1B"},
                              const std::vector<std::string>& recomputes = {"none"},
                              int64_t min_free_bytes = 0) {
  std::vector<Point> points;
  std::set<std::string> seen;
  for (int tp : {1, 2}) {
    for (int pp : {2, 4}) {
      for (int b : {1, 2}) {
        for (const std::string& schedule : schedules) {
          for (const std::string& recompute : recomputes) {
            for (bool balanced : {false, true}) {
             // V: the schedule's own, and for an interleaved one every V >= 2 dividing the
             // layer slots of a rank (22 layers, 24 with the embedding and loss counted).
             const int slots = 22 + (balanced ? 2 : 0);
             std::vector<int> vs = {0};
             if (FindSchedule(schedule)->any_stages_per_rank && slots % pp == 0) {
               for (int v = 2; v <= slots / pp; ++v) {
                 if ((slots / pp) % v == 0) vs.push_back(v);
               }
             }
             for (int v : vs) {
              proto::RunConfig c;
              c.set_model("gpt3-1.5b");
              c.set_platform("dgx-h100");
              c.set_nodes(1);
              c.set_global_batch("32");
              c.set_memory_reserve("64GiB");
              c.set_schedule(schedule);
              c.set_tp(tp);
              c.set_pp(pp);
              c.set_dp(8 / (tp * pp));
              c.set_microbatch_size(b);
              c.set_sequence_parallel(tp > 1);
              c.set_embedding_as_layer(balanced);
              c.set_loss_as_layer(balanced);
              c.set_recompute(recompute);
              if (v > 0) c.set_stages_per_rank(v);
              RunRequest request;
              if (!ResolveRun(c, std::make_shared<FlagLocator>(), {}, &request).ok()) continue;
              PreparedRun run;
              if (!PrepareRun(request.runs[0], &run).ok()) continue;
              RunResult result;
              EXPECT_TRUE(ExecuteRun(run, &result).ok());
              if (result.metrics.oom_ranks > 0) continue;
              bool tight = false;
              for (const RankMetrics& r : result.metrics.ranks) {
                tight = tight || r.memory_capacity_bytes - r.peak_memory_bytes < min_free_bytes;
              }
              if (tight) continue;
              Point p;
              p.tokens_per_s = result.tokens_per_s;
              for (const RankMetrics& r : result.metrics.ranks) {
                p.peak_memory_bytes = std::max(p.peak_memory_bytes, r.peak_memory_bytes);
              }
              // A configuration equal to another (a balanced split that comes out even) once.
              std::string signature = schedule + " " + recompute + " " + std::to_string(tp) + " " +
                                      std::to_string(pp) + " " + std::to_string(b) + ":";
              for (int32_t layers : run.layers_per_stage) signature += " " + std::to_string(layers);
              signature += " V" + std::to_string(run.schedule.num_stages);
              if (seen.insert(signature).second) points.push_back(p);
             }
            }
          }
        }
      }
    }
  }
  return points;
}

// The points no other point beats in both throughput and memory, by increasing memory (ties: one).
std::vector<Point> Front(std::vector<Point> points) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return a.tokens_per_s != b.tokens_per_s ? a.tokens_per_s > b.tokens_per_s
                                            : a.peak_memory_bytes < b.peak_memory_bytes;
  });
  std::vector<Point> front;
  for (const Point& p : points) {
    if (front.empty() || p.peak_memory_bytes < front.back().peak_memory_bytes) front.push_back(p);
  }
  return front;
}

std::vector<Point> PointsOf(const Json& list) {
  std::vector<Point> points;
  for (const Json& c : list) {
    points.push_back(
        {c.at("tokens_per_s").get<double>(), c.at("peak_memory_bytes").get<int64_t>()});
  }
  return points;
}

TEST(Search, BestAndFrontEqualExhaustiveSimulation) {
  const CliResult r = Search(With(kSpace, {"--format", "json", "-j", "2"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const std::vector<Point> all = Exhaustive();
  ASSERT_FALSE(all.empty());
  const std::vector<Point> front = Front(all);
  // Some candidates run out of memory with the 64 GiB reserve, and some fit.
  EXPECT_GT(j.at("counts").at("oom").get<int>(), 0);
  ASSERT_FALSE(j.at("candidates").empty());
  EXPECT_EQ(j["candidates"][0]["tokens_per_s"].get<double>(), front[0].tokens_per_s);
  EXPECT_EQ(PointsOf(j.at("pareto")), front);
  // The top K are the K best of the exhaustive list.
  std::vector<double> best;
  for (const Point& p : all) best.push_back(p.tokens_per_s);
  std::sort(best.rbegin(), best.rend());
  const std::vector<Point> top = PointsOf(j.at("candidates"));
  for (size_t k = 0; k < top.size(); ++k) EXPECT_EQ(top[k].tokens_per_s, best[k]) << k;
  EXPECT_EQ(top.size(), std::min<size_t>(10, all.size()));
}

// --headroom 6GiB: a candidate must leave 6 GiB of the 80 GB free to rank. The ranking is the
// exhaustive one over the candidates that do; those that fit with less are counted apart.
TEST(Search, HeadroomLeavesOutWhatFitsTooTightly) {
  std::vector<std::string> space(kSpace.begin(), kSpace.end() - 2);  // without --headroom 0%
  const int64_t headroom = int64_t{6} << 30;
  const CliResult r = Search(With(space, {"--headroom", "6GiB", "--format", "json", "-j", "2"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const std::vector<Point> all = Exhaustive({"1F1B", "ZB-H1", "Interleaved1F1B"}, {"none"});
  const std::vector<Point> roomy =
      Exhaustive({"1F1B", "ZB-H1", "Interleaved1F1B"}, {"none"}, headroom);
  ASSERT_FALSE(roomy.empty());
  // Some fit with less than 6 GiB free (the 64 GiB reserve leaves 16 GB for the rest).
  EXPECT_EQ(j.at("counts").at("no_headroom").get<size_t>(), all.size() - roomy.size());
  EXPECT_GT(all.size(), roomy.size());
  EXPECT_EQ(PointsOf(j.at("pareto")), Front(roomy));
  for (const Json& c : j.at("candidates")) {
    EXPECT_GE(c.at("free_memory_bytes").get<int64_t>(), headroom);
  }
  // A percentage of the GPU's memory, or a size; nothing else.
  EXPECT_EQ(Search(With(space, {"--headroom", "100%"})).code, 2);
  EXPECT_EQ(Search(With(space, {"--headroom", "-1%"})).code, 2);
  const CliResult bad = Search(With(space, {"--headroom", "lots"}));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--headroom: "), std::string::npos) << bad.err;
}

// Ties: a ranked candidate within 3% of the best's iteration is marked, the others not. Llama 3
// 8B with 1F1B on one node: microbatch sizes 1, 2 and 4 and recomputation none or selective come
// within a few percent of each other.
const std::vector<std::string> kTieSpace = {"--model",
                                            "llama3-8b",
                                            "--platform",
                                            "dgx-h100",
                                            "--nodes",
                                            "1",
                                            "--global-batch",
                                            "64",
                                            "--seq-len",
                                            "4096",
                                            "--pp",
                                            "2",
                                            "--tp",
                                            "2,4",
                                            "--schedules",
                                            "1F1B",
                                            "--microbatch-size",
                                            "1,2,4",
                                            "--headroom",
                                            "0%"};

TEST(Search, TiesOfTheBestAreThoseWithinTheModelsUncertainty) {
  const CliResult r = Search(With(kTieSpace, {"--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& ranked = j.at("candidates");
  ASSERT_GT(ranked.size(), 2u);
  const double best = ranked[0].at("iteration_s").get<double>();
  EXPECT_FALSE(ranked[0].at("tie_of_best").get<bool>());
  size_t ties = 0;
  for (size_t k = 1; k < ranked.size(); ++k) {
    const double t = ranked[k].at("iteration_s").get<double>();
    EXPECT_EQ(ranked[k].at("tie_of_best").get<bool>(), t <= best * 1.03) << k;
    ties += t <= best * 1.03;
  }
  EXPECT_GT(ties, 0u);
  EXPECT_LT(ties + 1, ranked.size());  // and some are not
  const CliResult table = Search(kTieSpace);
  EXPECT_NE(table.out.find("= a tie of the best: within 3%"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\n2= "), std::string::npos) << table.out;
}

// Nothing fits (a reserve as large as the GPU): exit 1, not an empty success, with the counts by
// cause and the least memory a candidate needs.
TEST(Search, AnInfeasibleSearchExitsOneWithADiagnosis) {
  std::vector<std::string> space = kSpace;
  *std::find(space.begin(), space.end(), "64GiB") = "80GiB";
  const CliResult r = Search(space);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("ppsim search: no candidate ranks: of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" out of memory, 0 fit without the headroom free"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("The least memory a candidate needs is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ppsim run --schedule "), std::string::npos) << r.err;
}

// The diagnosis's levers: the least-memory candidate with one change each, and all together;
// each one's peak is what `ppsim run` reports for its command (offload's a lower bound on it), and
// it ranks exactly when that peak leaves the headroom free.
TEST(Search, TheDiagnosisEvaluatesEachLeverAsPpsimRunWould) {
  const CliResult r = Search({"--model", "gpt3-1.5b", "--platform", "dgx-h100", "--nodes", "1",
                              "--global-batch", "32", "--memory-reserve", "72GiB", "--tp", "1",
                              "--pp", "2", "--microbatch-size", "2", "--schedules", "1F1B",
                              "--recompute", "none", "--zero", "0", "--layouts", "even",
                              "--headroom", "0%", "--format", "json"});
  ASSERT_EQ(r.code, 1) << r.err;
  const Json diagnosis = Json::parse(r.out).at("diagnosis");
  const Json& levers = diagnosis.at("levers");
  // Full recomputation, ZeRO 3, offload, microbatch size 1, twice the GPUs, all together.
  ASSERT_EQ(levers.size(), 6u) << diagnosis.dump();
  EXPECT_NE(levers.back().at("command").get<std::string>().find("--pp 4"), std::string::npos);
  for (const Json& lever : levers) {
    std::vector<std::string> words;
    ASSERT_TRUE(SplitShellWords(lever.at("command").get<std::string>(), &words).ok());
    words.erase(words.begin(), words.begin() + 2);  // "ppsim run"
    words.insert(words.end(), {"--format", "json"});
    std::ostringstream out, err;
    ASSERT_EQ(cli::RunCommand(words, out, err), 0) << err.str();
    const int64_t peak = Json::parse(out.str()).at("peak_memory_bytes").get<int64_t>();
    if (lever.at("lower_bound").get<bool>()) {
      // Offload: copies taken as instant, a bound on the timeline's peak.
      EXPECT_LE(lever.at("peak_memory_bytes").get<int64_t>(), peak) << lever.at("change");
      continue;
    }
    EXPECT_EQ(lever.at("peak_memory_bytes").get<int64_t>(), peak) << lever.at("change");
    EXPECT_EQ(lever.at("ranks").get<bool>(),
              peak <= lever.at("memory_capacity_bytes").get<int64_t>())
        << lever.at("change");
  }
}

// Llama 3's own 405B configuration on 16,384 H100s (the paper's Table 4 and Sec. 3.3.2: TP 8, PP
// 16, DP 128, V 8 with the embedding and the loss as first and last chunks, 126 layers + 2 = 128
// chunks; no recomputation; gradients and optimizer state sharded) is a candidate: V 8 divides a
// rank's 8 slots, and ZeRO 2 reduces in Megatron's default bucket for dp 128, 1M x 128 fp32
// elements = 512,000,000 bytes. With the 3 GiB reserve it is out of memory (exit 1).
TEST(Search, Llama3sOwn405BConfigurationIsACandidate) {
  const CliResult r = Search({"--model", "llama3-405b", "--platform", "dgx-h100", "--gpus",
                              "16384", "--global-batch", "2048", "--seq-len", "8192", "--tp", "8",
                              "--pp", "16", "--schedules", "Interleaved1F1B", "--stages-per-rank",
                              "8", "--layouts", "balanced", "--zero", "2", "--recompute", "none",
                              "--microbatch-size", "1", "--format", "json"});
  ASSERT_EQ(r.code, 1) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j.at("counts").at("evaluated").get<int>(), 1);
  EXPECT_EQ(j.at("counts").at("oom").get<int>(), 1);
  const std::string command = j.at("diagnosis").at("command").get<std::string>();
  for (const char* flag : {"--schedule Interleaved1F1B", "--pp 16", "--stages-per-rank 8",
                           "--embedding-as-layer --loss-as-layer", "--tp 8", "--dp 128",
                           "--zero 2", "--grad-bucket 512000000B", "--recompute none"}) {
    EXPECT_NE(command.find(flag), std::string::npos) << flag << " in " << command;
  }
}

// The memory axes: ZeRO 1, 2 (with Megatron's default gradient bucket, max(40M, 1M x dp) fp32
// elements) and 3, and recomputation of modules beside none, on tp 2 x pp 2 x dp 2 with 1F1B: the
// ranking and the front are those of simulating each configuration, written here as `ppsim run`
// takes it.
TEST(Search, MemoryAxesEqualExhaustiveSimulation) {
  const CliResult r = Search({"--model", "gpt3-1.5b", "--platform", "dgx-h100", "--nodes", "1",
                              "--global-batch", "32", "--memory-reserve", "64GiB", "--tp", "2",
                              "--pp", "2", "--microbatch-size", "1", "--schedules", "1F1B",
                              "--recompute", "none,layernorm+mlp", "--headroom", "0%", "--layouts",
                              "even", "--format", "json", "-j", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  std::vector<Point> all;
  for (int zero : {1, 2, 3}) {
    for (const char* modules : {"", "layernorm,mlp"}) {
      proto::RunConfig c;
      c.set_model("gpt3-1.5b");
      c.set_platform("dgx-h100");
      c.set_nodes(1);
      c.set_global_batch("32");
      c.set_memory_reserve("64GiB");
      c.set_schedule("1F1B");
      c.set_tp(2);
      c.set_pp(2);
      c.set_dp(2);
      c.set_microbatch_size(1);
      c.set_sequence_parallel(true);
      c.set_zero(zero);
      if (zero == 2) c.set_grad_bucket("160000000B");  // 40M x 4 bytes: dp 2 is below 40
      c.set_recompute(*modules ? "selective" : "none");
      if (*modules) c.set_recompute_modules(modules);
      RunRequest request;
      ASSERT_TRUE(ResolveRun(c, std::make_shared<FlagLocator>(), {}, &request).ok());
      PreparedRun run;
      ASSERT_TRUE(PrepareRun(request.runs[0], &run).ok());
      RunResult result;
      ASSERT_TRUE(ExecuteRun(run, &result).ok());
      if (result.metrics.oom_ranks > 0) continue;
      Point p;
      p.tokens_per_s = result.tokens_per_s;
      for (const RankMetrics& rank : result.metrics.ranks) {
        p.peak_memory_bytes = std::max(p.peak_memory_bytes, rank.peak_memory_bytes);
      }
      all.push_back(p);
    }
  }
  ASSERT_EQ(j.at("counts").at("evaluated").get<int>(), 6);
  EXPECT_EQ(PointsOf(j.at("pareto")), Front(all));
  std::vector<double> best;
  for (const Point& p : all) best.push_back(p.tokens_per_s);
  std::sort(best.rbegin(), best.rend());
  const std::vector<Point> top = PointsOf(j.at("candidates"));
  ASSERT_EQ(top.size(), all.size());
  for (size_t k = 0; k < top.size(); ++k) EXPECT_EQ(top[k].tokens_per_s, best[k]) << k;
  // Each candidate says what it runs: its ZeRO stage and its recomputed modules.
  std::set<std::pair<int, std::string>> seen;
  for (const Json& c : j.at("candidates")) {
    seen.insert({c.at("zero").get<int>(), c.at("recompute_modules").get<std::string>()});
  }
  EXPECT_EQ(seen.size(), all.size());
}

// The schedules found from costs or by greedy reordering, DualPipe's two copies, and
// recomputation, over the same tp, pp and microbatch sizes.
TEST(Search, BestAndFrontEqualExhaustiveSimulationOfOtherSchedules) {
  const std::vector<std::string> schedules = {"ZB-auto", "ZB-2p", "V-Half", "V-Min", "DualPipe"};
  const std::vector<std::string> recomputes = {"none", "full"};
  std::vector<std::string> space(kSpace.begin(), kSpace.end() - 6);  // without the schedules
  space.insert(space.end(), {"--schedules", "ZB-auto,ZB-2p,V-Half,V-Min,DualPipe", "--recompute",
                             "none,full", "--headroom", "0%", "--format", "json", "-j", "2"});
  const CliResult r = Search(space);
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const std::vector<Point> all = Exhaustive(schedules, recomputes);
  ASSERT_GT(all.size(), 10u);
  EXPECT_EQ(PointsOf(j.at("pareto")), Front(all));
  std::vector<double> best;
  for (const Point& p : all) best.push_back(p.tokens_per_s);
  std::sort(best.rbegin(), best.rend());
  const std::vector<Point> top = PointsOf(j.at("candidates"));
  ASSERT_EQ(top.size(), 10u);
  for (size_t k = 0; k < top.size(); ++k) EXPECT_EQ(top[k].tokens_per_s, best[k]) << k;
}

TEST(Search, TopCommandReproducesItsRun) {
  const CliResult r = Search(With(kSpace, {"--format", "json", "--top", "1"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const Json best = Json::parse(r.out).at("candidates").at(0);
  std::istringstream words(best.at("command").get<std::string>());
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  ASSERT_GE(args.size(), 2u);
  EXPECT_EQ(args[0], "ppsim");
  EXPECT_EQ(args[1], "run");
  args.erase(args.begin(), args.begin() + 2);
  args.insert(args.end(), {"--format", "json"});
  std::ostringstream out, err;
  ASSERT_EQ(cli::RunCommand(args, out, err), 0) << err.str();
  const Json run = Json::parse(out.str());
  EXPECT_EQ(run.at("tokens_per_s").get<double>(), best.at("tokens_per_s").get<double>());
  EXPECT_EQ(run.at("peak_memory_bytes").get<int64_t>(),
            best.at("peak_memory_bytes").get<int64_t>());
}

// The ideal cluster is sized to each run: the GPUs searched over are --gpus, as one node.
TEST(Search, OnTheIdealClusterEveryCandidateUsesTheGpusGiven) {
  const CliResult r = Search({"--model", "gpt3-1.5b", "--platform", "ideal", "--gpus", "8",
                              "--global-batch", "32", "--schedules", "1F1B", "--recompute", "none",
                              "--microbatch-size", "1", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_FALSE(j.at("candidates").empty());
  for (const Json& c : j.at("candidates")) {
    EXPECT_EQ(c.at("tp").get<int>() * c.at("pp").get<int>() * c.at("dp").get<int>(), 8)
        << c.at("command");
  }
}

// The rows of a search's CSV, each as column name -> cell.
std::vector<std::map<std::string, std::string>> CsvRows(const std::string& text) {
  auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    for (size_t s = 0, e; s <= line.size(); s = e + 1) {
      e = std::min(line.find(',', s), line.size());
      out.push_back(line.substr(s, e - s));
    }
    return out;
  };
  std::istringstream csv(text);
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = cells(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(csv, line)) {
    const std::vector<std::string> row = cells(line);
    rows.emplace_back();
    for (size_t k = 0; k < header.size() && k < row.size(); ++k) rows.back()[header[k]] = row[k];
  }
  return rows;
}

TEST(Search, BoundsHoldOnEverySimulatedCandidate) {
  // Two nodes: data-parallel all-reduces and pipeline transfers share links, so SimGrid's
  // contention can make it slower than the critical path, and the work bound leaves the
  // all-reduces out.
  const CliResult r = Search({"--model", "gpt3-1.5b", "--platform", "dgx-h100", "--nodes", "2",
                              "--global-batch", "64", "--tp", "1,2", "--pp", "2,4",
                              "--microbatch-size", "2", "--schedules",
                              "1F1B,ZB-H1,Interleaved1F1B,DualPipe,ZBVZeroBubble", "--recompute",
                              "none", "--top", "100", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  int rows = 0;
  for (const auto& row : CsvRows(r.out)) {
    const double work = std::stod(row.at("work_bound_s"));
    const double critical = std::stod(row.at("critical_path_s"));
    const double simgrid = std::stod(row.at("iteration_s"));
    EXPECT_LE(work, critical * (1 + 1e-12)) << row.at("command");
    EXPECT_LE(critical, simgrid * (1 + 1e-12)) << row.at("command");
    ++rows;
  }
  EXPECT_GT(rows, 10);
}

TEST(Search, WorkBoundIsTheCriticalPathWhereOnlyComputeAndTransfersRun) {
  // One replica (dp 1) on one node: no data-parallel collective, tensor-parallel rings on NVLink.
  // The bound's longest path through the actions, with their rings and transfers uncontended
  // and the optimizer steps, is then what the critical-path engine computes over the compiled
  // DAG, for every schedule: V shapes, overlapped actions and split backwards alike.
  const CliResult r =
      Search({"--model", "gpt3-1.5b", "--platform", "dgx-h100", "--gpus", "8", "--global-batch",
              "32", "--tp", "1,2", "--pp", "4,8", "--microbatch-size", "1", "--recompute", "none",
              "--zero", "1", "--top", "1000", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> schedules;
  for (const auto& row : CsvRows(r.out)) {
    if (row.at("dp") != "1") continue;
    const double work = std::stod(row.at("work_bound_s"));
    const double critical = std::stod(row.at("critical_path_s"));
    EXPECT_NEAR(work, critical, critical * 1e-12) << row.at("command");
    schedules.insert(row.at("schedule"));
  }
  for (const char* s : {"1F1B", "GPipe", "ZB-H1", "ZB-H2", "Interleaved1F1B", "DualPipe",
                        "DualPipeV", "ZBVZeroBubble", "V-Half", "V-Min"}) {
    EXPECT_TRUE(schedules.count(s)) << s;
  }
}

TEST(Search, SameJsonForAnyJobs) {
  const CliResult one = Search(With(kSpace, {"--format", "json", "-j", "1", "--top", "3"}));
  const CliResult two = Search(With(kSpace, {"--format", "json", "-j", "2", "--top", "3"}));
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
}

TEST(Search, ShardsTogetherGiveTheWholeRankingAndCounts) {
  const Json whole = Json::parse(Search(With(kSpace, {"--format", "json"})).out);
  std::vector<Json> merged;
  int64_t evaluated = 0, oom = 0, duplicates = 0;
  for (const char* shard : {"0/2", "1/2"}) {
    const CliResult r = Search(With(kSpace, {"--format", "json", "--shard", shard}));
    ASSERT_EQ(r.code, 0) << r.err;
    const Json j = Json::parse(r.out);
    for (const Json& c : j.at("candidates")) merged.push_back(c);
    evaluated += j["counts"]["evaluated"].get<int64_t>();
    oom += j["counts"]["oom"].get<int64_t>();
    duplicates += j["counts"]["duplicates"].get<int64_t>();
  }
  // Best first: iteration time, then peak memory, then enumeration order (batch/search.h).
  std::sort(merged.begin(), merged.end(), [](const Json& a, const Json& b) {
    return std::tuple(a["iteration_s"].get<double>(), a["peak_memory_bytes"].get<int64_t>(),
                      a["index"].get<int64_t>()) < std::tuple(b["iteration_s"].get<double>(),
                                                              b["peak_memory_bytes"].get<int64_t>(),
                                                              b["index"].get<int64_t>());
  });
  const Json& top = whole["candidates"];
  ASSERT_GE(merged.size(), top.size());
  for (size_t k = 0; k < top.size(); ++k) EXPECT_EQ(merged[k]["command"], top[k]["command"]) << k;
  EXPECT_EQ(evaluated, whole["counts"]["evaluated"].get<int64_t>());
  EXPECT_EQ(oom, whole["counts"]["oom"].get<int64_t>());
  EXPECT_EQ(duplicates, whole["counts"]["duplicates"].get<int64_t>());
}

TEST(RunCommandLine, EverySetFieldAsItsFlag) {
  proto::RunConfig c;
  c.set_schedule("ZB-H1");
  c.set_pp(4);
  c.set_global_batch("4Mitok");
  c.set_sequence_parallel(true);
  c.set_embedding_as_layer(false);
  c.set_efficiency(0.5);
  c.add_set("nic.bandwidth=200Gbps");
  c.set_model("my model.yaml");
  EXPECT_EQ(RunCommandLine(c, FlagLocator()),
            "ppsim run --schedule ZB-H1 --pp 4 --global-batch 4Mitok --model 'my model.yaml' "
            "--sequence-parallel --efficiency 0.5 --set nic.bandwidth=200Gbps");
}

TEST(Search, BadInputIsExitTwoWithTheFlag) {
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--platform", "dgx-h100", "--nodes", "1", "--global-batch", "32"},
       "--model: required; give a preset (" + TransformerPresetNames() + ") or a model file\n"},
      {{"--model", "gpt3-1.5b", "--platform", "dgx-h100", "--gpus", "12", "--global-batch", "32"},
       "--gpus: 12 is not a multiple of the 8 GPUs per node of dgx-h100; give a multiple of 8, "
       "or --nodes\n"},
      {{"--model", "gpt3-1.5b", "--platform", "ideal", "--global-batch", "32"},
       "--gpus: required with ideal, which has as many GPUs as a run needs; give the GPUs to "
       "search over, e.g. --gpus 64\n"},
      {{"--model", "gpt3-1.5b", "--platform", "dgx-h100", "--nodes", "1"},
       "--global-batch: required; give sequences per iteration (1024) or tokens (4Mitok)\n"},
      {{"--model",
        "gpt3-1.5b",
        "--platform",
        "dgx-h100",
        "--nodes",
        "1",
        "--global-batch",
        "7",
        "--tp",
        "1",
        "--pp",
        "1",
        "--microbatch-size",
        "2",
        "--schedules",
        "1F1B",
        "--stages-per-rank",
        "1",
        "--recompute",
        "none"},
       "ppsim search: no valid configuration among 6 candidates: --global-batch: 7 sequences are "
       "not a multiple of --dp 8 x --microbatch-size 2 = 16 (6 candidates)\n"},
      {{"--model", "gpt3-1.5b", "--nodes", "1", "--global-batch", "32", "--schedules", "1F1C"},
       "--schedules: unknown schedule '1F1C'; valid: " + ScheduleNames() +
           " (did you mean 1F1B?)\n"},
      {{"--model", "gpt3-1.5b", "--nodes", "1", "--global-batch", "32", "--tp", "1,x"},
       "--tp: invalid value 'x'; expected a whole number >= 1\n"},
      {{"--model", "gpt3-1.5b", "--nodes", "1", "--global-batch", "32", "--format", "xml"},
       "--format: unknown format 'xml'; valid: table, json, csv\n"},
      {{"--model", "gpt3-1.5b", "--nodes", "1", "--global-batch", "32", "--shard", "2/2"},
       "--shard: invalid shard '2/2'; give I/N with 0 <= I < N, e.g. --shard 0/4\n"},
  };
  for (const auto& c : cases) {
    const CliResult r = Search(c.args);
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_EQ(r.err, c.message);
  }
}

}  // namespace
}  // namespace ppsim
