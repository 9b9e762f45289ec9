// NCCL v2.23.4's tuning model against sim/nccl-collectives.md: the worked examples of §2.5 (one
// node of 8 x H100) and §2.6 (DGX H100 nodes), the latency formulas of §2.2, the bandwidth rules
// and treeCorrectionFactor of §2.3, the enable rules of §2.4, and channels and chunks (§3). Every
// expected value is worked out by hand from the note's tables (the arithmetic is in the comments);
// tolerances are the note's rounding.
#include "sim/nccl_tuning.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ppsim {
namespace {

constexpr double kExactUs = 1e-9;  // a latency the note gives exactly

// `nodes` DGX H100: 8 GPUs on NVSwitch with NVLink SHARP, 450 GB/s NVLink, 8 x 400 Gb/s NICs.
NcclCommunicator DgxH100(int32_t nodes) {
  NcclCommunicator comm;
  comm.ranks = 8 * nodes;
  comm.nodes = nodes;
  comm.nvswitch = true;
  comm.nvlink = true;
  comm.nvls = true;
  comm.compute_capability = 90;
  comm.nvlink_bandwidth_bytes_per_s = 450e9;
  comm.nic_bandwidth_bytes_per_s = 50e9;
  comm.nics_per_node = 8;
  return comm;
}

NcclChoice Estimate(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                    CollectiveAlgorithm algorithm, NcclProtocol protocol) {
  NcclChoice estimate;
  const Status status = EstimateNcclCollective(kind, bytes, comm, algorithm, protocol, &estimate);
  EXPECT_TRUE(status.ok()) << status.message();
  return estimate;
}

NcclChoice Choose(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                  const CollectiveAlgorithm* forced = nullptr) {
  NcclChoice choice;
  const Status status = ChooseNcclAlgorithm(kind, bytes, comm, forced, &choice);
  EXPECT_TRUE(status.ok()) << status.message();
  return choice;
}

// The message of a choice that must fail with InvalidInput.
std::string ChooseError(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                        const CollectiveAlgorithm* forced) {
  NcclChoice choice;
  const Status status = ChooseNcclAlgorithm(kind, bytes, comm, forced, &choice);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  return status.message();
}

double Us(double seconds) { return seconds * 1e6; }
double GBps(double bytes_per_s) { return bytes_per_s / 1e9; }

constexpr CollectiveKind kAllReduce = CollectiveKind::kAllReduce;
constexpr CollectiveKind kReduceScatter = CollectiveKind::kReduceScatter;
constexpr CollectiveKind kAllGather = CollectiveKind::kAllGather;
constexpr CollectiveAlgorithm kRing = CollectiveAlgorithm::kRing;
constexpr CollectiveAlgorithm kTree = CollectiveAlgorithm::kTree;
constexpr CollectiveAlgorithm kNvls = CollectiveAlgorithm::kNvls;
constexpr CollectiveAlgorithm kNvlsTree = CollectiveAlgorithm::kNvlsTree;
constexpr CollectiveAlgorithm kHierarchical = CollectiveAlgorithm::kHierarchical;
constexpr NcclProtocol kLl = NcclProtocol::kLl;
constexpr NcclProtocol kLl128 = NcclProtocol::kLl128;
constexpr NcclProtocol kSimple = NcclProtocol::kSimple;

TEST(NcclTuning, NamesAndParsing) {
  EXPECT_EQ(CollectiveAlgorithmName(kRing), "ring");
  EXPECT_EQ(CollectiveAlgorithmName(kTree), "tree");
  EXPECT_EQ(CollectiveAlgorithmName(kNvls), "nvls");
  EXPECT_EQ(CollectiveAlgorithmName(kNvlsTree), "nvls-tree");
  EXPECT_EQ(CollectiveAlgorithmName(kHierarchical), "hierarchical");
  EXPECT_EQ(NcclProtocolName(kLl), "LL");
  EXPECT_EQ(NcclProtocolName(kLl128), "LL128");
  EXPECT_EQ(NcclProtocolName(kSimple), "Simple");
  EXPECT_EQ(CollectiveKindName(kReduceScatter), "reduce-scatter");

  bool forced = true;
  CollectiveAlgorithm algorithm = kHierarchical;
  ASSERT_TRUE(ParseCollectiveAlgorithm("--collective-algorithm", "auto", &forced, &algorithm).ok());
  EXPECT_FALSE(forced);
  EXPECT_EQ(algorithm, kHierarchical);  // untouched
  ASSERT_TRUE(
      ParseCollectiveAlgorithm("--collective-algorithm", "nvls-tree", &forced, &algorithm).ok());
  EXPECT_TRUE(forced);
  EXPECT_EQ(algorithm, kNvlsTree);
  ASSERT_TRUE(
      ParseCollectiveAlgorithm("--collective-algorithm", "hierarchical", &forced, &algorithm).ok());
  EXPECT_EQ(algorithm, kHierarchical);
}

TEST(NcclTuning, ParseErrorsListTheValidNames) {
  bool forced = false;
  CollectiveAlgorithm algorithm = kRing;
  Status status = ParseCollectiveAlgorithm("--collective-algorithm", "nvsl", &forced, &algorithm);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(status.message(),
            "--collective-algorithm: unknown collective algorithm 'nvsl'; valid: auto, ring, tree, "
            "nvls, nvls-tree, hierarchical (did you mean nvls?)");
  status = ParseCollectiveAlgorithm("run.yaml:3:12", "NVLSTree", &forced, &algorithm);
  EXPECT_EQ(
      status.message(),
      "run.yaml:3:12: unknown collective algorithm 'NVLSTree'; valid: auto, ring, tree, nvls, "
      "nvls-tree, hierarchical (did you mean nvls-tree?)");
  status = ParseCollectiveAlgorithm("--collective-algorithm", "2d", &forced, &algorithm);
  EXPECT_EQ(status.message(),
            "--collective-algorithm: unknown collective algorithm '2d'; valid: auto, ring, tree, "
            "nvls, nvls-tree, hierarchical");
}

// §2.5 and §3.1: ring 6 x 60 duplicated to 12 x 30, 24 runtime channels; NVLS 8 heads x 40
// (9 x 40 = 360 <= 370.8 < 9 x 50), 16 runtime channels.
TEST(NcclTuning, GraphsOfOneH100Node) {
  NcclGraphs graphs;
  ASSERT_TRUE(DeriveNcclGraphs(DgxH100(1), &graphs).ok());
  EXPECT_EQ(graphs.ring.channels, 12);
  EXPECT_EQ(graphs.ring.bw_intra_gb_per_s, 30);
  EXPECT_EQ(graphs.ring.bw_inter_gb_per_s, 30);
  EXPECT_EQ(graphs.runtime_channels, 24);
  EXPECT_EQ(graphs.nvls.channels, 8);
  EXPECT_EQ(graphs.nvls.bw_intra_gb_per_s, 40);
  EXPECT_EQ(graphs.nvls_runtime_channels, 16);
  EXPECT_TRUE(graphs.intra_nvlink);
}

// §2.6: 8 search channels x 48 GB/s (one per 400 Gb/s NIC; 48 <= 50), no duplication (48 < 50
// with more than 4 channels on sm90), 16 runtime channels.
TEST(NcclTuning, GraphsOfDgxH100Nodes) {
  for (int32_t nodes : {2, 4, 16}) {
    NcclGraphs graphs;
    ASSERT_TRUE(DeriveNcclGraphs(DgxH100(nodes), &graphs).ok());
    EXPECT_EQ(graphs.ring.channels, 8) << nodes;
    EXPECT_EQ(graphs.ring.bw_intra_gb_per_s, 48) << nodes;
    EXPECT_EQ(graphs.ring.bw_inter_gb_per_s, 48) << nodes;
    EXPECT_EQ(graphs.runtime_channels, 16) << nodes;
    EXPECT_EQ(graphs.nvls_runtime_channels, 16) << nodes;
  }
}

// NCCL counts NVLink4 at 20.6 of its 25 GB/s per link: 450e9 is 370.8 GB/s.
TEST(NcclTuning, NvlinkShareMapsH100LineRateToNcclFigure) {
  EXPECT_NEAR(450.0 * kNcclNvlinkShareOfLineRate, 370.8, 1e-9);
}

// §2.5's table (n = 8, all-reduce). Ring: latency baseLat + 14 hwLat[NVLINK][Ring]; algbw =
// busBw x 8/14 with busBw LL min(141, 360 x 0.5), LL128 min(360 x 0.92, 12 x 36.7), Simple 360.
// NVLS: 25 µs, 8 x 40 x 5/6. Tree (at 256 MiB, log2i(2^28 >> 6) = 22, corrections LL 1.0,
// LL128 1.0, Simple 0.9): latency baseLat + 2 x 7 x hwLat[NVLINK][Tree]; busBw min(360 x 0.92,
// 12 x 38.7) = 331.2, then LL /3.8, LL128 x 7/9, and x 0.5.
TEST(NcclTuning, OneH100NodeAllReduceTable) {
  const NcclCommunicator comm = DgxH100(1);
  struct Row {
    CollectiveAlgorithm algorithm;
    NcclProtocol protocol;
    double latency_us;
    double algbw_gb_per_s;
  };
  const int64_t bytes = int64_t{1} << 28;
  for (const Row& row : std::vector<Row>{
           {kRing, kLl, 15.0, 80.6},
           {kRing, kLl128, 40.6, 189.3},
           {kRing, kSimple, 56.0, 205.7},
           {kNvls, kSimple, 25.0, 266.7},
           {kTree, kLl, 15.2, 43.6},
           {kTree, kLl128, 31.5, 128.8},
           {kTree, kSimple, 64.4, 165.6 * 0.9},
       }) {
    const NcclChoice e = Estimate(kAllReduce, bytes, comm, row.algorithm, row.protocol);
    const std::string what = std::string(CollectiveAlgorithmName(row.algorithm)) + "/" +
                             std::string(NcclProtocolName(row.protocol));
    EXPECT_NEAR(Us(e.latency_s), row.latency_us, kExactUs) << what;
    EXPECT_NEAR(GBps(e.bandwidth_bytes_per_s), row.algbw_gb_per_s, 0.05) << what;
    // The time with the note's bandwidth, within what its rounding to 0.05 GB/s moves.
    EXPECT_NEAR(Us(e.time_s), row.latency_us + bytes / (1000 * row.algbw_gb_per_s),
                0.05 / row.algbw_gb_per_s * Us(e.time_s))
        << what;
  }
}

// §2.5 selection: ring LL below 10 µs / (14/1128000 - 1/266666.7) = 1.1546e6 B, NVLS Simple above.
TEST(NcclTuning, OneH100NodeChoosesRingLlThenNvls) {
  const NcclCommunicator comm = DgxH100(1);
  for (int64_t bytes : {int64_t{8}, int64_t{64} << 10, int64_t{1} << 20, int64_t{1'154'000}}) {
    const NcclChoice c = Choose(kAllReduce, bytes, comm);
    EXPECT_EQ(c.algorithm, kRing) << bytes;
    EXPECT_EQ(c.protocol, kLl) << bytes;
  }
  for (int64_t bytes : {int64_t{1'155'000}, int64_t{2} << 20, int64_t{8} << 20, int64_t{1} << 30,
                        int64_t{16} << 30}) {
    const NcclChoice c = Choose(kAllReduce, bytes, comm);
    EXPECT_EQ(c.algorithm, kNvls) << bytes;
    EXPECT_EQ(c.protocol, kSimple) << bytes;
    EXPECT_EQ(c.channels, 16) << bytes;
  }
  // 1 MiB: ring LL 15 + 1048576 x 14/1128000 = 28.014 µs against NVLS 25 + 3.932 = 28.932.
  EXPECT_NEAR(Us(Choose(kAllReduce, 1 << 20, comm).time_s), 15 + 1048576.0 * 14 / 1128000, 1e-6);
  // §4.2: the NVLS model predicts 56.5 µs at 8M, 276.7 µs at 64M, 4.05 ms at 1G, 32.2 ms at 8G.
  EXPECT_NEAR(Us(Choose(kAllReduce, int64_t{8} << 20, comm).time_s), 56.5, 0.05);
  EXPECT_NEAR(Us(Choose(kAllReduce, int64_t{64} << 20, comm).time_s), 276.7, 0.05);
  EXPECT_NEAR(Us(Choose(kAllReduce, int64_t{1} << 30, comm).time_s), 4050, 5);
  EXPECT_NEAR(Us(Choose(kAllReduce, int64_t{8} << 30, comm).time_s), 32200, 50);
}

// §2.6's table. Latency: baseLat + (2(n-1) - 2(N-1)) max(hwLat[NVLINK][Ring], netOverhead)
// + 2(N-1) hwLat[NET][Ring], netOverhead 1 (LL, LL128) or 3 (Simple); Simple x 1.4 from
// bytes / (16 channels x n) >= 64. Algbw x n/(2(n-1)) of busBw LL min(llMaxBws row 0 = 39.0 on 2
// nodes, 20.4 from 3; 192), LL128 min(353.3, 8 x 36.7), Simple 8 x 48.
TEST(NcclTuning, DgxH100RingTable) {
  struct Row {
    int32_t nodes;
    double ll_us, ll_gb_per_s, ll128_us, ll128_gb_per_s, simple_us, plateau_us, simple_gb_per_s;
    double latency_tolerance_us;  // the note rounds N = 32 to 1 µs
  };
  for (const Row& row : std::vector<Row>{
           {2, 40.0, 20.8, 75.2, 156.6, 131.6, 184.2, 204.8, 0.05},
           {4, 78.8, 10.5, 144.4, 151.5, 282.8, 395.9, 198.2, 0.05},
           {8, 156.4, 10.4, 282.8, 149.1, 585.2, 819.3, 195.0, 0.05},
           {16, 311.6, 10.3, 559.6, 148.0, 1190, 1666, 193.5, 0.05},
           {32, 622.0, 10.2, 1113, 147.4, 2400, 3359, 192.8, 0.5},
       }) {
    const NcclCommunicator comm = DgxH100(row.nodes);
    const int64_t plateau_bytes = int64_t{64} * 16 * comm.ranks;
    const double tol = row.latency_tolerance_us;
    const NcclChoice ll = Estimate(kAllReduce, int64_t{1} << 30, comm, kRing, kLl);
    EXPECT_NEAR(Us(ll.latency_s), row.ll_us, tol) << row.nodes;
    EXPECT_NEAR(GBps(ll.bandwidth_bytes_per_s), row.ll_gb_per_s, 0.05) << row.nodes;
    const NcclChoice ll128 = Estimate(kAllReduce, int64_t{1} << 30, comm, kRing, kLl128);
    EXPECT_NEAR(Us(ll128.latency_s), row.ll128_us, tol) << row.nodes;
    EXPECT_NEAR(GBps(ll128.bandwidth_bytes_per_s), row.ll128_gb_per_s, 0.05) << row.nodes;
    const NcclChoice below = Estimate(kAllReduce, plateau_bytes - 1, comm, kRing, kSimple);
    EXPECT_NEAR(Us(below.latency_s), row.simple_us, tol) << row.nodes;
    const NcclChoice plateau = Estimate(kAllReduce, plateau_bytes, comm, kRing, kSimple);
    EXPECT_NEAR(Us(plateau.latency_s), row.plateau_us, tol) << row.nodes;
    EXPECT_NEAR(GBps(plateau.bandwidth_bytes_per_s), row.simple_gb_per_s, 0.05) << row.nodes;
    // The plateau counts all 16 runtime channels, though so small a size runs on fewer (§3.4):
    // 64 x 16 x n bytes over 512 threads x 64 bytes is n / 32 channels.
    EXPECT_EQ(plateau.channels, std::max(1, comm.ranks / 32)) << row.nodes;
    EXPECT_EQ(ll.channels, 16) << row.nodes;
  }
  // The exact values behind the rounding on 2 nodes: 131.6 x 1.4 = 184.24 µs, and a gigabyte
  // takes 184.24 + 1e9 / 204800 = 5067.0525 µs.
  const NcclChoice simple = Estimate(kAllReduce, 1'000'000'000, DgxH100(2), kRing, kSimple);
  EXPECT_NEAR(Us(simple.latency_s), 184.24, 1e-9);
  EXPECT_NEAR(Us(simple.time_s), 5067.0525, 1e-6);
}

// The plateau is for all-reduce only, and reduce-scatter counts n - 1 steps, N - 1 of them
// between nodes: on 2 nodes Simple is 8.4 + 14 x 3.4 + 14 = 70.0 µs at 384 x 16/15 = 409.6 GB/s,
// LL 6.6 + 14 x 1.0 + 2.7 = 23.3 µs at 39.0 x 16/15 = 41.6 GB/s.
TEST(NcclTuning, ReduceScatterRingHasHalfTheStepsAndNoPlateau) {
  const NcclChoice simple = Estimate(kReduceScatter, int64_t{1} << 30, DgxH100(2), kRing, kSimple);
  EXPECT_NEAR(Us(simple.latency_s), 70.0, kExactUs);
  EXPECT_NEAR(GBps(simple.bandwidth_bytes_per_s), 409.6, 1e-9);
  const NcclChoice ll = Estimate(kAllGather, int64_t{1} << 30, DgxH100(2), kRing, kLl);
  EXPECT_NEAR(Us(ll.latency_s), 23.3, kExactUs);
  EXPECT_NEAR(GBps(ll.bandwidth_bytes_per_s), 41.6, 1e-9);
}

// §2.6: tree LL 15.2 + 10 log2i(N), LL128 31.5 + 17 log2i(N), Simple 64.4 + 28 log2i(N);
// NVLS_TREE 25 + 28 log2i(N) (log2i(3) = 1, log2i(16) = 4).
TEST(NcclTuning, TreeAndNvlsTreeLatencyGrowWithLog2Nodes) {
  for (const auto& [nodes, log2_nodes] :
       std::vector<std::pair<int32_t, int>>{{1, 0}, {2, 1}, {3, 1}, {4, 2}, {16, 4}, {64, 6}}) {
    const NcclCommunicator comm = DgxH100(nodes);
    EXPECT_NEAR(Us(Estimate(kAllReduce, 1 << 20, comm, kTree, kLl).latency_s),
                15.2 + 10 * log2_nodes, kExactUs)
        << nodes;
    EXPECT_NEAR(Us(Estimate(kAllReduce, 1 << 20, comm, kTree, kLl128).latency_s),
                31.5 + 17 * log2_nodes, kExactUs)
        << nodes;
    EXPECT_NEAR(Us(Estimate(kAllReduce, 1 << 20, comm, kTree, kSimple).latency_s),
                64.4 + 28 * log2_nodes, kExactUs)
        << nodes;
    if (nodes > 1) {
      EXPECT_NEAR(Us(Estimate(kAllReduce, 1 << 20, comm, kNvlsTree, kSimple).latency_s),
                  25 + 28 * log2_nodes, kExactUs)
          << nodes;
    }
  }
}

// treeCorrectionFactor[proto][log2i(bytes >> 6)] multiplies the tree's bandwidth from 64 B
// (index 0) to below 512 MiB (index 22). One node: Simple 165.6 GB/s uncorrected, LL 43.58
// (331.2 / 3.8 x 0.5), LL128 128.8.
TEST(NcclTuning, TreeCorrectionFactorFollowsTheSize) {
  const NcclCommunicator comm = DgxH100(1);
  const auto algbw = [&](int64_t bytes, NcclProtocol protocol) {
    return GBps(Estimate(kAllReduce, bytes, comm, kTree, protocol).bandwidth_bytes_per_s);
  };
  EXPECT_NEAR(algbw(63, kSimple), 165.6, 1e-9);                      // below the table
  EXPECT_NEAR(algbw(64, kSimple), 165.6 * 0.9, 1e-9);                // index 0
  EXPECT_NEAR(algbw(1 << 20, kSimple), 165.6 * 0.5, 1e-9);           // 2^14: index 14
  EXPECT_NEAR(algbw(int64_t{1} << 28, kSimple), 165.6 * 0.9, 1e-9);  // index 22
  EXPECT_NEAR(algbw(int64_t{1} << 29, kSimple), 165.6, 1e-9);        // index 23: beyond
  EXPECT_NEAR(algbw(1 << 20, kLl), 331.2 / 3.8 * 0.5 * 0.5, 1e-9);   // LL index 14: 0.5
  EXPECT_NEAR(algbw(4096, kLl128), 128.8 * 0.8, 1e-9);               // 2^6: index 6, 0.8
  EXPECT_NEAR(algbw(4095, kLl128), 128.8 * 0.9, 1e-9);               // index 5, 0.9
  // Not for the ring.
  EXPECT_NEAR(GBps(Estimate(kAllReduce, 1 << 20, comm, kRing, kSimple).bandwidth_bytes_per_s),
              360.0 * 8 / 14, 1e-9);
}

// §2.3 on DGX H100 nodes, tree on the ring's 8 x 48 graph: busBw min(384 x 0.92, 8 x
// perChMaxTreeBw) with 41.4 on 2 nodes and 36.0 from 3; LL min(/3.8, llMaxBw 39.0 | 20.4); LL128
// min(x 120/128, 8 x perChMaxTreeLL128Bw 36.7 | 29.0); then x 0.5. At 256 MiB (index 22) the
// corrections are 1.0 (LL, LL128) and 0.9 (Simple).
TEST(NcclTuning, TreeBandwidthOnDgxH100Nodes) {
  const int64_t bytes = int64_t{1} << 28;
  const auto algbw = [&](int32_t nodes, NcclProtocol protocol) {
    return GBps(Estimate(kAllReduce, bytes, DgxH100(nodes), kTree, protocol).bandwidth_bytes_per_s);
  };
  EXPECT_NEAR(algbw(2, kSimple), 331.2 * 0.5 * 0.9, 1e-9);
  EXPECT_NEAR(algbw(2, kLl), 39.0 * 0.5, 1e-9);
  EXPECT_NEAR(algbw(2, kLl128), 293.6 * 0.5, 1e-9);
  EXPECT_NEAR(algbw(4, kSimple), 288.0 * 0.5 * 0.9, 1e-9);
  EXPECT_NEAR(algbw(4, kLl), 20.4 * 0.5, 1e-9);
  EXPECT_NEAR(algbw(4, kLl128), 232.0 * 0.5, 1e-9);
}

// 64 DGX H100 nodes, checked against the selection log of NVIDIA/nccl issue #1752 (64 x 8 H200,
// quoted in §2.6): 16 MiB tree LL128, 32 MiB NVLS_TREE Simple. By hand (log2i(64) = 6):
// tree LL128 133.5 µs at 232 x 0.5 x 0.9 = 104.4 GB/s; NVLS_TREE 193 µs at 8 x min(40, 48/2) x 5/6
// = 160 GB/s; tree Simple 232.4 µs at 144 x 0.7 (16 MiB) or 0.7 (32 MiB); rings above 1 ms.
// 16 MiB: tree LL128 294.2 µs < NVLS_TREE 297.9. 32 MiB: NVLS_TREE 402.7 < tree LL128 454.9.
TEST(NcclTuning, ManyNodesChooseTreeLl128ThenNvlsTree) {
  const NcclCommunicator comm = DgxH100(64);
  const NcclChoice small = Choose(kAllReduce, int64_t{16} << 20, comm);
  EXPECT_EQ(small.algorithm, kTree);
  EXPECT_EQ(small.protocol, kLl128);
  EXPECT_NEAR(Us(small.time_s), 133.5 + 16777216 / 104400.0, 1e-6);
  EXPECT_EQ(small.channels, 16);
  // Tree LL128 chunk: steps 1 + 6 + 0.8 = 7.8; halve 576000 while 16777216 / (16 chunk) < 62.4
  // and chunk > 128 KiB (quotients 1, 3, 7 -> 72000), then while < 15.6 and chunk > 32 KiB
  // (quotient 14 -> 36000; then 29).
  EXPECT_EQ(small.chunk_bytes, 36000);
  const NcclChoice large = Choose(kAllReduce, int64_t{32} << 20, comm);
  EXPECT_EQ(large.algorithm, kNvlsTree);
  EXPECT_EQ(large.protocol, kSimple);
  EXPECT_NEAR(Us(large.time_s), 193 + 33554432 / 160000.0, 1e-6);
  EXPECT_EQ(large.channels, 16);
  EXPECT_EQ(large.chunk_bytes, 64 << 10);  // NVLS_TREE from 4 nodes
}

// Reduce-scatter and all-gather on one node: NVLS keeps a bus bandwidth (no 5/6 factor), 8 x 40 =
// 320 GB/s at 25 µs, while the ring gets 360 x 8/7 = 411.4 GB/s at 8.4 + 7 x 3.4 = 32.2 µs, so the
// ring wins: 1 GiB takes 32.2 + 2^30 / 411428.57 = 2642.0 µs.
TEST(NcclTuning, AllGatherOnOneNode) {
  const NcclCommunicator comm = DgxH100(1);
  const NcclChoice nvls = Estimate(kAllGather, int64_t{1} << 30, comm, kNvls, kSimple);
  EXPECT_NEAR(Us(nvls.latency_s), 25.0, kExactUs);
  EXPECT_NEAR(GBps(nvls.bandwidth_bytes_per_s), 320.0, 1e-9);
  const NcclChoice c = Choose(kAllGather, int64_t{1} << 30, comm);
  EXPECT_EQ(c.algorithm, kRing);
  EXPECT_EQ(c.protocol, kSimple);
  EXPECT_NEAR(Us(c.latency_s), 32.2, kExactUs);
  EXPECT_NEAR(Us(c.time_s), 32.2 + 1073741824 / (360.0 * 8 / 7 * 1000), 1e-6);
  EXPECT_EQ(c.chunk_bytes, 2 << 20);  // 512 KiB steps x 4
}

// A forced algorithm gets its best protocol. Ring at 8 MiB on one node: LL 15 + 104.1, LL128
// 40.6 + 8388608 x 14 / 2649600 = 84.92, Simple 56 + 40.78 = 96.78 µs.
TEST(NcclTuning, ForcedAlgorithmGetsItsBestProtocol) {
  const NcclCommunicator comm = DgxH100(1);
  const NcclChoice c = Choose(kAllReduce, int64_t{8} << 20, comm, &kRing);
  EXPECT_EQ(c.algorithm, kRing);
  EXPECT_EQ(c.protocol, kLl128);
  EXPECT_NEAR(Us(c.time_s), 40.6 + 8388608.0 * 14 / 2649600, 1e-6);
  EXPECT_EQ(c.chunk_bytes, 576000);
  const NcclChoice tree = Choose(kAllReduce, 8, comm, &kTree);
  EXPECT_EQ(tree.algorithm, kTree);
  EXPECT_EQ(tree.protocol, kLl);  // 15.2 µs, the smallest tree latency
}

// §2.4: what auto may choose, for every size from 1 B to 16 GiB.
TEST(NcclTuning, AutoKeepsToTheEnableRules) {
  for (int32_t nodes : {1, 2, 4, 64}) {
    for (CollectiveKind kind : {kAllReduce, kReduceScatter, kAllGather}) {
      for (int64_t bytes = 1; bytes <= (int64_t{16} << 30); bytes *= 4) {
        const NcclChoice c = Choose(kind, bytes, DgxH100(nodes));
        EXPECT_NE(c.algorithm, kHierarchical);
        if (nodes > 1) {
          EXPECT_NE(c.algorithm, kNvls) << nodes << " " << bytes;
        } else {
          EXPECT_NE(c.algorithm, kNvlsTree) << bytes;
        }
        if (kind != kAllReduce) {
          EXPECT_NE(c.algorithm, kTree) << bytes;
          EXPECT_NE(c.algorithm, kNvlsTree) << bytes;
        }
        if (c.algorithm == kNvls || c.algorithm == kNvlsTree) {
          EXPECT_EQ(c.protocol, kSimple);
        }
      }
    }
  }
}

TEST(NcclTuning, AlgorithmsAllowed) {
  using List = std::vector<CollectiveAlgorithm>;
  EXPECT_EQ(NcclAlgorithmsAllowed(kAllReduce, DgxH100(1)), (List{kTree, kRing, kNvls}));
  EXPECT_EQ(NcclAlgorithmsAllowed(kAllReduce, DgxH100(2)), (List{kTree, kRing, kNvlsTree}));
  EXPECT_EQ(NcclAlgorithmsAllowed(kReduceScatter, DgxH100(1)), (List{kRing, kNvls}));
  EXPECT_EQ(NcclAlgorithmsAllowed(kAllGather, DgxH100(2)), (List{kRing}));
  NcclCommunicator no_nvls = DgxH100(1);
  no_nvls.nvls = false;
  EXPECT_EQ(NcclAlgorithmsAllowed(kAllReduce, no_nvls), (List{kTree, kRing}));
}

TEST(NcclTuning, ForcedAlgorithmErrors) {
  NcclCommunicator no_nvls = DgxH100(1);
  no_nvls.nvls = false;
  NcclCommunicator two_gpus = DgxH100(1);
  two_gpus.ranks = 2;
  struct Case {
    CollectiveKind kind;
    NcclCommunicator comm;
    CollectiveAlgorithm forced;
    const char* message;
  };
  for (const Case& k : std::vector<Case>{
           {kAllReduce, DgxH100(2), kNvls,
            "nvls for all-reduce: without CollNet NCCL runs NVLS on one node only, and the "
            "communicator spans 2 nodes; valid here: tree, ring, nvls-tree"},
           {kReduceScatter, DgxH100(4), kNvls,
            "nvls for reduce-scatter: NCCL runs NVLS reduce-scatter on one node only, and the "
            "communicator spans 4 nodes; valid here: ring"},
           {kAllReduce, no_nvls, kNvls,
            "nvls for all-reduce: the communicator has no NVLink SHARP; valid here: tree, ring"},
           {kAllReduce, two_gpus, kNvls,
            "nvls for all-reduce: NVLS needs more than 2 GPUs per node, and the communicator has "
            "2; valid here: tree, ring"},
           {kAllReduce, DgxH100(1), kNvlsTree,
            "nvls-tree for all-reduce: NCCL runs NVLS_TREE on more than one node only; valid "
            "here: tree, ring, nvls"},
           {kAllGather, DgxH100(2), kNvlsTree,
            "nvls-tree for all-gather: NCCL runs NVLS_TREE for all-reduce only; valid here: ring"},
           {kReduceScatter, DgxH100(1), kTree,
            "tree for reduce-scatter: NCCL runs tree for all-reduce only; valid here: ring, nvls"},
           {kAllReduce, DgxH100(1), kHierarchical,
            "hierarchical for all-reduce: not an NCCL algorithm (NCCL has no 2-D ring; ppsim "
            "simulates it without NCCL's model); valid here: tree, ring, nvls"},
       }) {
    EXPECT_EQ(ChooseError(k.kind, 1 << 20, k.comm, &k.forced), k.message);
  }
}

TEST(NcclTuning, ProtocolErrors) {
  NcclChoice estimate;
  Status status = EstimateNcclCollective(kAllReduce, 1 << 20, DgxH100(1), kNvls, kLl, &estimate);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(status.message(),
            "nvls with LL: NCCL runs nvls with the Simple protocol only; valid here: Simple");
  status = EstimateNcclCollective(kAllReduce, 1 << 20, DgxH100(2), kNvlsTree, kLl128, &estimate);
  EXPECT_EQ(status.message(),
            "nvls-tree with LL128: NCCL runs nvls-tree with the Simple protocol only; valid here: "
            "Simple");
  NcclCommunicator pcie;
  pcie.ranks = 4;
  pcie.nvlink = false;
  status = EstimateNcclCollective(kAllReduce, 1 << 20, pcie, kRing, kLl128, &estimate);
  EXPECT_EQ(status.message(),
            "ring with LL128: NCCL enables LL128 only over NVLink with compute capability 70, 80 "
            "or 90; valid here: LL, Simple");
  NcclCommunicator blackwell = DgxH100(1);
  blackwell.compute_capability = 100;
  status = EstimateNcclCollective(kAllReduce, 1 << 20, blackwell, kTree, kLl128, &estimate);
  EXPECT_EQ(status.message(),
            "tree with LL128: NCCL enables LL128 only over NVLink with compute capability 70, 80 "
            "or 90; valid here: LL, Simple");
  status = EstimateNcclCollective(kAllGather, 1 << 20, DgxH100(1), kTree, kLl, &estimate);
  EXPECT_EQ(status.message(),
            "tree for all-gather: NCCL runs tree for all-reduce only; valid here: ring, nvls");
}

TEST(NcclTuning, CommunicatorErrors) {
  const auto error = [](const NcclCommunicator& comm, int64_t bytes = 1) {
    NcclChoice choice;
    const Status status = ChooseNcclAlgorithm(kAllReduce, bytes, comm, nullptr, &choice);
    EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
    return status.message();
  };
  NcclCommunicator comm = DgxH100(1);
  comm.ranks = 1;
  EXPECT_EQ(error(comm), "NCCL communicator: a collective needs at least 2 ranks, got 1");
  comm = DgxH100(1);
  comm.nodes = 0;
  EXPECT_EQ(error(comm), "NCCL communicator: needs at least 1 node, got 0");
  comm = DgxH100(1);
  comm.ranks = 12;
  comm.nodes = 5;
  EXPECT_EQ(error(comm), "NCCL communicator: 12 ranks do not divide evenly over 5 nodes");
  comm = DgxH100(1);
  comm.nvlink_bandwidth_bytes_per_s = 0;
  EXPECT_EQ(error(comm),
            "NCCL communicator: NVLink within a node needs a positive NVLink bandwidth");
  comm = DgxH100(1);
  comm.nvlink = false;
  EXPECT_EQ(error(comm), "NCCL communicator: NVSwitch without NVLink");
  comm = DgxH100(1);
  comm.nvswitch = false;
  EXPECT_EQ(error(comm), "NCCL communicator: NVLink SHARP needs NVSwitch");
  comm = DgxH100(1);
  comm.compute_capability = 80;
  EXPECT_EQ(error(comm),
            "NCCL communicator: NVLink SHARP needs compute capability 90 or more, got 80");
  comm = DgxH100(2);
  comm.nics_per_node = 0;
  EXPECT_EQ(error(comm), "NCCL communicator: 2 nodes need at least 1 NIC per node, got 0");
  comm = DgxH100(2);
  comm.nic_bandwidth_bytes_per_s = 0;
  EXPECT_EQ(error(comm), "NCCL communicator: 2 nodes need a positive NIC bandwidth");
  EXPECT_EQ(error(DgxH100(1), -1), "all-reduce of -1 bytes: the size must be 0 or more");
}

// One GPU per node: every hop crosses the network, and NCCL takes the tree's NET latency for the
// ring too (§2.2): LL 6.6 + 6 x 5.0 = 36.6, LL128 14 + 6 x 8.5 = 65, Simple 8.4 + 6 x 14 = 92.4 µs
// over 4 nodes.
TEST(NcclTuning, OneGpuPerNodeRingUsesTreeNetLatency) {
  NcclCommunicator comm;
  comm.ranks = 4;
  comm.nodes = 4;
  comm.nic_bandwidth_bytes_per_s = 50e9;
  comm.nics_per_node = 8;
  EXPECT_NEAR(Us(Estimate(kAllReduce, 1000, comm, kRing, kLl).latency_s), 36.6, kExactUs);
  EXPECT_NEAR(Us(Estimate(kAllReduce, 1000, comm, kRing, kLl128).latency_s), 65.0, kExactUs);
  EXPECT_NEAR(Us(Estimate(kAllReduce, 1000, comm, kRing, kSimple).latency_s), 92.4, kExactUs);
}

// PCIe within a node: hwLat's PCI row (LL 6.6 + 6 x 1.0, Simple 8.4 + 6 x 5.7 for 4 ranks), no
// LL128, one search channel of 12 GB/s (PCI_BW) and so 256 threads for ring Simple: 2 runtime
// channels from 2 x 256 x 64 = 32768 bytes (512 threads would need 65536).
TEST(NcclTuning, PcieNode) {
  NcclCommunicator comm;
  comm.ranks = 4;
  comm.nvlink = false;
  EXPECT_NEAR(Us(Estimate(kAllReduce, 40000, comm, kRing, kLl).latency_s), 12.6, kExactUs);
  EXPECT_NEAR(Us(Estimate(kAllReduce, 40000, comm, kRing, kSimple).latency_s), 42.6, kExactUs);
  EXPECT_EQ(Estimate(kAllReduce, 40000, comm, kRing, kSimple).channels, 2);
  EXPECT_EQ(Estimate(kAllReduce, 32767, comm, kRing, kSimple).channels, 1);
  for (int64_t bytes = 1; bytes <= (int64_t{1} << 32); bytes *= 8) {
    EXPECT_NE(Choose(kAllReduce, bytes, comm).protocol, kLl128) << bytes;
  }
}

// §3.4: ring and tree drop channels while bytes < channels x threads x threshold: ring Simple
// 512 x 64 (all 24 channels from 786432 B), ring LL 512 x 8 x 8 ranks, tree LL128 640 x 8.
TEST(NcclTuning, SmallSizesUseFewerChannels) {
  const NcclCommunicator comm = DgxH100(1);
  EXPECT_EQ(Estimate(kAllReduce, 786432, comm, kRing, kSimple).channels, 24);
  EXPECT_EQ(Estimate(kAllReduce, 786431, comm, kRing, kSimple).channels, 23);
  EXPECT_EQ(Estimate(kAllReduce, 100000, comm, kRing, kSimple).channels, 3);  // 100000 / 32768
  EXPECT_EQ(Estimate(kAllReduce, 100000, comm, kRing, kLl).channels, 3);      // 100000 / 32768
  EXPECT_EQ(Estimate(kAllReduce, 100000, comm, kTree, kLl128).channels, 19);  // 100000 / 5120
  EXPECT_EQ(Estimate(kAllReduce, 8, comm, kRing, kLl).channels, 1);
  EXPECT_EQ(Estimate(kAllReduce, 8, comm, kNvls, kSimple).channels, 16);
}

// §3.2: NVLS's 128 KiB chunk drops to 64, 32, 16 KiB below 64, 8, 2 x (16 channels x 8 heads x
// the chunk so far): 1 GiB, 64 MiB, 8 MiB.
TEST(NcclTuning, NvlsChunkShrinksForSmallSizes) {
  const NcclCommunicator comm = DgxH100(1);
  const auto chunk = [&](int64_t bytes) {
    return Estimate(kAllReduce, bytes, comm, kNvls, kSimple).chunk_bytes;
  };
  EXPECT_EQ(chunk(int64_t{1} << 30), 128 << 10);
  EXPECT_EQ(chunk((int64_t{1} << 30) - 1), 64 << 10);
  EXPECT_EQ(chunk(int64_t{64} << 20), 64 << 10);
  EXPECT_EQ(chunk((int64_t{64} << 20) - 1), 32 << 10);
  EXPECT_EQ(chunk(int64_t{8} << 20), 32 << 10);
  EXPECT_EQ(chunk((int64_t{8} << 20) - 1), 16 << 10);
  EXPECT_EQ(Estimate(kAllReduce, 1 << 20, comm, kRing, kLl).chunk_bytes, 32 << 10);
  EXPECT_EQ(Estimate(kAllReduce, int64_t{1} << 30, comm, kTree, kSimple).chunk_bytes, 512 << 10);
  EXPECT_EQ(Estimate(kAllReduce, int64_t{1} << 30, DgxH100(2), kNvlsTree, kSimple).chunk_bytes,
            128 << 10);
}

}  // namespace
}  // namespace ppsim
