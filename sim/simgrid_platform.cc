#include "sim/simgrid_platform.h"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cmath>
#include <string>

namespace ppsim {
namespace {

namespace s4u = simgrid::s4u;

// SimGrid needs a finite bandwidth. 1e30 B/s moves a terabyte in 1e-18 s, far below the
// resolution of any timing here, so "infinite" stays infinite in effect.
double SimGridBandwidth(double bytes_per_s) {
  return std::isinf(bytes_per_s) ? 1e30 : bytes_per_s;
}

Status LoadXmlPlatform(const PlatformSpec& platform, std::vector<s4u::Host*>* gpus) {
  s4u::Engine* engine = s4u::Engine::get_instance();
  engine->load_platform(platform.xml_file);
  std::string missing;
  for (const std::string& name : platform.xml_hosts) {
    s4u::Host* host = s4u::Host::by_name_or_null(name);
    if (host == nullptr) {
      missing += (missing.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    gpus->push_back(host);
  }
  if (missing.empty()) return Status();
  std::string valid;
  std::vector<s4u::Host*> all = engine->get_all_hosts();
  for (size_t i = 0; i < all.size() && i < 16; ++i) {
    valid += (i == 0 ? "" : ", ") + all[i]->get_name();
  }
  if (all.size() > 16) valid += ", ... (" + std::to_string(all.size()) + " hosts)";
  return Status::InvalidInput(platform.xml_hosts_where + ": " + missing + " not in " +
                              platform.xml_file +
                              "; its hosts: " + valid);
}

}  // namespace

Status BuildSimGridPlatform(const PlatformSpec& platform,
                            const std::vector<std::pair<int32_t, int32_t>>& routes,
                            std::vector<s4u::Host*>* gpus) {
  gpus->clear();
  if (!platform.xml_file.empty()) return LoadXmlPlatform(platform, gpus);

  // One full zone with explicit routes rather than nested star zones: with a NIC per GPU the
  // route out of a node depends on the GPU, which a zone's single gateway cannot express. The
  // network model sees the same thing either way: each route's list of links.
  s4u::NetZone* zone = s4u::create_full_zone(platform.name.empty() ? "cluster" : platform.name);
  for (int32_t g = 0; g < platform.num_gpus(); ++g) {
    gpus->push_back(zone->create_host("gpu" + std::to_string(g), platform.gpu_flops_per_s)->seal());
  }
  std::vector<s4u::Link*> links;
  links.reserve(platform.links.size());
  for (const LinkSpec& spec : platform.links) {
    links.push_back(zone->create_link(spec.name, SimGridBandwidth(spec.bandwidth_bytes_per_s))
                        ->set_latency(spec.latency_s)
                        ->set_sharing_policy(spec.fatpipe ? s4u::Link::SharingPolicy::FATPIPE
                                                          : s4u::Link::SharingPolicy::SHARED)
                        ->seal());
  }
  for (const auto& [src, dst] : routes) {
    const Route route = platform.RouteBetween(src, dst);
    std::vector<s4u::LinkInRoute> hops;
    for (int i = 0; i < route.num_links; ++i) hops.emplace_back(links[route.links[i]]);
    zone->add_route((*gpus)[src]->get_netpoint(), (*gpus)[dst]->get_netpoint(), nullptr, nullptr,
                    hops, false);
  }
  zone->seal();
  s4u::Engine::get_instance()->seal_platform();
  return Status();
}

}  // namespace ppsim
