// What `--emit megatron|torchtitan` reports for a run (experiments/framework_emit.h makes it).
#ifndef PPSIM_EXPERIMENTS_FRAMEWORK_LAUNCH_H_
#define PPSIM_EXPERIMENTS_FRAMEWORK_LAUNCH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "experiments/run_config.pb.h"

namespace ppsim {

enum class Framework { kMegatron, kTorchtitan };

// "megatron" or "torchtitan"; `where` names the field in the message ("--emit: unknown
// framework 'x'; valid: megatron, torchtitan").
Status ParseFramework(const std::string& where, std::string_view text, Framework* framework);
std::string_view FrameworkName(Framework framework);

struct FrameworkLaunch {
  Framework framework = Framework::kMegatron;
  // Megatron-LM: the arguments, one per line, each line but the last continued with " \" (as a
  // launch script writes them; --megatron @FILE reads them back). torchtitan: the job file.
  std::string text;
  // torchtitan with an order no named schedule has: that order as torch's schedule CSV, to be
  // saved beside the job file as `schedule_csv_name` (which the job file names). Empty otherwise.
  std::string schedule_csv;
  std::string schedule_csv_name;
  // The request's fields beside the import that make ppsim's run the same (run_config.proto
  // fields; RunFlags gives them as flags).
  proto::RunConfig ppsim_fields;
  int64_t gpus = 0;                // the GPUs to launch on: pp x dp x tp x cp
  std::vector<std::string> notes;  // where the framework would run it otherwise, and why
};

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_FRAMEWORK_LAUNCH_H_
