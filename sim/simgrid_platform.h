// Builds the SimGrid platform for a PlatformSpec. Only sim/ talks to SimGrid.
#ifndef PPSIM_SIM_SIMGRID_PLATFORM_H_
#define PPSIM_SIM_SIMGRID_PLATFORM_H_

#include <map>
#include <simgrid/s4u/Host.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "platforms/platform.h"

namespace ppsim {

// The SimGrid host of each GPU a run uses, by GPU number; kTimerHost: the timer;
// MirrorHostOf(g, v): the end of mirrored transfers standing for GPU g's receives, one host per
// route variant v (0..2: a mirrored step's route depends on its successor and predecessor;
// kExpertRingHost for the experts' rings), and the end of all-to-all flows into g
// (v = kAllToAllHost: their routes may take the links' all-to-all shadows, so they must not share
// a pair of hosts with other transfers).
using GpuHosts = std::unordered_map<int32_t, simgrid::s4u::Host*>;
inline constexpr int32_t kTimerHost = -1;
inline constexpr int32_t kAllToAllHost = 3;
inline constexpr int32_t kExpertRingHost = 4;  // mirrored steps of the experts' gradient rings
inline constexpr int32_t kMirrorVariants = 8;
inline constexpr int32_t MirrorHostOf(int32_t gpu, int32_t variant) {
  return -2 - (kMirrorVariants * gpu + variant);
}
// A route's link id standing for the all-to-all shadow of link `id`: a link of the link's latency
// and 1/k of its bandwidth, k its AllToAllShares share, that only all-to-all flows cross. With
// folded replicas the compiled flows on a link stand for k times as many; the shadow gives them
// their share of it without dividing the link for the pipeline's transfers and collectives,
// which then do not contend with the all-to-all on it.
inline constexpr int32_t AllToAllShadowOf(int32_t id) { return -1 - id; }
// A link of a merged all-to-all flow's own (sim/engine.h GroupAllToAllFlows): link `real`'s
// latency, sharing policy and name, with its own bandwidth; routes name the i-th of a run's
// private links PrivateLinkId(i).
struct PrivateLink {
  int32_t real = 0;
  double bandwidth_bytes_per_s = 0;
};
inline constexpr int32_t kPrivateLinkBase = -(1 << 29);
inline constexpr int32_t PrivateLinkId(int32_t i) { return kPrivateLinkBase - i; }
// The timer host's speed per core, in FLOP/s: a delay of d seconds is an Exec of d x this.
inline constexpr double kTimerSpeed = 1e12;

// Creates the platform in the current SimGrid engine and seals it, and sets `gpus` to the host of
// every GPU in `used_gpus` (and every mirror host, MirrorHostOf, among them). A cluster becomes one
// zone holding a host per used GPU and the links (shared or fat pipe) the routes cross, with the
// given route (a list of PlatformSpec links) for each pair of hosts in `routes`; GPUs and links
// the run does not use are not created. A link listed in `sharers` with k > 1 gets 1/k of its
// bandwidth (k need not be whole): the share of one of k replicas that cross it alike (folded
// replicas); a shadow link (AllToAllShadowOf) gets 1/k of the link's bandwidth, k its share in
// `a2a_shares`; a private link (PrivateLinkId(i)) is `private_links[i]`. An XML platform
// is loaded from its file and its hosts looked up by name (InvalidInput where the hosts were given
// when one is missing, or when a pair of hosts in `routes` has no route in the file). With
// `timer_cores` > 0 a cluster also gets a timer host (kTimerHost) of that many cores at kTimerSpeed
// each: up to that many delays run on it at once without sharing (an Exec uses one core). REQUIRES:
// the engine exists, its network model is configured, and no zone was created yet.
Status BuildSimGridPlatform(const PlatformSpec& platform, const std::vector<int32_t>& used_gpus,
                            const std::map<std::pair<int32_t, int32_t>, Route>& routes,
                            const std::map<int32_t, double>& sharers,
                            const std::map<int32_t, double>& a2a_shares,
                            const std::vector<PrivateLink>& private_links, int32_t timer_cores,
                            GpuHosts* gpus);

}  // namespace ppsim

#endif  // PPSIM_SIM_SIMGRID_PLATFORM_H_
