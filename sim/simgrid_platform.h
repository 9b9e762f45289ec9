// Builds the SimGrid platform for a PlatformSpec. Only sim/ talks to SimGrid.
#ifndef PPSIM_SIM_SIMGRID_PLATFORM_H_
#define PPSIM_SIM_SIMGRID_PLATFORM_H_

#include <simgrid/s4u/Host.hpp>
#include <utility>
#include <vector>

#include "platforms/platform.h"

namespace ppsim {

// Creates the platform's zone, hosts and links in the current SimGrid engine and seals it.
// `routes` lists the (source GPU, destination GPU) pairs transfers use; a full mesh only creates
// the links those need. Returns the host of each rank.
// REQUIRES: the engine exists, its network model is configured, and no zone was created yet.
std::vector<simgrid::s4u::Host*> BuildSimGridPlatform(
    const PlatformSpec& platform, const std::vector<std::pair<int32_t, int32_t>>& routes);

}  // namespace ppsim

#endif  // PPSIM_SIM_SIMGRID_PLATFORM_H_
