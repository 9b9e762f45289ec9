// Traces loaded into Perfetto's own trace processor (tests/tools/trace-processor/trace-query,
// WebAssembly under node): the counts it imports must be the closed forms, with no import
// errors. Skipped, with a message, when node or npm is missing (CI counts a skip as a failure).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/run.h"
#include "traces/chrome_trace.h"
#include "traces/perfetto_trace.h"
#include "traces/trace.h"
#include "tests/support/cli.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

const char kTraceQuery[] = PPSIM_SOURCE_DIR "/tests/tools/trace-processor/trace-query";

// Runs trace-query on `path` with `queries`, each a "select count(*) ..." with one number;
// returns the numbers, or fails. Exit 77 means node or npm is missing.
std::vector<int64_t> Counts(const std::string& path, const std::vector<std::string>& queries,
                            bool* skipped) {
  std::string command = std::string(kTraceQuery) + " '" + path + "'";
  for (const std::string& q : queries) command += " \"" + q + "\"";
  command += " 2>/dev/null";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  *skipped = WIFEXITED(status) && WEXITSTATUS(status) == 77;
  std::vector<int64_t> counts;
  if (*skipped) return counts;
  EXPECT_EQ(status, 0) << output;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json result = nlohmann::json::parse(line, nullptr, false);
    if (result.is_discarded() || !result.contains("rows") || result["rows"].empty()) {
      ADD_FAILURE() << "trace-query: " << line;
      counts.push_back(-1);
      continue;
    }
    const nlohmann::json& value = result["rows"][0][0];
    counts.push_back(value.is_number() ? value.get<int64_t>() : -1);
  }
  EXPECT_EQ(counts.size(), queries.size()) << output;
  counts.resize(queries.size(), -1);
  return counts;
}

struct Case {
  const char* name;
  proto::RunConfig spec;
  size_t slices;       // compute actions + transfers + all-reduce steps
  size_t flows;        // dependency edges with a transfer or ring step at one end
  size_t counters;     // one per compute stream, and the total
  // Compute slices named for microbatch 1's forward ("F1", or "F1&B4" overlapped), and as many
  // for its backward ("B1", "I1", "F5&B1"): one per virtual stage and replica each.
  size_t stage_replicas;
  size_t overlaps = 0;  // slices named "F<m>&B<n>"
};

proto::RunConfig Spec(const std::string& schedule, int32_t p, int32_t m, const std::string& platform,
             bool split_backward) {
  proto::RunConfig spec;
  spec.set_schedule(schedule);
  spec.set_pp(p);
  spec.set_microbatches(m);
  spec.set_f("1ms");
  if (split_backward) {
    spec.set_i("1ms");
    spec.set_w("1ms");
  } else {
    spec.set_b("2ms");
  }
  spec.set_activation("1GiB");
  spec.set_message_bytes("32MiB");
  spec.set_platform(platform);
  return spec;
}

constexpr size_t kNumCases = 8;

