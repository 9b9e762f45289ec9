#include "interop/nsys_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "interop/kineto_trace.h"
#include "interop/read_traces.h"
#include "interop/trace_profile.h"

namespace ppsim {
namespace {

const std::string kData = std::string(PPSIM_SOURCE_DIR) + "/tests/data/profiler/";

ProfilerTrace ReadNsys(const std::vector<std::string>& names) {
  std::vector<std::string> files;
  for (const std::string& n : names) files.push_back(kData + "nsys/" + n);
  ProfilerTrace trace;
  const Status status = ReadProfilerTraces(files, false, &trace);
  EXPECT_TRUE(status.ok()) << status.message();
  return trace;
}

// Expected values of the real exports (tests/data/profiler/SOURCES.md), computed with python3's
// sqlite3 over the export alone:
//   gpu = kernel + memcpy + memset rows (start, end); ranges = NVTX_EVENTS with eventType in
//   (59, 60) and end not null; launches = CUPTI_ACTIVITY_KIND_RUNTIME with a correlationId;
//   busy = union length of gpu; wall = max(end) - min(start) over gpu + ranges + launches.
//   saxpy.sqlite: 20 GPU rows (5 kernels, 15 memcpy; SELECT count(*), sum(end-start) FROM
//   CUPTI_ACTIVITY_KIND_KERNEL -> 5 | 88573480), summed 373273080 ns, union 373273080 ns (no
//   overlap), wall 2023826892 ns; the NVTX mark "MPI Rank 0" (eventType 39, end NULL).
//   cloverleaf.sqlite: 1591 GPU rows (1312 kernels summing 294404540 ns, 279 memcpy), summed
//   303795463 ns, union 303795463 ns, wall 618351261 ns; DeviceEnvironment PMI_RANK=0;PMI_SIZE=1.
TEST(NsysTrace, SaxpyRealExportKernelsAndMpiRankMark) {
  const ProfilerTrace trace = ReadNsys({"saxpy.sqlite"});
  ASSERT_EQ(trace.ranks.size(), 1u);
  const TraceRank& r = trace.ranks[0];
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.world_size, 0);  // the mark says no world size
  EXPECT_TRUE(r.has_gpu);
  EXPECT_NEAR(r.gpu_busy_s, 373273080e-9, 1e-12);
  EXPECT_EQ(r.unattributed_kernels, 20);  // no pipeline actions
  EXPECT_NEAR(r.unattributed_kernel_s, 373273080e-9, 1e-12);
  EXPECT_NEAR(r.wall_s, 2023826892e-9, 1e-12);
  // Its "saxpy" and MPI_* ranges are neither steps nor actions nor collectives.
  EXPECT_TRUE(r.steps.empty());
  EXPECT_TRUE(r.actions.empty());
  EXPECT_TRUE(r.collectives.empty());
}

TEST(NsysTrace, CloverleafRealExportWithoutNvtxRankFromEnvironment) {
  const ProfilerTrace trace = ReadNsys({"cloverleaf.sqlite"});
  ASSERT_EQ(trace.ranks.size(), 1u);
  const TraceRank& r = trace.ranks[0];
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.world_size, 1);
  EXPECT_EQ(r.unattributed_kernels, 1591);
  EXPECT_NEAR(r.unattributed_kernel_s, 303795463e-9, 1e-12);
  EXPECT_NEAR(r.gpu_busy_s, 303795463e-9, 1e-12);
  EXPECT_NEAR(r.wall_s, 618351261e-9, 1e-12);
}

