// Clusters: the presets, cluster files (platforms/cluster.proto), `--set` overrides, and the
// PlatformSpec they describe once a run is placed on them.
#ifndef PPSIM_PLATFORMS_CLUSTER_H_
#define PPSIM_PLATFORMS_CLUSTER_H_

#include <string>
#include <string_view>
#include <vector>

#include "platforms/cluster.pb.h"
#include "platforms/platform.h"
#include "base/locator.h"
#include "base/status.h"

namespace ppsim {

// The platform of a run, as the user chose it.
struct PlatformChoice {
  // A preset name, a cluster file (.textproto, .pbtxt, .txtpb, .json, .yaml, .yml) or a SimGrid
  // XML platform (.xml).
  std::string platform = "h100-node";
  std::vector<std::string> sets;   // set: PATH=VALUE, applied in order
  int32_t nodes = 0;               // nodes; 0: the cluster's own
  std::vector<std::string> hosts;  // hosts: the XML host of every GPU, in order
  Placement placement;             // placement
  std::string p2p_latency;         // p2p_latency (ideal only), as written; empty: not given
  std::string p2p_bandwidth;       // p2p_bandwidth (ideal only), as written; empty: not given
};

struct ClusterPreset {
  std::string_view name;
  std::string_view text;  // the cluster in protobuf text format, with the sources of its numbers
};

// The presets, in the order `ppsim platforms` lists them.
const std::vector<ClusterPreset>& AllClusterPresets();
std::string ClusterPresetNames();  // "ideal, h100-node, ..."

// The preset `name` (exact), or null.
const ClusterPreset* FindClusterPreset(std::string_view name);

// Applies one "PATH=VALUE" setting (the request's `set`) to `cluster`. PATH names a field of
// cluster.proto by its dot-separated path (nic.bandwidth); VALUE is written as in a file (strings
// unquoted, enums by name). Messages start where the setting was written (the field
// "set.PATH": "--set nic.bandwidth") and list the valid paths or values.
Status ApplyClusterSetting(std::string_view assignment, const Locator& where,
                           proto::Cluster* cluster);

// Every settable path, in schema order: "name, description, gpu.name, ...".
std::string ClusterSettingPaths();

// The cluster the choice describes (preset or file, then nodes, p2p_*, set), checked, as a
// PlatformSpec without placement. Every problem is reported at once, one per line, located in
// the cluster file (FILE:LINE:COL: path: ...), where the request set it (`where`: "--set
// nic.bandwidth: ...") or at the preset ("--platform dgx-h100: nic.bandwidth: ...").
Status LoadCluster(const PlatformChoice& choice, const Locator& where, PlatformSpec* platform);

// LoadCluster, then the run's placement (PlaceRanks).
Status BuildPlatform(const PlatformChoice& choice, const ParallelLayout& layout,
                     const Locator& where, PlatformSpec* platform);

// One line of key numbers for `ppsim platforms`: GPUs, FLOP/s, memory, links.
std::string DescribePlatform(const PlatformSpec& platform);

}  // namespace ppsim

#endif  // PPSIM_PLATFORMS_CLUSTER_H_