std::vector<Case> Cases() {
  const int32_t p = 4, m = 8;
  std::vector<Case> cases;
  // 1F1B: 2pm actions, 2m(p - 1) transfers, two flows each.
  cases.push_back({"1f1b", Spec("1F1B", p, m, "h100-node", false), 2 * p * m + 2 * m * (p - 1),
                   4 * m * (p - 1), p + 1, p});
  // Interleaved 1F1B, 2 stages per rank: every one of the 2p - 1 boundaries crosses ranks.
  cases.push_back({"interleaved", Spec("Interleaved1F1B", p, m, "ideal", false),
                   2 * 2 * p * m + 2 * m * (2 * p - 1), 4 * m * (2 * p - 1), p + 1, 2 * p});
  // ZB-H1: F, I and W per stage and microbatch.
  cases.push_back({"zb-h1", Spec("ZB-H1", p, m, "h100-node", true), 3 * p * m + 2 * m * (p - 1),
                   4 * m * (p - 1), p + 1, p});
  // DualPipeV: the V's turn (stages p - 1 and p, both on the last rank) needs no transfer; its
  // action count (F&B pairs merge two ops) is the schedule's, conformance-checked against torch.
  Case dual{"dualpipev", Spec("DualPipeV", p, m, "ideal", true), 0, 4 * m * (2 * p - 2), p + 1,
            2 * p};
  {
    PreparedRun prepared;
    EXPECT_TRUE(PrepareRun(SpecOf(dual.spec), &prepared, /*compile=*/false).ok());
    dual.slices = prepared.schedule.NumActions() + 2 * m * (2 * p - 2);
    for (const auto& order : prepared.schedule.orders) {
      for (const Action& action : order) dual.overlaps += action.is_overlap() ? 1 : 0;
    }
  }
  cases.push_back(dual);
  // ZB-H1 with dp = 2 and tp = 2 on two DGX H100 nodes: messages split over 2 GPUs, and per stage
  // and shard a ring member on each of dp replicas, whose 2(dp - 1) steps over one route are one
  // slice (Task::steps).
  Case parallel{"dp2-tp2", Spec("ZB-H1", p, m, "dgx-h100", true), 0, 0, 2 * p + 1, 2 * p};
  parallel.spec.set_grad_bytes("1GiB");
  parallel.spec.set_nodes(2);
  parallel.spec.set_dp(2);
  parallel.spec.set_tp(2);
  parallel.spec.set_replicas("all");
  const size_t transfers = 2 * m * (p - 1) * 2 * 2;
  const size_t members = p * 2 * 2;
  parallel.slices = 2 * 3 * p * m + transfers + members;
  // A ring member's steps follow NCCL's fixed-latency timer (not drawn).
  parallel.flows = 2 * transfers;
  cases.push_back(parallel);
  // The same with replica 0 standing for both (the default): one replica's actions and
  // transfers, and per stage and shard one member's 2(dp - 1) mirrored steps as one slice, after
  // the timer.
  Case folded{"dp2-tp2-folded", parallel.spec, 0, 0, p + 1, p};
  folded.spec.clear_replicas();
  folded.slices = 3 * p * m + transfers / 2 + p * 2;
  folded.flows = transfers;
  cases.push_back(folded);
  // llama3-8b, 1F1B, p 2, m 2, dp 2, tp 2, cp 2 (groups of 4 GPUs), ZeRO-1 and gradient buckets of
  // 5 GB: each stage's 2,007,564,288 (2,007,566,336) parameters per GPU make 8.03 GB of fp32
  // gradients: 2 buckets.
  // Slices: 2 x 2pm actions, 2m(p - 1) boundary crossings x 4 GPUs per replica, per stage and
  // tensor index 2 buckets x (reduce-scatter + all-gather, 3 + 3 steps) x 4 ring members, a tp
  // ring and a cp ring per action, an optimizer step per rank and replica.
  Case rings{"cp2-zero-buckets", proto::RunConfig(), 0, 0, 2 * 2 + 1, 2 * 2};
  rings.spec.set_schedule("1F1B");
  rings.spec.set_pp(2);
  rings.spec.set_microbatches(2);
  rings.spec.set_model("llama3-8b");
  rings.spec.set_seq_len(8192);
  rings.spec.set_platform("dgx-h100");
  rings.spec.set_nodes(2);
  rings.spec.set_dp(2);
  rings.spec.set_tp(2);
  rings.spec.set_cp(2);
  rings.spec.set_zero(1);
  rings.spec.set_grad_bucket("5GB");
  rings.spec.set_replicas("all");
  const size_t actions = 2 * 2 * 2 * 2, crossings = 2 * (2 * 2 * 1 * 4);
  const size_t ring_steps = 2 * 2 * 2 * (3 + 3) * 4;
  rings.slices = actions + crossings + ring_steps + 2 * actions + 2 * 2;
  // Flows: two per transfer; per stage and tensor index, 2 x 2 edges into each of the 2 later
  // steps of 4 rings of 4 members per bucket pair, 4 + 4 chain edges from bucket 0's rings to
  // bucket 1's, 4 from the backwards into the last bucket's reduce-scatter.
  rings.flows = 2 * crossings + 2 * 2 * (4 * (2 * 4 * 2) + 4 + 4 + 4);
  cases.push_back(rings);
  // mixtral-8x7b (32 MoE layers, 16 per stage), 1F1B, p 2, m 2, tp 8 with sequence parallelism
  // and ep 8 over the tensor-parallel GPUs (dp 1: no gradient rings). Slices: 2pm actions, a tp
  // ring each, 2m(p - 1) crossings x 8 GPUs, an optimizer step per rank, and per action its
  // parts: the rest and 16 layers x (2 computes + 2 all-to-alls). Flows: two per transfer, two per
  // all-to-all (from the compute before it, to the one after it) but for a forward's last combine
  // (nothing after it) and a backward's first (nothing before it).
  Case moe{"moe-ep8", proto::RunConfig(), 0, 0, 2 + 1, 2};
  moe.spec.set_schedule("1F1B");
  moe.spec.set_pp(2);
  moe.spec.set_microbatches(2);
  moe.spec.set_model("mixtral-8x7b");
  moe.spec.set_seq_len(1024);
  moe.spec.set_tp(8);
  moe.spec.set_sequence_parallel(true);
  moe.spec.set_ep(8);
  moe.spec.set_platform("dgx-h100");
  moe.spec.set_nodes(2);
  const size_t moe_actions = 2 * 2 * 2, moe_crossings = 2 * 2 * 1 * 8;
  moe.slices = moe_actions + moe_actions + moe_crossings + 2 + moe_actions * (1 + 16 * 4);
  moe.flows = 2 * moe_crossings + moe_actions * (2 * 16 * 2 - 1);
  cases.push_back(moe);
  EXPECT_EQ(cases.size(), kNumCases);
  return cases;
}

