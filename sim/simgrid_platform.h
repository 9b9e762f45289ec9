// Builds the SimGrid platform for a PlatformSpec. Only sim/ talks to SimGrid.
#ifndef PPSIM_SIM_SIMGRID_PLATFORM_H_
#define PPSIM_SIM_SIMGRID_PLATFORM_H_

#include <simgrid/s4u/Host.hpp>
#include <utility>
#include <vector>

#include "platforms/platform.h"
#include "base/status.h"

namespace ppsim {

// Creates the platform in the current SimGrid engine and seals it, and sets `gpus` to the host of
// every GPU. A cluster becomes one zone holding a host per GPU and a link per LinkSpec (shared or
// fat pipe), with a route for each (source GPU, destination GPU) pair in `routes` listing the
// links PlatformSpec::RouteBetween gives. An XML platform is loaded from its file and its hosts
// looked up by name (InvalidInput naming --hosts when one is missing).
// REQUIRES: the engine exists, its network model is configured, and no zone was created yet.
Status BuildSimGridPlatform(const PlatformSpec& platform,
                            const std::vector<std::pair<int32_t, int32_t>>& routes,
                            std::vector<simgrid::s4u::Host*>* gpus);

}  // namespace ppsim

#endif  // PPSIM_SIM_SIMGRID_PLATFORM_H_
