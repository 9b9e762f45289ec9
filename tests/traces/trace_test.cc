// The trace writers: Perfetto protobuf and Chrome JSON, read back and checked against the run and
// against closed forms (1F1B: 2pm compute slices, 2m(p - 1) transfers, two flows per transfer,
// rank r's peak activation (p - r)·M_B, makespan (m + p - 1)(F + B) with free transfers).
#include "traces/trace.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "experiments/run.h"
#include "traces/chrome_trace.h"
#include "sim/communication.h"
#include "traces/perfetto_trace.h"
#include "traces/perfetto_trace.pb.h"
#include "tests/support/cli.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

namespace pp = perfetto::protos;


constexpr int64_t kMiB = int64_t{1} << 20;

struct TracedRun {
  PreparedRun prepared;
  RunResult result;
  Timeline timeline;
  TraceRun trace;
};

std::unique_ptr<TracedRun> Execute(const proto::RunConfig& spec) {
  auto run = std::make_unique<TracedRun>();
  Status status = PrepareRun(SpecOf(spec), &run->prepared);
  EXPECT_TRUE(status.ok()) << status.message();
  status = ExecuteRun(run->prepared, &run->result, &run->timeline);
  EXPECT_TRUE(status.ok()) << status.message();
  run->trace.schedule = &run->prepared.schedule;
  run->trace.costs = &run->prepared.costs;
  run->trace.graph = &run->prepared.graph;
  run->trace.timeline = &run->timeline;
  run->trace.platform = &run->prepared.platform;
  run->trace.metrics = &run->result.metrics;
  run->trace.attributes = {{"ppsim_version", "test"}, {"command", "ppsim run & more"}};
  return run;
}

// 1F1B on `platform` with F = 1 ms, B = 2 ms, 1 MiB of activations, 32 MiB messages.
proto::RunConfig OneFOneB(int32_t p, int32_t m, const std::string& platform = "ideal") {
  proto::RunConfig spec;
  spec.set_schedule("1F1B");
  spec.set_pp(p);
  spec.set_microbatches(m);
  spec.set_f("1ms");
  spec.set_b("2ms");
  spec.set_activation("1MiB");
  spec.set_message_bytes("32MiB");
  spec.set_platform(platform);
  return spec;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/trace_test_" + name;
}

// A Perfetto trace read back, with what the invariant checks found.
// Whether `name` is an exposed-communication slice's (sim/communication.h ExposedKindsName):
// kinds joined by '+'.
bool ExposedName(std::string_view name) {
  for (size_t at = 0; at <= name.size();) {
    const size_t plus = std::min(name.find('+', at), name.size());
    bool kind = false;
    for (int k = 0; k < kNumCommKinds; ++k) {
      kind = kind || name.substr(at, plus - at) == CommKindName(CommKindAt(k));
    }
    if (!kind) return false;
    at = plus + 1;
  }
  return true;
}

struct Decoded {
  pp::Trace trace;
  std::map<uint64_t, pp::TrackDescriptor> tracks;
  size_t slices = 0;  // but the exposed-communication ones
  size_t exposed_slices = 0;
  std::map<uint64_t, int> flow_starts;  // id -> count
  std::map<uint64_t, int> flow_ends;
  std::map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> counters;  // uuid -> samples
  std::map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> slice_times;  // uuid -> slices
  std::map<std::string, uint64_t> event_names;  // interned
  std::map<uint64_t, std::vector<std::string>> slice_names;  // uuid -> names, as slice_times
  std::map<std::string, std::string> attributes;
};

