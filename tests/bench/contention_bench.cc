// SimGrid with contention against the same run without: 1F1B, pp 8, dp 2, 256 microbatches of
// 64 MiB messages and 1 GiB of gradients per stage, on two 8-GPU dgx-h100 nodes (per-GPU rail
// NICs, or one shared NIC per node) and on `ideal` (one fat pipe: nothing contends). The issue's
// target: contention costs at most 2x the simulation time of the ideal run.
#include <benchmark/benchmark.h>

#include "experiments/run.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

RunSpec ContentionSpec(int64_t platform) {
  RunSpec spec;
  spec.schedule_name = "1F1B";
  spec.params = ScheduleParams{8, 1, 256};
  spec.costs.forward = "1ms";
  spec.costs.backward = "2ms";
  spec.costs.message = "64MiB";
  spec.costs.gradient = "1GiB";
  spec.training.dp = 2;
  switch (platform) {
    case 0: spec.platform = IdealChoice(5e-6, 50e9); break;
    case 1: spec.platform = PresetChoice("dgx-h100", {}, 2); break;
    default:
      spec.platform = PresetChoice(
          "dgx-h100", {"nic.attachment=PER_NODE", "network.topology=SINGLE_SWITCH"}, 2);
  }
  return spec;
}

void BM_SimGridContention(benchmark::State& state) {
  PreparedRun run;
  const Status status = PrepareRun(ContentionSpec(state.range(0)), &run);
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
