#include "interop/kineto_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/files.h"
#include "interop/trace_profile.h"

namespace ppsim {
namespace {

const std::string kData = std::string(PPSIM_SOURCE_DIR) + "/tests/data/profiler/";

ProfilerTrace Read(const std::vector<std::string>& names, bool ranks_in_order = false) {
  std::vector<std::string> files;
  for (const std::string& n : names) files.push_back(kData + n);
  ProfilerTrace trace;
  const Status status = ReadKinetoTraces(files, ranks_in_order, &trace);
  EXPECT_TRUE(status.ok()) << status.message();
  return trace;
}

std::string ReadError(const std::vector<std::string>& names) {
  std::vector<std::string> files;
  for (const std::string& n : names) files.push_back(kData + n);
  ProfilerTrace trace;
  const Status status = ReadKinetoTraces(files, false, &trace);
  EXPECT_FALSE(status.ok());
  std::string message = status.message();
  // Messages name the files by the paths given; the test compares them from the data folder on.
  for (size_t at; (at = message.find(kData)) != std::string::npos;) message.erase(at, kData.size());
  return message;
}

// Expected values from the fixture by an independent computation:
//   python3 -c "import json,gzip; ev=json.load(gzip.open('hta/nccl_data.json.gz'))['traceEvents'];
//     k=[e for e in ev if e.get('cat')=='kernel' and e['name'].startswith('ncclKernel_AllReduce')];
//     print(len(k), sum(e['args']['In msg nelems']*4 for e in k), sum(e['dur'] for e in k))"
//   -> 15 306684384 46762.159 (dtype Float, 4 bytes); Broadcast likewise: 6 kernels, 3 of 53120
//   Float and 3 of 53 Long (8 bytes) = 638712 bytes, 114.334 us. Steps #4-#6: 222442.191,
//   219726.905, 224936.243 us. Union of the 3774 kernel/memcpy/memset intervals, in exact decimals
//   (json.load(..., parse_float=Decimal)): 157500.014 us, over the steps' span of 667225.958 us.
TEST(KinetoTrace, NcclAllReduceAndBroadcastKernelsOfHtaTrace) {
  const ProfilerTrace trace = Read({"hta/nccl_data.json.gz"});
  ASSERT_EQ(trace.ranks.size(), 1u);
  const TraceRank& r = trace.ranks[0];
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_EQ(r.backend, "nccl");
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].name, "ProfilerStep#4");
  EXPECT_NEAR(r.steps[0].duration_s, 222442.191e-6, 1e-9);
  EXPECT_NEAR(r.steps[2].duration_s, 224936.243e-6, 1e-9);
  EXPECT_TRUE(r.has_gpu);
  EXPECT_NEAR(r.gpu_busy_s, 157500.014e-6, 1e-9);
  EXPECT_NEAR(r.wall_s, 667225.958e-6, 1e-8);
  TraceAnalysis analysis;
  ASSERT_TRUE(AnalyzeTrace(trace, &analysis).ok());
  ASSERT_EQ(analysis.collectives.size(), 2u);
  EXPECT_EQ(analysis.collectives[0].kind, TraceCollectiveKind::kAllReduce);
  EXPECT_EQ(analysis.collectives[0].count, 15);
  EXPECT_EQ(analysis.collectives[0].bytes, 306684384);
  EXPECT_NEAR(analysis.collectives[0].kernel_s, 46762.159e-6, 1e-8);
  EXPECT_EQ(analysis.collectives[1].kind, TraceCollectiveKind::kBroadcast);
  EXPECT_EQ(analysis.collectives[1].count, 6);
  EXPECT_EQ(analysis.collectives[1].bytes, 638712);
  EXPECT_NEAR(analysis.collectives[1].kernel_s, 114.334e-6, 1e-9);
  EXPECT_TRUE(analysis.stages.empty());  // a DDP trace: no pipeline actions
}

// SendRecv kernels launched inside an nccl:all_to_all range are all-to-alls:
//   python3: for each ncclKernel_SendRecv kernel, its cuda_runtime launch (same
//   args.correlation) inside an 'nccl:all_to_all' cpu_op -> rank 0: 4 all_to_all (182403 us),
//   6 send_recv (213796 us); rank 1: 4 (229700 us), 6 (149353 us). Steps #551, #552 on rank 0:
//   607312, 622928 us; rank 1: 607904, 630639 us.
TEST(KinetoTrace, SendRecvUnderAllToAllOfTwoHtaRanks) {
  const ProfilerTrace trace = Read({"hta/sampled_rank-1.json.gz", "hta/sampled_rank-0.json.gz"});
  ASSERT_EQ(trace.ranks.size(), 2u);
  EXPECT_EQ(trace.ranks[0].rank, 0);  // put in rank order
  EXPECT_EQ(trace.ranks[1].world_size, 128);
  TraceAnalysis analysis;
  ASSERT_TRUE(AnalyzeTrace(trace, &analysis).ok());
  // The nccl:all_reduce ranges are not counted: with NCCL kernels, the kernels are the collectives.
  ASSERT_EQ(analysis.collectives.size(), 2u);
  EXPECT_EQ(analysis.collectives[0].kind, TraceCollectiveKind::kAllToAll);
  EXPECT_EQ(analysis.collectives[0].count, 8);
  EXPECT_NEAR(analysis.collectives[0].kernel_s, (182403 + 229700) * 1e-6, 1e-9);
  EXPECT_EQ(analysis.collectives[1].kind, TraceCollectiveKind::kSendRecv);
  EXPECT_EQ(analysis.collectives[1].count, 12);
  EXPECT_NEAR(analysis.collectives[1].kernel_s, (213796 + 149353) * 1e-6, 1e-9);
  ASSERT_EQ(analysis.steps.size(), 2u);
  EXPECT_NEAR(analysis.steps[0].duration_s, (607312 + 607904) / 2 * 1e-6, 1e-9);
  EXPECT_NEAR(analysis.median_step_s, (622928 + 630639) / 2.0 * 1e-6, 1e-9);
}

