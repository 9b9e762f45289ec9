// The two engines on a compiled 1F1B DAG (p = 64). The SimGrid figure includes its fork and the
// timeline coming back through the pipe, as every run pays them.
#include <benchmark/benchmark.h>

#include "sim/engine.h"
#include "tests/bench/bench_inputs.h"

namespace ppsim {
namespace {

void RunEngine(benchmark::State& state, EngineKind kind) {
  const BenchInputs in = MakeBenchInputs(64, static_cast<int32_t>(state.range(0)));
  TaskGraph graph;
  Check(CompileTaskGraph(in.schedule, in.costs, &graph));
  for (auto _ : state) {
    Timeline timeline;
    Status status = Execute(kind, graph, in.platform, &timeline);
    if (!status.ok()) state.SkipWithError(status.message().c_str());
    benchmark::DoNotOptimize(timeline.end_s.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * graph.num_tasks()));
  state.counters["tasks"] = static_cast<double>(graph.num_tasks());
}

void BM_CriticalPath(benchmark::State& state) { RunEngine(state, EngineKind::kCriticalPath); }
BENCHMARK(BM_CriticalPath)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_SimGrid(benchmark::State& state) { RunEngine(state, EngineKind::kSimGrid); }
BENCHMARK(BM_SimGrid)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace ppsim
