// Builds the SimGrid platform for a PlatformSpec. Only sim/ talks to SimGrid.
#ifndef PPSIM_SIM_SIMGRID_PLATFORM_H_
#define PPSIM_SIM_SIMGRID_PLATFORM_H_

#include <simgrid/s4u/Host.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platforms/platform.h"
#include "base/status.h"

namespace ppsim {

// The SimGrid host of each GPU a run uses, by GPU number; kTimerHost: the timer.
using GpuHosts = std::unordered_map<int32_t, simgrid::s4u::Host*>;
inline constexpr int32_t kTimerHost = -1;
// The timer host's speed per core, in FLOP/s: a delay of d seconds is an Exec of d x this.
inline constexpr double kTimerSpeed = 1e12;

// Creates the platform in the current SimGrid engine and seals it, and sets `gpus` to the host of
// every GPU in `used_gpus`. A cluster becomes one zone holding a host per used GPU and the links
// (shared or fat pipe) the routes cross, with a route for each (source GPU, destination GPU) pair
// in `routes` listing the links PlatformSpec::RouteBetween gives; GPUs and links the run does not
// use are not created. An XML platform is loaded from its file and its hosts looked up by name
// (InvalidInput where the hosts were given when one is missing). With `timer_cores` > 0 a cluster
// also gets a timer host (kTimerHost) of that many cores at kTimerSpeed each: up to that many
// delays run on it at once without sharing (an Exec uses one core).
// REQUIRES: the engine exists, its network model is configured, and no zone was created yet.
Status BuildSimGridPlatform(const PlatformSpec& platform, const std::vector<int32_t>& used_gpus,
                            const std::vector<std::pair<int32_t, int32_t>>& routes,
                            int32_t timer_cores, GpuHosts* gpus);

}  // namespace ppsim

#endif  // PPSIM_SIM_SIMGRID_PLATFORM_H_