// Reads `path` and checks, per track in timestamp order (written order for equal ones, as the
// trace processor does): every BEGIN has its END on the same track and slices never overlap.
Decoded DecodePerfetto(const std::string& path) {
  Decoded d;
  EXPECT_TRUE(d.trace.ParseFromString(ReadFile(path)));
  struct Event {
    int64_t ts;
    size_t order;
    pp::TrackEvent::Type type;
    std::string name;  // BEGIN
  };
  std::map<uint64_t, std::vector<Event>> events;
  std::map<uint64_t, std::string> name_of_iid;
  for (int i = 0; i < d.trace.packet_size(); ++i) {
    const pp::TracePacket& p = d.trace.packet(i);
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    EXPECT_EQ(p.sequence_flags(), i == 0 ? 3u : 2u) << "packet " << i;
    // Each name is interned once, in the packet that first uses it (or before).
    for (const auto& n : p.interned_data().event_names()) {
      EXPECT_TRUE(d.event_names.emplace(n.name(), n.iid()).second) << n.name() << " twice";
      EXPECT_TRUE(name_of_iid.emplace(n.iid(), n.name()).second) << "iid " << n.iid() << " twice";
    }
    for (const auto& a : p.trace_attributes().attribute()) {
      d.attributes[a.key()] = a.string_value();
    }
    if (p.has_track_descriptor()) {
      EXPECT_EQ(d.tracks.count(p.track_descriptor().uuid()), 0u);
      d.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
    }
    if (!p.has_track_event()) continue;
    const pp::TrackEvent& e = p.track_event();
    EXPECT_EQ(d.tracks.count(e.track_uuid()), 1u) << "event before its track";
    const int64_t ts = static_cast<int64_t>(p.timestamp());
    if (e.type() == pp::TrackEvent::TYPE_COUNTER) {
      d.counters[e.track_uuid()].push_back({ts, e.counter_value()});
      continue;
    }
    std::string name;
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      const auto known = name_of_iid.find(e.name_iid());
      EXPECT_NE(known, name_of_iid.end())
          << "packet " << i << " uses name iid " << e.name_iid() << " before it is interned";
      if (known != name_of_iid.end()) name = known->second;
    }
    events[e.track_uuid()].push_back({ts, static_cast<size_t>(i), e.type(), name});
    for (uint64_t id : e.flow_ids()) ++d.flow_starts[id];
    for (uint64_t id : e.terminating_flow_ids()) ++d.flow_ends[id];
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      ++(ExposedName(name) ? d.exposed_slices : d.slices);
    }
  }
  for (auto& [uuid, list] : events) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Event& a, const Event& b) { return a.ts < b.ts; });
    int64_t open = -1;
    for (const Event& e : list) {
      if (e.type == pp::TrackEvent::TYPE_SLICE_BEGIN) {
        EXPECT_EQ(open, -1) << "track " << uuid << ": a slice begins inside another at " << e.ts;
        open = e.ts;
        d.slice_names[uuid].push_back(e.name);
      } else {
        EXPECT_NE(open, -1) << "track " << uuid << ": END without BEGIN at " << e.ts;
        d.slice_times[uuid].push_back({open, e.ts});
        open = -1;
      }
    }
    EXPECT_EQ(open, -1) << "track " << uuid << ": unfinished slice";
  }
  for (const auto& [id, n] : d.flow_starts) {
    EXPECT_NE(id, 0u);
    EXPECT_EQ(n, 1) << "flow " << id << " starts " << n << " times";
    EXPECT_EQ(d.flow_ends[id], 1) << "flow " << id << " ends " << d.flow_ends[id] << " times";
  }
  EXPECT_EQ(d.flow_ends.size(), d.flow_starts.size());
  return d;
}

uint64_t TrackNamed(const Decoded& d, const std::string& name) {
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() == name || t.thread().thread_name() == name) return uuid;
  }
  ADD_FAILURE() << "no track " << name;
  return 0;
}

