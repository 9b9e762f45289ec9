// Which op's output each op of a schedule needs, and which action produced it: the data
// dependencies the compiler turns into edges (sim/task_graph.cc) and the search's work bound
// follows (batch/search.cc), in one place.
#ifndef PPSIM_SIM_DEPENDENCIES_H_
#define PPSIM_SIM_DEPENDENCIES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedules/schedule.h"

namespace ppsim {

// What an op consumes: the output of another op, named by its (stage, microbatch).
enum class Output {
  kActivation,     // F(stage, microbatch)'s output.
  kGradient,       // The input gradient from I or B (stage, microbatch).
  kInputGradient,  // I(stage, microbatch) having run (W needs it).
};

struct Need {
  Output output;
  int32_t stage;
  int32_t microbatch;
};

// The needs of `op` within the pipeline its microbatch flows through; returns how many (0 or 1).
int NeedsOf(const Op& op, const Schedule& schedule, Need* need);

// Which action (a caller's number for it: a task, a position in a flat list) produces each output.
class Producers {
 public:
  explicit Producers(const Schedule& schedule);

  // Records that `action` (whose op `op` is) produces op's outputs.
  void Add(const Op& op, uint32_t action);
  uint32_t Of(const Need& need) const;

 private:
  size_t Cell(int32_t stage, int32_t microbatch) const {
    return static_cast<size_t>(stage) * num_microbatches_ + microbatch;
  }

  size_t num_microbatches_;
  std::vector<uint32_t> actions_[3];
};

}  // namespace ppsim

#endif  // PPSIM_SIM_DEPENDENCIES_H_
