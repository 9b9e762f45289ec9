// Writing the trace of a 1F1B run (p = 64) against simulating it (BM_SimGrid in
// engines_bench.cc, same inputs): the layout streamed to a sink that keeps nothing, and the
// Perfetto, gzipped Perfetto and Chrome JSON files written to the temporary folder.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "traces/chrome_trace.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "traces/perfetto_trace.h"
#include "tests/bench/bench_inputs.h"

namespace ppsim {
namespace {

struct ExecutedRun {
  BenchInputs in;
  TaskGraph graph;
  Timeline timeline;
  RunMetrics metrics;
  TraceRun trace;
};

// One executed run per size, shared by the benchmarks (the critical path gives the same
// timeline as SimGrid on these uncontended inputs, in a fraction of the time).
const ExecutedRun& Run(int32_t m) {
  static std::map<int32_t, ExecutedRun*> runs;
  ExecutedRun*& run = runs[m];
  if (run == nullptr) {
    run = new ExecutedRun();
    run->in = MakeBenchInputs(64, m);
    run->in.costs.activation_bytes.assign(run->in.costs.activation_bytes.size(), 1 << 20);
    Check(CompileTaskGraph(run->in.schedule, run->in.costs, &run->graph));
    Check(Execute(EngineKind::kCriticalPath, run->graph, run->in.platform, &run->timeline));
    run->metrics = ComputeMetrics(run->in.schedule, run->in.costs, run->graph, run->timeline);
    run->trace.schedule = &run->in.schedule;
    run->trace.costs = &run->in.costs;
    run->trace.graph = &run->graph;
    run->trace.timeline = &run->timeline;
    run->trace.platform = &run->in.platform;
    run->trace.metrics = &run->metrics;
  }
  return *run;
}

class CountingSink : public TraceSink {
 public:
  void Track(const TraceTrack&) override { ++events; }
  void Slice(const TraceSlice&) override { ++events; }
  void Counter(const TraceCounter&) override { ++events; }
  size_t events = 0;
};

void Finish(benchmark::State& state, const ExecutedRun& run, const std::string& path) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * run.graph.num_tasks()));
  state.counters["tasks"] = static_cast<double>(run.graph.num_tasks());
  if (!path.empty()) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f != nullptr) {
      std::fseek(f, 0, SEEK_END);
      state.counters["MB"] = static_cast<double>(std::ftell(f)) / 1e6;
      std::fclose(f);
    }
    std::remove(path.c_str());
  }
}

void BM_StreamTrace(benchmark::State& state) {
  const ExecutedRun& run = Run(static_cast<int32_t>(state.range(0)));
  for (auto _ : state) {
    CountingSink sink;
    StreamTrace(run.trace, TraceWindow(), &sink);
    benchmark::DoNotOptimize(sink.events);
  }
  Finish(state, run, "");
}
BENCHMARK(BM_StreamTrace)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

void WriteWith(benchmark::State& state, const char* name,
               Status (*write)(const TraceRun&, const TraceWindow&, std::string_view,
                               const std::string&)) {
  const ExecutedRun& run = Run(static_cast<int32_t>(state.range(0)));
  const std::string path = "/tmp/ppsim_trace_bench_" + std::to_string(getpid()) + name;
  for (auto _ : state) {
    const Status status = write(run.trace, TraceWindow(), "bench", path);
    if (!status.ok()) state.SkipWithError(status.message().c_str());
  }
  Finish(state, run, path);
}

void BM_WritePerfetto(benchmark::State& state) {
  WriteWith(state, ".pftrace", WritePerfettoTrace);
}
BENCHMARK(BM_WritePerfetto)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_WritePerfettoGzip(benchmark::State& state) {
  WriteWith(state, ".pftrace.gz", WritePerfettoTrace);
}
BENCHMARK(BM_WritePerfettoGzip)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_WriteChromeJson(benchmark::State& state) {
  WriteWith(state, ".json", WriteChromeTrace);
}
BENCHMARK(BM_WriteChromeJson)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ppsim