// The same measurement in two formats: the derived exports (make_nsys.py) of the real CPU traces
// give the Kineto reader's steps, actions, stages and order. Times differ by rounding only
// (nanoseconds from the earliest start against microseconds from the first event).
void ExpectSameAnalysis(const std::string& name) {
  ProfilerTrace kineto;
  ASSERT_TRUE(ReadKinetoTraces({kData + name + "/rank0.pt.trace.json.gz",
                                kData + name + "/rank1.pt.trace.json.gz"},
                               true, &kineto)
                  .ok());
  ProfilerTrace nsys = ReadNsys({name + "/rank1.sqlite", name + "/rank0.sqlite"});
  ASSERT_EQ(nsys.ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(nsys.ranks[r].rank, r);  // RANK from the environment, whatever the file order
    EXPECT_EQ(nsys.ranks[r].world_size, 2);
    ASSERT_EQ(nsys.ranks[r].actions.size(), kineto.ranks[r].actions.size());
    for (size_t k = 0; k < nsys.ranks[r].actions.size(); ++k) {
      const TraceAction& a = nsys.ranks[r].actions[k];
      const TraceAction& b = kineto.ranks[r].actions[k];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.stage, b.stage);
      EXPECT_EQ(a.step, b.step);
      EXPECT_NEAR(a.cpu_end_s - a.cpu_start_s, b.cpu_end_s - b.cpu_start_s, 1e-12);
      EXPECT_NEAR(a.cpu_comm_s, b.cpu_comm_s, 1e-12);
    }
  }
  TraceAnalysis from_nsys;
  TraceAnalysis from_kineto;
  ASSERT_TRUE(AnalyzeTrace(nsys, &from_nsys).ok());
  ASSERT_TRUE(AnalyzeTrace(kineto, &from_kineto).ok());
  ASSERT_EQ(from_nsys.steps.size(), from_kineto.steps.size());
  for (size_t s = 0; s < from_nsys.steps.size(); ++s) {
    EXPECT_EQ(from_nsys.steps[s].name, from_kineto.steps[s].name);
    EXPECT_NEAR(from_nsys.steps[s].duration_s, from_kineto.steps[s].duration_s, 1e-12);
  }
  ASSERT_EQ(from_nsys.stages.size(), 2u);
  ASSERT_EQ(from_kineto.stages.size(), 2u);
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(from_nsys.stages[s].f.count, from_kineto.stages[s].f.count);
    EXPECT_NEAR(from_nsys.stages[s].f.median_s, from_kineto.stages[s].f.median_s, 1e-12);
    EXPECT_NEAR(from_nsys.stages[s].b.median_s, from_kineto.stages[s].b.median_s, 1e-12);
  }
  EXPECT_NEAR(from_nsys.p2p.median_s, from_kineto.p2p.median_s, 1e-12);
  EXPECT_EQ(FormatOrderCsv(from_nsys), FormatOrderCsv(from_kineto));
}

// The Kineto side's own values are asserted against expected.py in kineto_trace_test.cc
// (1F1B: F medians 55314 and 55717.5 us, median steady step 636589.5 us).
TEST(NsysTrace, DerivedExportsOfTheCpu1F1BTracesGiveTheSameProfile) {
  ExpectSameAnalysis("cpu_1f1b");
  TraceAnalysis analysis;
  ASSERT_TRUE(
      AnalyzeTrace(ReadNsys({"cpu_1f1b/rank0.sqlite", "cpu_1f1b/rank1.sqlite"}), &analysis).ok());
  EXPECT_NEAR(analysis.median_step_s, 636589.5e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[0].f.median_s, 55314e-6, 1e-9);
  EXPECT_NEAR(analysis.stages[1].f.median_s, 55717.5e-6, 1e-9);
}

TEST(NsysTrace, DerivedExportsOfTheCpuGpipeTracesGiveTheSameProfile) {
  ExpectSameAnalysis("cpu_gpipe");
}

TEST(NsysTrace, SqliteHeader) {
  EXPECT_TRUE(IsSqliteHeader(std::string("SQLite format 3\0more", 20)));
  EXPECT_FALSE(IsSqliteHeader("SQLite format 3"));  // without its NUL
  EXPECT_FALSE(IsSqliteHeader("{\"traceEvents\": []}"));
}

TEST(NsysTrace, RefusesMixedProfilersAndUnrankedFiles) {
  ProfilerTrace trace;
  Status status = ReadProfilerTraces(
      {kData + "nsys/saxpy.sqlite", kData + "cpu_1f1b/rank1.pt.trace.json.gz"}, false, &trace);
  EXPECT_EQ(status.message(), kData +
                                  "cpu_1f1b/rank1.pt.trace.json.gz: a PyTorch profiler "
                                  "trace, but " +
                                  kData +
                                  "nsys/saxpy.sqlite is an Nsight Systems export; give the traces "
                                  "of one profiler (their clocks and rank records differ)");
  // Two ranks 0 (the saxpy mark and cloverleaf's PMI_RANK): one trace per rank.
  status = ReadProfilerTraces({kData + "nsys/saxpy.sqlite", kData + "nsys/cloverleaf.sqlite"},
                              false, &trace);
  EXPECT_EQ(status.message(), kData + "nsys/cloverleaf.sqlite: rank 0, as in " + kData +
                                  "nsys/saxpy.sqlite; give one trace per rank");
}

}  // namespace
}  // namespace ppsim