TEST(PerfettoTrace, OneFOneBHasASlicePerOpAndTransferAndTwoFlowsPerTransfer) {
  const int32_t p = 4, m = 8;
  auto run = Execute(OneFOneB(p, m));
  const std::string path = TempPath("1f1b.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  EXPECT_EQ(d.slices, size_t{2 * p * m + 2 * m * (p - 1)});
  EXPECT_EQ(d.flow_starts.size(), size_t{4 * m * (p - 1)});
  // A counter per rank and the total.
  EXPECT_EQ(d.counters.size(), size_t{p + 1});
  EXPECT_EQ(d.attributes.at("command"), "ppsim run & more");
  EXPECT_EQ(d.attributes.at("ppsim_version"), "test");
  // Named by kind and microbatch: F0 ... F7, B0 ... B7, and the two transfer names.
  std::set<std::string> names;
  for (int32_t mb = 0; mb < m; ++mb) {
    names.insert("F" + std::to_string(mb));
    names.insert("B" + std::to_string(mb));
  }
  names.insert("activation");
  names.insert("gradient");
  std::set<std::string> interned;
  for (const auto& [name, iid] : d.event_names) interned.insert(name);
  EXPECT_EQ(interned, names);
}

// 1F1B (Narayanan et al., PipeDream-Flush) on 4 ranks, 8 microbatches: rank r runs 3 - r warm-up
// forwards, then alternates a forward and a backward, then drains the backwards.
TEST(PerfettoTrace, ComputeSlicesAreNamedByKindAndMicrobatch) {
  auto run = Execute(OneFOneB(4, 8));
  const std::string path = TempPath("names.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  EXPECT_EQ(d.slice_names.at(TrackNamed(d, "rank 0 · stage 0 · GPU 0")),
            (std::vector<std::string>{"F0", "F1", "F2", "F3", "B0", "F4", "B1", "F5", "B2", "F6",
                                      "B3", "F7", "B4", "B5", "B6", "B7"}));
  EXPECT_EQ(d.slice_names.at(TrackNamed(d, "rank 3 · stage 3 · GPU 3")),
            (std::vector<std::string>{"F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3", "F4", "B4",
                                      "F5", "B5", "F6", "B6", "F7", "B7"}));
  EXPECT_EQ(d.slice_names.at(TrackNamed(d, "rank 0 → rank 1")).front(), "activation");
  EXPECT_EQ(d.slice_names.at(TrackNamed(d, "rank 1 → rank 0")).front(), "gradient");
}

// Every kind of action on one rank: split backwards, a full one, and an overlapped pair, whose
// name gives the forward's microbatch first. The Chrome trace names them alike.
TEST(PerfettoTrace, SplitBackwardsAndOverlappedPairsAreNamedByTheirMicrobatches) {
  const std::string schedule = TempPath("kinds.txt");
  {
    std::ofstream file(schedule);
    file << "rank 0: 0F0 0F1 0I0 (0F2;0B1)OVERLAP_F_B 0W0 0B2\n";
  }
  proto::RunConfig spec;
  spec.set_schedule_file(schedule);
  spec.set_f("1ms");
  spec.set_i("1ms");
  spec.set_w("1ms");
  spec.set_b("2ms");
  spec.set_platform("ideal");
  auto run = Execute(spec);
  const std::vector<std::string> expected = {"F0", "F1", "I0", "F2&B1", "W0", "B2"};
  const std::string path = TempPath("kinds.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  EXPECT_EQ(d.slice_names.at(TrackNamed(d, "rank 0 · stage 0 · GPU 0")), expected);
  const std::string json_path = TempPath("kinds.json");
  ASSERT_TRUE(WriteChromeTrace(run->trace, TraceWindow(), "--chrome-trace", json_path).ok());
  std::vector<std::string> json_names;
  std::string overlap_op;
  const nlohmann::json json = nlohmann::json::parse(ReadFile(json_path));
  for (const nlohmann::json& e : json["traceEvents"]) {
    if (e["ph"] != "X") continue;
    json_names.push_back(e["name"].get<std::string>());
    if (json_names.back() == "F2&B1") overlap_op = e["args"]["op"].get<std::string>();
  }
  EXPECT_EQ(json_names, expected);
  EXPECT_EQ(overlap_op, "(0F2;0B1)OVERLAP_F_B");  // the op stays in the args
}

TEST(PerfettoTrace, TimestampsAreTheSimulatedTimesInWholeNanoseconds) {
  const int32_t p = 4, m = 8;
  auto run = Execute(OneFOneB(p, m));
  const std::string path = TempPath("times.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  // Free transfers: rank r starts at r·F, and the iteration takes (m + p - 1)(F + B).
  int64_t last_end = 0;
  for (int32_t r = 0; r < p; ++r) {
    const uint64_t uuid = TrackNamed(d, "rank " + std::to_string(r) + " · stage " +
                                            std::to_string(r) + " · GPU " + std::to_string(r));
    const auto& slices = d.slice_times.at(uuid);
    ASSERT_EQ(slices.size(), size_t{2 * m});
    EXPECT_EQ(slices.front().first, r * 1'000'000);
    EXPECT_EQ(slices.front().second, (r + 1) * 1'000'000);
    last_end = std::max(last_end, slices.back().second);
  }
  EXPECT_EQ(last_end, (m + p - 1) * 3'000'000);
}

TEST(PerfettoTrace, MemoryCountersAreTheSimulatedActivationBytes) {
  const int32_t p = 4, m = 8;
  auto run = Execute(OneFOneB(p, m));
  const std::string path = TempPath("memory.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  for (int32_t r = 0; r < p; ++r) {
    const uint64_t uuid = TrackNamed(d, "rank " + std::to_string(r) + " activations");
    EXPECT_EQ(d.tracks.at(uuid).counter().unit(), pp::CounterDescriptor::UNIT_SIZE_BYTES);
    const auto& samples = d.counters.at(uuid);
    const auto& expected = run->result.metrics.memory_timeline[r];
    ASSERT_EQ(samples.size(), expected.size());
    for (size_t i = 0; i < samples.size(); ++i) {
      EXPECT_EQ(samples[i].first, TraceNs(expected[i].time_s));
      EXPECT_EQ(samples[i].second, expected[i].live_activation_bytes);
    }
    int64_t peak = 0;
    for (const auto& s : samples) peak = std::max(peak, s.second);
    EXPECT_EQ(peak, (p - r) * kMiB);  // 1F1B holds p - r microbatches at most
    EXPECT_EQ(samples.back().second, 0);
  }
  // The total: every rank's peak is reached while rank 0 holds p microbatches... at most the sum.
  const auto& total =
      d.counters.at(TrackNamed(d, "total memory (static + activations, all GPUs)"));
  EXPECT_EQ(total.front(), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(total.back().second, 0);
  int64_t peak = 0;
  for (const auto& s : total) peak = std::max(peak, s.second);
  EXPECT_LE(peak, (p * (p + 1) / 2) * kMiB);
  EXPECT_GE(peak, p * kMiB);
}

TEST(PerfettoTrace, TracksAreOrderedByRankWithLanesForTransfers) {
  auto run = Execute(OneFOneB(4, 8, "h100-node"));
  const std::string path = TempPath("tracks.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  std::vector<std::pair<int32_t, std::string>> threads;
  size_t processes = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process()) {
      ++processes;
      EXPECT_EQ(t.child_ordering(), pp::TrackDescriptor::EXPLICIT);
    }
    if (t.has_thread()) threads.push_back({t.sibling_order_rank(), t.thread().thread_name()});
  }
  EXPECT_EQ(processes, 2u);  // "all GPUs" and node 0
  std::sort(threads.begin(), threads.end());
  ASSERT_EQ(threads.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(threads[r].second, "rank " + std::to_string(r) + " · stage " + std::to_string(r) +
                                     " · GPU " + std::to_string(r));
  }
  EXPECT_GE(TrackNamed(d, "rank 0 → rank 1"), 1u);
  EXPECT_GE(TrackNamed(d, "rank 1 → rank 0"), 1u);
}

// The exposed-communication track (sim/communication.h): 1F1B, p = 2, m = 1, F = 1 s, B = 2 s,
// every transfer 0.25 s (ideal, eager p2p). Rank 1 waits for F0's activation over [1, 1.25] s,
// rank 0 for B0's gradient over [4.25, 4.5] s (tests/sim/communication_test.cc): one pp_p2p slice
// on each rank's track.
TEST(PerfettoTrace, ExposedCommunicationHasASlicePerWait) {
  proto::RunConfig spec = OneFOneB(2, 1);
  spec.set_f("1s");
  spec.set_b("2s");
  spec.set_p2p_latency("250ms");
  auto run = Execute(spec);
  const std::string path = TempPath("exposed.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  const uint64_t rank0 = TrackNamed(d, "rank 0 · exposed communication");
  const uint64_t rank1 = TrackNamed(d, "rank 1 · exposed communication");
  using Times = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(d.slice_times.at(rank0), (Times{{4'250'000'000, 4'500'000'000}}));
  EXPECT_EQ(d.slice_times.at(rank1), (Times{{1'000'000'000, 1'250'000'000}}));
  EXPECT_EQ(d.slice_names.at(rank0), (std::vector<std::string>{"pp_p2p"}));
  EXPECT_EQ(d.slice_names.at(rank1), (std::vector<std::string>{"pp_p2p"}));
}

TEST(PerfettoTrace, GzipHoldsTheSameBytes) {
  auto run = Execute(OneFOneB(2, 4));
  const std::string plain = TempPath("same.pftrace");
  const std::string zipped = TempPath("same.pftrace.gz");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", plain).ok());
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", zipped).ok());
  const std::string compressed = ReadFile(zipped);
  ASSERT_GE(compressed.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(compressed[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(compressed[1]), 0x8b);
  google::protobuf::io::ArrayInputStream array(compressed.data(),
                                               static_cast<int>(compressed.size()));
  google::protobuf::io::GzipInputStream gzip(&array);
  std::string inflated;
  const void* data;
  int size;
  while (gzip.Next(&data, &size)) inflated.append(static_cast<const char*>(data), size);
  EXPECT_EQ(inflated, ReadFile(plain));
  EXPECT_FALSE(Exists(plain + ".tmp"));
}

TEST(PerfettoTrace, SameRunSameBytes) {
  auto run = Execute(OneFOneB(4, 8, "h100-node"));
  const std::string a = TempPath("a.pftrace");
  const std::string b = TempPath("b.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", a).ok());
  auto again = Execute(OneFOneB(4, 8, "h100-node"));
  ASSERT_TRUE(WritePerfettoTrace(again->trace, TraceWindow(), "--trace", b).ok());
  EXPECT_EQ(ReadFile(a), ReadFile(b));
}

TEST(PerfettoTrace, AWindowShowsItsMicrobatchesTransfersAndFlows) {
  const int32_t p = 4, m = 8;
  auto run = Execute(OneFOneB(p, m));
  TraceWindow window;
  ASSERT_TRUE(ParseTraceWindow("--trace-microbatches", "2:4", &window).ok());
  const std::string path = TempPath("window.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, window, "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  const int32_t k = 2;  // microbatches shown
  EXPECT_EQ(d.slices, size_t{2 * p * k + 2 * k * (p - 1)});
  EXPECT_EQ(d.flow_starts.size(), size_t{4 * k * (p - 1)});
  // Rank 0 runs F2 at 2 ms (after F0, F1 of warm-up 1F1B: p - 1 = 3 forwards first).
  const auto& rank0 = d.slice_times.at(TrackNamed(d, "rank 0 · stage 0 · GPU 0"));
  EXPECT_EQ(rank0.front().first, 2'000'000);
}

TEST(PerfettoTrace, DataAndTensorParallelRunsFlowThroughEveryShardAndRingStep) {
  // ZB-H1, p = 4, m = 8, dp = 2, tp = 2 on two DGX H100 nodes.
  proto::RunConfig spec = OneFOneB(4, 8, "dgx-h100");
  spec.set_schedule("ZB-H1");
  spec.clear_b();
  spec.set_i("1ms");
  spec.set_w("1ms");
  spec.set_grad_bytes("1GiB");
  spec.set_nodes(2);
  spec.set_dp(2);
  spec.set_tp(2);
  spec.set_replicas("all");  // every replica's tracks
  auto run = Execute(spec);
  const std::string path = TempPath("dp_tp.pftrace");
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", path).ok());
  const Decoded d = DecodePerfetto(path);
  const size_t compute = 3 * 4 * 8 * 2;           // F, I, W per stage and microbatch, 2 replicas
  const size_t transfers = 2 * 8 * 3 * 2 * 2;     // 2m(p - 1) per replica, split over tp
  // Each member's 2(dp - 1) ring steps are one chain over one route, drawn as one slice
  // (Task::steps): stages × shards × dp members.
  const size_t ring_members = 4 * 2 * 2;
  EXPECT_EQ(d.slices, compute + transfers + ring_members);
  // Two flows per transfer; a ring member's merged steps follow NCCL's fixed-latency timer (not
  // drawn).
  EXPECT_EQ(d.flow_starts.size(), 2 * transfers);
  EXPECT_EQ(d.counters.size(), size_t{4 * 2 + 1});
}

TEST(ChromeTrace, MicrosecondsArePrintedExactlyFromNanoseconds) {
  EXPECT_EQ(MicrosecondsText(0), "0.000");
  EXPECT_EQ(MicrosecondsText(5), "0.005");
  EXPECT_EQ(MicrosecondsText(1234567), "1234.567");
  EXPECT_EQ(MicrosecondsText(33'000'000'000), "33000000.000");
}

TEST(ChromeTrace, EventsMatchTheProtobufTrace) {
  const int32_t p = 4, m = 8;
  auto run = Execute(OneFOneB(p, m, "h100-node"));
  const std::string json_path = TempPath("1f1b.json");
  const std::string proto_path = TempPath("1f1b_for_json.pftrace");
  ASSERT_TRUE(WriteChromeTrace(run->trace, TraceWindow(), "--chrome-trace", json_path).ok());
  ASSERT_TRUE(WritePerfettoTrace(run->trace, TraceWindow(), "--trace", proto_path).ok());
  const std::string text = ReadFile(json_path);
  const nlohmann::json json = nlohmann::json::parse(text);
  const Decoded d = DecodePerfetto(proto_path);

  size_t slices = 0;
  std::map<int64_t, int> flow_s, flow_f;
  std::set<std::pair<int64_t, int64_t>> named_threads;
  std::set<int64_t> named_processes;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> counters;
  std::multiset<std::pair<int64_t, int64_t>> json_times, proto_times;
  for (const nlohmann::json& e : json["traceEvents"]) {
    const std::string ph = e["ph"].get<std::string>();
    const int64_t pid = static_cast<int64_t>(e["pid"].get<double>());
    if (ph == "X") {
      if (!ExposedName(e["name"].get<std::string>())) ++slices;
      const int64_t ts = std::llround(e["ts"].get<double>() * 1000);
      json_times.insert({ts, ts + std::llround(e["dur"].get<double>() * 1000)});
    } else if (ph == "s") {
      ++flow_s[static_cast<int64_t>(e["id"].get<double>())];
    } else if (ph == "f") {
      ++flow_f[static_cast<int64_t>(e["id"].get<double>())];
      EXPECT_EQ(e["bp"].get<std::string>(), "e");
    } else if (ph == "M" && e["name"].get<std::string>() == "thread_name") {
      named_threads.insert({pid, static_cast<int64_t>(e["tid"].get<double>())});
    } else if (ph == "M" && e["name"].get<std::string>() == "process_name") {
      named_processes.insert(pid);
    } else if (ph == "C") {
      counters[e["name"].get<std::string>()].push_back(
          {std::llround(e["ts"].get<double>() * 1000), static_cast<int64_t>(e["args"]["bytes"].get<double>())});
    }
  }
  for (const auto& [uuid, list] : d.slice_times) {
    for (const auto& times : list) proto_times.insert(times);
  }
  EXPECT_EQ(slices, size_t{2 * p * m + 2 * m * (p - 1)});
  EXPECT_EQ(json_times, proto_times);
  EXPECT_EQ(flow_s.size(), size_t{4 * m * (p - 1)});
  for (const auto& [id, n] : flow_s) {
    EXPECT_EQ(n, 1);
    EXPECT_EQ(flow_f[id], 1);
  }
  EXPECT_EQ(flow_f.size(), flow_s.size());
  EXPECT_EQ(named_processes.size(), 2u);
  EXPECT_EQ(counters.size(), size_t{p + 1});
  const auto& rank1 = counters.at("rank 1 activations");
  const auto& expected = run->result.metrics.memory_timeline[1];
  ASSERT_EQ(rank1.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(rank1[i].first, TraceNs(expected[i].time_s));
    EXPECT_EQ(rank1[i].second, expected[i].live_activation_bytes);
  }
  // Every ts and dur printed as <us>.<3 digits>.
  const std::regex number("\"(ts|dur)\":([0-9.]+)");
  size_t checked = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it, ++checked) {
    EXPECT_TRUE(std::regex_match((*it)[2].str(), std::regex("[0-9]+\\.[0-9]{3}")))
        << (*it)[0].str();
  }
  EXPECT_GT(checked, slices);
  EXPECT_EQ(json["metadata"]["command"].get<std::string>(), "ppsim run & more");
}

TEST(TraceWindow, ParsesPythonSlices) {
  TraceWindow w;
  ASSERT_TRUE(ParseTraceWindow("--trace-microbatches", "2:5", &w).ok());
  EXPECT_EQ(w.first_microbatch, 2);
  EXPECT_EQ(w.end_microbatch, 5);
  ASSERT_TRUE(ParseTraceWindow("--trace-microbatches", "3:", &w).ok());
  EXPECT_EQ(w.first_microbatch, 3);
  EXPECT_EQ(w.end_microbatch, -1);
  EXPECT_TRUE(CheckTraceWindow("--trace-microbatches", w, 4).ok());
}

TEST(TraceWindow, RejectsWhatIsNotAWindowOfTheRun) {
  TraceWindow w;
  EXPECT_EQ(ParseTraceWindow("--trace-microbatches", "5", &w).message(),
            "--trace-microbatches: expected FIRST:END (microbatches FIRST to END - 1, e.g. 0:8, "
            "or 8: for the rest); got '5'");
  EXPECT_EQ(ParseTraceWindow("--trace-microbatches", "a:3", &w).message(),
            "--trace-microbatches: expected FIRST:END (microbatches FIRST to END - 1, e.g. 0:8, "
            "or 8: for the rest); got 'a:3'");
  EXPECT_EQ(ParseTraceWindow("--trace-microbatches", "4:4", &w).message(),
            "--trace-microbatches: the window 4:4 is empty; END must be more than FIRST");
  ASSERT_TRUE(ParseTraceWindow("--trace-microbatches", "6:10", &w).ok());
  EXPECT_EQ(CheckTraceWindow("--trace-microbatches", w, 8).message(),
            "--trace-microbatches: microbatches 6:10 are not all in the run; it has microbatches "
            "0 to 7 (window 0:8)");
}

}  // namespace
}  // namespace ppsim
