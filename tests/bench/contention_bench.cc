// SimGrid with contention against the same run without: 1F1B, pp 8, dp 2, 256 microbatches of
// 64 MiB messages and 1 GiB of gradients per stage, on two 8-GPU dgx-h100 nodes (per-GPU rail
// NICs, or one shared NIC per node) and on `ideal` (one fat pipe: nothing contends). The issue's
// target: contention costs at most 2x the simulation time of the ideal run.
#include <benchmark/benchmark.h>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run.h"
#include "tests/bench/bench_inputs.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

proto::RunConfig ContentionSpec(int64_t platform) {
  proto::RunConfig spec;
  spec.set_schedule("1F1B");
  spec.set_pp(8);
  spec.set_microbatches(256);
  spec.set_f("1ms");
  spec.set_b("2ms");
  spec.set_message_bytes("64MiB");
  spec.set_grad_bytes("1GiB");
  spec.set_dp(2);
  switch (platform) {
    case 0:
      spec.set_platform("ideal");
      spec.set_p2p_latency("5us");
      spec.set_p2p_bandwidth("50GB/s");
      break;
    case 1:
      spec.set_platform("dgx-h100");
      spec.set_nodes(2);
      break;
    default:
      spec.set_platform("dgx-h100");
      spec.set_nodes(2);
      spec.add_set("nic.attachment=PER_NODE");
      spec.add_set("network.topology=SINGLE_SWITCH");
  }
  return spec;
}

void BM_SimGridContention(benchmark::State& state) {
  RunRequest request;
  Check(ResolveRun(ContentionSpec(state.range(0)), std::make_shared<FlagLocator>(), {}, &request));
  PreparedRun run;
  const Status status = PrepareRun(request.runs[0], &run);
  if (!status.ok()) {
    state.SkipWithError(status.message().c_str());
    return;
  }
  double makespan = 0;
  for (auto _ : state) {
    Timeline timeline;
    const Status executed = Execute(EngineKind::kSimGrid, run.graph, run.platform, &timeline);
    if (!executed.ok()) state.SkipWithError(executed.message().c_str());
    makespan = *std::max_element(timeline.end_s.begin(), timeline.end_s.end());
  }
  state.counters["tasks"] = static_cast<double>(run.graph.num_tasks());
  state.counters["makespan_s"] = makespan;
  state.SetLabel(state.range(0) == 0   ? "ideal"
                 : state.range(0) == 1 ? "2 x dgx-h100, rail NICs"
                                       : "2 x dgx-h100, one NIC per node");
}
BENCHMARK(BM_SimGridContention)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ppsim
