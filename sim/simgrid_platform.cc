#include "sim/simgrid_platform.h"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <cmath>
#include <set>
#include <string>

namespace ppsim {
namespace {

namespace s4u = simgrid::s4u;

// SimGrid needs a finite bandwidth. 1e30 B/s moves a terabyte in 1e-18 s, far below the
// resolution of any timing here, so "infinite" stays infinite in effect.
double SimGridBandwidth(double bytes_per_s) {
  return std::isinf(bytes_per_s) ? 1e30 : bytes_per_s;
}

}  // namespace

std::vector<s4u::Host*> BuildSimGridPlatform(
    const PlatformSpec& platform, const std::vector<std::pair<int32_t, int32_t>>& routes) {
  s4u::NetZone* zone = s4u::create_full_zone(platform.name);
  std::vector<s4u::Host*> gpus;
  for (int32_t g = 0; g < platform.num_gpus; ++g) {
    gpus.push_back(zone->create_host("gpu" + std::to_string(g), platform.gpu_flops_per_s)->seal());
  }
  const double bandwidth = SimGridBandwidth(platform.link_bandwidth_bytes_per_s);
  switch (platform.fabric) {
    case Fabric::kFullMesh: {
      // One fat-pipe link per unordered pair: every flow gets the full bandwidth.
      std::set<std::pair<int32_t, int32_t>> pairs;
      for (const auto& [a, b] : routes) pairs.emplace(std::min(a, b), std::max(a, b));
      for (const auto& [a, b] : pairs) {
        s4u::Link* link = zone->create_link("link" + std::to_string(a) + "_" + std::to_string(b),
                                            bandwidth)
                              ->set_latency(platform.link_latency_s)
                              ->set_sharing_policy(s4u::Link::SharingPolicy::FATPIPE)
                              ->seal();
        zone->add_route(gpus[a]->get_netpoint(), gpus[b]->get_netpoint(), nullptr, nullptr,
                        {s4u::LinkInRoute(link)}, true);
      }
      break;
    }
    case Fabric::kSwitch: {
      // One split-duplex port per GPU into a non-blocking switch: a -> b is a's UP then b's DOWN.
      std::vector<s4u::SplitDuplexLink*> ports;
      for (int32_t g = 0; g < platform.num_gpus; ++g) {
        s4u::SplitDuplexLink* port =
            zone->create_split_duplex_link("port" + std::to_string(g), bandwidth);
        port->set_latency(platform.link_latency_s);
        port->seal();
        ports.push_back(port);
      }
      for (int32_t a = 0; a < platform.num_gpus; ++a) {
        for (int32_t b = 0; b < platform.num_gpus; ++b) {
          if (a == b) continue;
          zone->add_route(gpus[a]->get_netpoint(), gpus[b]->get_netpoint(), nullptr, nullptr,
                          {s4u::LinkInRoute(ports[a], s4u::LinkInRoute::Direction::UP),
                           s4u::LinkInRoute(ports[b], s4u::LinkInRoute::Direction::DOWN)},
                          false);
        }
      }
      break;
    }
  }
  zone->seal();
  s4u::Engine::get_instance()->seal_platform();
  std::vector<s4u::Host*> rank_hosts;
  for (int32_t gpu : platform.rank_to_gpu) rank_hosts.push_back(gpus[gpu]);
  return rank_hosts;
}

}  // namespace ppsim