// The CPU 1F1B traces (tests/data/profiler/make_traces.py), by the rules of trace_profile.h
// computed independently in Python over the JSON (recorded in tests/data/profiler/expected.py):
//   python3 expected.py cpu_1f1b rank0.pt.trace.json.gz rank1.pt.trace.json.gz
//   steps (median over the 2 ranks) #0 566900.5, #1 640156, #2 636589.5, #3 618391.5 us;
//   median steady 636589.5; (stage, F) 12 samples: stage 0 median 55314 (52842..60305),
//   stage 1 55717.5; B: stage 0 46391, stage 1 70482.5; p10 of 24 receive waits: 160 us.
TEST(KinetoTrace, CpuOneFOneBStageMedians) {
  const ProfilerTrace trace =
      Read({"cpu_1f1b/rank0.pt.trace.json.gz", "cpu_1f1b/rank1.pt.trace.json.gz"}, true);
  ASSERT_EQ(trace.ranks.size(), 2u);
  EXPECT_EQ(trace.ranks[1].world_size, 2);
  TraceAnalysis analysis;
  const Status status = AnalyzeTrace(trace, &analysis);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(analysis.gpu);
  ASSERT_EQ(analysis.steps.size(), 4u);
  EXPECT_FALSE(analysis.steps[0].steady);
  EXPECT_NEAR(analysis.steps[0].duration_s, 566900.5e-6, 1e-9);
  EXPECT_NEAR(analysis.median_step_s, 636589.5e-6, 1e-9);
  ASSERT_EQ(analysis.num_stages, 2);
  EXPECT_EQ(analysis.num_microbatches, 4);
  EXPECT_EQ(analysis.stages[0].f.count, 12);
  EXPECT_NEAR(analysis.stages[0].f.median_s, 55314e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[0].f.min_s, 52842e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[0].f.max_s, 60305e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[1].f.median_s, 55717.5e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[0].b.median_s, 46391e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[1].b.median_s, 70482.5e-6, 1e-9);
  EXPECT_NEAR(analysis.p2p.median_s, 160e-6, 1e-9);
  // Means (the profile's): stage 0 F 55386.4167 us, stage 1 B 71393.9167 us; the mean steady
  // step 631712.3333 us; outside the actions, the least over the ranks per steady step 1313,
  // 1605 and 1571 us, mean 1496.3333 us.
  EXPECT_NEAR(analysis.stages[0].f.mean_s, 55386.41666666667e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[1].b.mean_s, 71393.91666666667e-6, 1e-9);
  EXPECT_NEAR(analysis.mean_step_s, 631712.3333333334e-6, 1e-9);
  EXPECT_EQ(analysis.outside.count, 3);
  EXPECT_NEAR(analysis.outside.min_s, 1313e-6, 1e-9);
  EXPECT_NEAR(analysis.outside.max_s, 1605e-6, 1e-9);
  EXPECT_NEAR(analysis.outside.mean_s, 1496.3333333333333e-6, 1e-9);
  // Schedule1F1B's order of 2 stages and 4 microbatches.
  ASSERT_EQ(analysis.order.size(), 2u);
  EXPECT_EQ(FormatOrderCsv(analysis),
            "0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n");
}

// "Forward {i}" / "Backward {i}" (ScheduleGPipe): the stage is the rank's.
//   python3 expected.py cpu_gpipe rank0.pt.trace.json.gz rank1.pt.trace.json.gz
//   median steady step 721629 us; F stage 0 55935.5, stage 1 73093; B 72700.5, 69432.
TEST(KinetoTrace, CpuGpipeForwardBackwardNames) {
  const ProfilerTrace trace =
      Read({"cpu_gpipe/rank0.pt.trace.json.gz", "cpu_gpipe/rank1.pt.trace.json.gz"}, true);
  TraceAnalysis analysis;
  ASSERT_TRUE(AnalyzeTrace(trace, &analysis).ok());
  EXPECT_NEAR(analysis.median_step_s, 721629e-6, 1e-9);
  ASSERT_EQ(analysis.num_stages, 2);
  EXPECT_NEAR(analysis.stages[0].f.median_s, 55935.5e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[1].f.median_s, 73093e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[0].b.median_s, 72700.5e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[1].b.median_s, 69432e-6, 1e-9);
  EXPECT_EQ(FormatOrderCsv(analysis),
            "0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n1F0,1F1,1F2,1F3,1B0,1B1,1B2,1B3\n");
}