class TraceCheck : public ::testing::TestWithParam<size_t> {};

TEST_P(TraceCheck, PerfettoTraceProcessorImportsTheTraceWhole) {
  const std::vector<std::string> queries = {
      // Every slice but the exposed-communication ones (named by kinds: "pp_p2p", "tp+dp").
      "select count(*) from slice where not (name in ('pp_p2p', 'tp', 'cp', 'dp', 'ep_alltoall') "
      "or name glob '*+*')",
      "select count(*) from flow",
      "select count(distinct track_id) from counter",
      "select count(*) from slice where dur < 0",
      "select count(*) from stats where value > 0 and severity in ('error', 'data_loss')",
      "select count(*) from slice where name = 'F1' or name glob 'F1&B*'",
      "select count(*) from slice where name in ('B1', 'I1') or name glob 'F*&B1'",
      "select count(*) from slice where name glob 'F[0-9]*&B[0-9]*'"};
  {
    const Case c = Cases()[GetParam()];
    SCOPED_TRACE(c.name);
    PreparedRun prepared;
    Status status = PrepareRun(SpecOf(c.spec), &prepared);
    ASSERT_TRUE(status.ok()) << status.message();
    RunResult result;
    Timeline timeline;
    status = ExecuteRun(prepared, &result, &timeline);
    ASSERT_TRUE(status.ok()) << status.message();
    TraceRun run{&prepared.schedule, &prepared.costs,    &prepared.graph, &timeline,
                 &prepared.platform, &result.metrics, {{"case", c.name}}};
    const std::string base = ::testing::TempDir() + "/trace_check_" + c.name;
    ASSERT_TRUE(WritePerfettoTrace(run, TraceWindow(), "--trace", base + ".pftrace").ok());
    ASSERT_TRUE(WriteChromeTrace(run, TraceWindow(), "--chrome-trace", base + ".json").ok());
    const std::vector<int64_t> expected = {static_cast<int64_t>(c.slices),
                                           static_cast<int64_t>(c.flows),
                                           static_cast<int64_t>(c.counters),
                                           0,
                                           0,
                                           static_cast<int64_t>(c.stage_replicas),
                                           static_cast<int64_t>(c.stage_replicas),
                                           static_cast<int64_t>(c.overlaps)};
    for (const char* extension : {".pftrace", ".json"}) {
      SCOPED_TRACE(extension);
      bool skipped = false;
      const std::vector<int64_t> counts = Counts(base + extension, queries, &skipped);
      if (skipped) GTEST_SKIP() << "node or npm not found: the trace processor cannot run";
      EXPECT_EQ(counts, expected);
    }
  }
}

// One test per case, so that ctest runs them side by side.
INSTANTIATE_TEST_SUITE_P(Schedules, TraceCheck, ::testing::Range(size_t{0}, kNumCases),
                         [](const auto& info) {
                           std::string name = Cases()[info.param].name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace ppsim
