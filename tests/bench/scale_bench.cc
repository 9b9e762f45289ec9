// Cluster scale (issue 16): Llama 3 405B as Llama 3 trained it, Interleaved1F1B, pp 16, V 2, tp 8
// with sequence parallelism, full recomputation, sequence 8192, 16 microbatches, on DGX H100 with
// dp replicas (128 x dp GPUs; dp 128 is 16,384 GPUs on 2048 nodes). One iteration of the loop is a
// whole run as `ppsim run` makes it: prepare (model costs, NCCL's choices, compile) and execute on
// SimGrid (its fork and the timeline coming back included). Arg: dp. Replica 0 stands for all
// (--replicas one, the default); BM_Llama405bAllReplicas simulates each (dp 8 and 32 only: dp 128
// takes minutes).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "tests/bench/bench_inputs.h"
#include "tests/support/llama405b.h"

namespace ppsim {
namespace {

RunSpec Llama405b(int32_t dp, bool fold) {
  proto::RunConfig config = Llama405bRun(dp);
  config.set_replicas(fold ? "one" : "all");
  RunRequest request;
  Check(ResolveRun(config, std::make_shared<FlagLocator>(), {}, &request));
  return request.runs.at(0);
}

void RunLlama405b(benchmark::State& state, bool fold) {
  const RunSpec spec = Llama405b(static_cast<int32_t>(state.range(0)), fold);
  size_t tasks = 0;
  double makespan = 0;
  for (auto _ : state) {
    PreparedRun prepared;
    Check(PrepareRun(spec, &prepared));
    RunResult result;
    Check(ExecuteRun(prepared, &result));
    tasks = prepared.graph.num_tasks();
    makespan = result.metrics.makespan_s;
  }
  state.counters["gpus"] = 128.0 * static_cast<double>(state.range(0));
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["makespan_s"] = makespan;
}

void BM_Llama405b(benchmark::State& state) { RunLlama405b(state, true); }
BENCHMARK(BM_Llama405b)->Arg(8)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Llama405bAllReplicas(benchmark::State& state) { RunLlama405b(state, false); }
BENCHMARK(BM_Llama405bAllReplicas)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace ppsim