TEST(KinetoTrace, ActionNamesOfThePipeliningRuntime) {
  const std::string text =
      R"({"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
 {"ph": "X", "cat": "user_annotation", "name": "PP:2I3", "ts": 1, "dur": 2},
 {"ph": "X", "cat": "user_annotation", "name": "PP:2W3", "ts": 4, "dur": 2},
 {"ph": "X", "cat": "user_annotation", "name": "PP:(0F2;1B0)OVERLAP_F_B", "ts": 7, "dur": 2},
 {"ph": "X", "cat": "user_annotation", "name": "PP:1RECV_B0", "ts": 10, "dur": 2},
 {"ph": "X", "cat": "user_annotation", "name": "PP:0UNSHARD", "ts": 13, "dur": 2}]})";
  TraceRank rank;
  ASSERT_TRUE(ParseKinetoTrace(text, "t.json", &rank).ok());
  ASSERT_EQ(rank.actions.size(), 5u);
  EXPECT_EQ(rank.actions[0].type, TraceActionType::kBackwardInput);
  EXPECT_EQ(rank.actions[0].stage, 2);
  EXPECT_EQ(rank.actions[0].microbatch, 3);
  EXPECT_EQ(rank.actions[1].type, TraceActionType::kBackwardWeight);
  EXPECT_EQ(rank.actions[2].type, TraceActionType::kOverlapFB);
  EXPECT_EQ(rank.actions[2].microbatch, 2);
  EXPECT_EQ(rank.actions[2].overlap_stage, 1);
  EXPECT_EQ(rank.actions[2].overlap_microbatch, 0);
  EXPECT_EQ(rank.actions[3].type, TraceActionType::kRecvBackward);
  EXPECT_EQ(rank.actions[4].type, TraceActionType::kOther);
  EXPECT_EQ(rank.actions[4].microbatch, -1);
}

// The truncated file's place as Python finds it: json.load -> "line 25 column 4".
TEST(KinetoTrace, BadInputsAreLocated) {
  EXPECT_EQ(ReadError({"bad/truncated.json"}),
            "bad/truncated.json:25:4: not JSON (syntax error while parsing object key - "
            "unexpected end of input; expected string literal); expected a PyTorch profiler trace: "
            "a JSON "
            "object with traceEvents, as export_chrome_trace writes it");
  EXPECT_EQ(ReadError({"bad/other_framework.json"}),
            "bad/other_framework.json: a Chrome trace, but not a PyTorch profiler (Kineto) "
            "trace: no event has a Kineto category (cpu_op, user_annotation, cuda_runtime, "
            "kernel, ...); export it with torch.profiler (export_chrome_trace or "
            "tensorboard_trace_handler)");
  EXPECT_EQ(ReadError({"bad/world_size/rank0.json", "bad/world_size/rank1.json"}),
            "bad/world_size/rank1.json: world_size 4, but bad/world_size/rank0.json has "
            "world_size 2; give traces of one run (its ranks agree on world_size)");
  EXPECT_EQ(ReadError({"bad/duplicate/a.json", "bad/duplicate/b.json"}),
            "bad/duplicate/b.json: rank 0, as in bad/duplicate/a.json; give one trace per rank");
  EXPECT_EQ(ReadError({"bad/no_info/a.json", "bad/no_info/b.json"}),
            "bad/no_info/a.json: no distributedInfo, so its rank is unknown; with 2 trace files "
            "each must say its rank (torch.profiler with Kineto writes distributedInfo when "
            "torch.distributed is initialized), or give --ranks-in-order to take the files as "
            "ranks 0, 1, ... in the order given");
}

TEST(KinetoTrace, ANumberBeyondADoubleIsRefusedNotThrown) {
  TraceRank rank;
  const Status status = ParseKinetoTrace(R"({"traceEvents": [{"ts": 1e99999}]})", "t.json", &rank);
  EXPECT_EQ(status.message(),
            "t.json: not JSON (number overflow parsing '1e99999'); expected a PyTorch profiler "
            "trace: a JSON object with traceEvents, as export_chrome_trace writes it");
}

TEST(KinetoTrace, GunzipRefusesMoreThanTheLimit) {
  std::string bytes;
  ASSERT_TRUE(ReadFile(kData + "cpu_1f1b/rank0.pt.trace.json.gz", &bytes, 1 << 20, "", true).ok());
  std::string text;
  Status status = Gunzip(bytes, "r.gz", 1000, &text);
  EXPECT_EQ(status.message(),
            "r.gz: decompresses to more than 1000 bytes; trace files are read up to that "
            "(profile fewer steps, or split the trace)");
  status = Gunzip("not gzip", "x.gz", 1 << 20, &text);
  EXPECT_EQ(status.message().rfind("x.gz: not valid gzip (", 0), 0u) << status.message();
}

}  // namespace
}  // namespace ppsim
