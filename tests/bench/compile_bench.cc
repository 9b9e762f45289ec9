// Schedule generation and DAG compilation (validation, CSR construction, deadlock check).
#include <benchmark/benchmark.h>

#include "sim/task_graph.h"
#include "tests/bench/bench_inputs.h"

namespace ppsim {
namespace {

void BM_GenerateOneFOneB(benchmark::State& state) {
  const int32_t m = static_cast<int32_t>(state.range(0));
  for (auto _ : state) {
    Schedule s;
    Check(GenerateSchedule("1F1B", ScheduleParams{64, 1, m}, &s));
    benchmark::DoNotOptimize(s.orders.data());
  }
  state.SetItemsProcessed(state.iterations() * 2 * 64 * m);
}
BENCHMARK(BM_GenerateOneFOneB)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_CompileTaskGraph(benchmark::State& state) {
  const BenchInputs in = MakeBenchInputs(64, static_cast<int32_t>(state.range(0)));
  size_t tasks = 0;
  for (auto _ : state) {
    TaskGraph graph;
    Check(CompileTaskGraph(in.schedule, in.costs, &graph));
    tasks = graph.num_tasks();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * tasks));
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_CompileTaskGraph)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ppsim
