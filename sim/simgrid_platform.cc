#include "sim/simgrid_platform.h"

#include <cmath>
#include <csetjmp>
#include <csignal>
#include <map>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>

namespace ppsim {
namespace {

namespace s4u = simgrid::s4u;

// SimGrid needs a finite bandwidth. 1e30 B/s moves a terabyte in 1e-18 s, far below the
// resolution of any timing here, so "infinite" stays infinite in effect.
double SimGridBandwidth(double bytes_per_s) { return std::isinf(bytes_per_s) ? 1e30 : bytes_per_s; }

// Where a missing route's abort returns to (CheckXmlRoutes).
sigjmp_buf no_route;
void ReturnFromAbort(int) { siglongjmp(no_route, 1); }

// Every pair of hosts the run moves data between must have a route in the XML file; SimGrid aborts
// the process when a transfer has none. The check looks up each route before the simulation
// starts and names the first pair without one: an empty route (a full zone without the route),
// or an abort in the lookup (zones whose routing asserts), which returns here through SIGABRT. It
// runs in the SimGrid child, which ends after reporting it.
Status CheckXmlRoutes(const PlatformSpec& platform, const GpuHosts& gpus,
                      const std::map<std::pair<int32_t, int32_t>, Route>& routes) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const auto& [ends, route] : routes) {
    if (ends.first != ends.second && gpus.count(ends.first) > 0 && gpus.count(ends.second) > 0) {
      pairs.push_back(ends);
    }
  }
  struct sigaction on_abort = {};
  struct sigaction before = {};
  on_abort.sa_handler = ReturnFromAbort;
  sigemptyset(&on_abort.sa_mask);
  ::sigaction(SIGABRT, &on_abort, &before);
  // The pair being checked; volatile: read after siglongjmp.
  volatile size_t checked = pairs.size();
  const bool aborted = sigsetjmp(no_route, 1) != 0;
  if (!aborted) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      checked = i;
      std::vector<s4u::Link*> links;
      double latency_s = 0;
      gpus.at(pairs[i].first)->route_to(gpus.at(pairs[i].second), links, &latency_s);
      // What SimGrid's network model refuses when a transfer starts: no link and no latency.
      if (links.empty() && latency_s <= 0) break;
      checked = pairs.size();
    }
  }
  ::sigaction(SIGABRT, &before, nullptr);
  if (checked == pairs.size()) return Status();
  const auto [src, dst] = pairs[checked];
  return Status::InvalidInput(
      platform.xml_hosts_where + ": no route from '" + platform.xml_hosts[src] + "' to '" +
      platform.xml_hosts[dst] + "' in " + platform.xml_file + ", and the run sends from GPU " +
      std::to_string(src) + " to GPU " + std::to_string(dst) +
      "; order the hosts so that GPUs that communicate have a route, or add the route to the file");
}

