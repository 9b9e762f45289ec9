// Inputs for the tests of results files and the report.
#ifndef PPSIM_TESTS_SUPPORT_RESULTS_H_
#define PPSIM_TESTS_SUPPORT_RESULTS_H_

namespace ppsim {

// The header `ppsim run --format csv` writes (experiments/run_output.cc), a line of its own.
inline constexpr const char* kRunCsvHeader =
    "schedule,pp,stages,microbatches,platform,engine,makespan_s,bubble_over_makespan,"
    "bubble_over_ideal,stage_bubble_rate,peak_activation_bytes,compute_tasks,transfer_tasks,"
    "transfer_bytes,peak_memory_bytes,memory_capacity_bytes,oom_ranks,mfu,hfu,samples_per_s,"
    "tokens_per_s,time_to_train_s,gpu_hours,cost,dp,tp,allreduce_tail_s,intra_node_bytes,"
    "inter_node_bytes\n";

}  // namespace ppsim

#endif  // PPSIM_TESTS_SUPPORT_RESULTS_H_