Status LoadXmlPlatform(const PlatformSpec& platform,
                       const std::map<std::pair<int32_t, int32_t>, Route>& routes, GpuHosts* gpus) {
  s4u::Engine* engine = s4u::Engine::get_instance();
  engine->load_platform(platform.xml_file);
  std::string missing;
  for (size_t gpu = 0; gpu < platform.xml_hosts.size(); ++gpu) {
    const std::string& name = platform.xml_hosts[gpu];
    s4u::Host* host = s4u::Host::by_name_or_null(name);
    if (host == nullptr) {
      missing += (missing.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    (*gpus)[static_cast<int32_t>(gpu)] = host;
  }
  if (missing.empty()) return CheckXmlRoutes(platform, *gpus, routes);
  std::string valid;
  std::vector<s4u::Host*> all = engine->get_all_hosts();
  for (size_t i = 0; i < all.size() && i < 16; ++i) {
    valid += (i == 0 ? "" : ", ") + all[i]->get_name();
  }
  if (all.size() > 16) valid += ", ... (" + std::to_string(all.size()) + " hosts)";
  return Status::InvalidInput(platform.xml_hosts_where + ": " + missing + " not in " +
                              platform.xml_file + "; its hosts: " + valid);
}

}  // namespace

Status BuildSimGridPlatform(const PlatformSpec& platform, const std::vector<int32_t>& used_gpus,
                            const std::map<std::pair<int32_t, int32_t>, Route>& routes,
                            const std::map<int32_t, double>& sharers,
                            const std::map<int32_t, double>& a2a_shares,
                            const std::vector<PrivateLink>& private_links, int32_t timer_cores,
                            GpuHosts* gpus) {
  gpus->clear();
  if (!platform.xml_file.empty()) return LoadXmlPlatform(platform, routes, gpus);

  // One full zone with explicit routes rather than nested star zones: with a NIC per GPU the
  // route out of a node depends on the GPU, which a zone's single gateway cannot express. The
  // network model sees the same thing either way: each route's list of links.
  s4u::NetZone* zone = s4u::create_full_zone(platform.name.empty() ? "cluster" : platform.name);
  // Only the GPUs and links the run's routes use exist in SimGrid: an idle part of the cluster
  // costs nothing.
  auto host = [&](int32_t gpu) {
    auto [it, added] = gpus->emplace(gpu, nullptr);
    if (added) {
      const int32_t mirror = -2 - gpu;  // kMirrorVariants x GPU + variant (MirrorHostOf)
      const std::string name = gpu >= 0 ? "gpu" + std::to_string(gpu)
                                        : "gpu" + std::to_string(mirror / kMirrorVariants) +
                                              ".mirror" + std::to_string(mirror % kMirrorVariants);
      it->second = zone->create_host(name, platform.gpu_flops_per_s)->seal();
    }
    return it->second;
  };
  std::map<int32_t, s4u::Link*> links;
  auto link = [&](int32_t id) {
    auto [it, added] = links.emplace(id, nullptr);
    if (added) {
      const bool own = id <= kPrivateLinkBase;
      const bool shadow = !own && id < 0;  // AllToAllShadowOf
      const PrivateLink* mine = own ? &private_links.at(kPrivateLinkBase - id) : nullptr;
      const int32_t real = own ? mine->real : shadow ? -1 - id : id;
      LinkSpec spec = platform.Link(real);
      const std::map<int32_t, double>& shares = shadow ? a2a_shares : sharers;
      const auto shared = shares.find(real);
      const double share = own || shared == shares.end() ? 1 : shared->second;
      if (shadow) spec.name += ".a2a";
      if (own) {
        spec.name += ".a2a" + std::to_string(kPrivateLinkBase - id);
        spec.bandwidth_bytes_per_s = mine->bandwidth_bytes_per_s;
      }
      it->second =
          zone->create_link(spec.name, SimGridBandwidth(spec.bandwidth_bytes_per_s) / share)
              ->set_latency(spec.latency_s)
              ->set_sharing_policy(spec.fatpipe ? s4u::Link::SharingPolicy::FATPIPE
                                                : s4u::Link::SharingPolicy::SHARED)
              ->seal();
    }
    return it->second;
  };
  for (int32_t gpu : used_gpus) host(gpu);
  if (timer_cores > 0) {
    (*gpus)[kTimerHost] =
        zone->create_host("timer", kTimerSpeed)->set_core_count(timer_cores)->seal();
  }
  for (const auto& [ends, route] : routes) {
    const auto [src, dst] = ends;
    std::vector<s4u::LinkInRoute> hops;
    for (int i = 0; i < route.num_links; ++i) hops.emplace_back(link(route.links[i]));
    zone->add_route(host(src)->get_netpoint(), host(dst)->get_netpoint(), nullptr, nullptr, hops,
                    false);
  }
  zone->seal();
  s4u::Engine::get_instance()->seal_platform();
  return Status();
}

}  // namespace ppsim
