// Platform descriptions: the GPUs the pipeline ranks run on and the links between them.
//
// Pure description (no SimGrid): sim/ builds the SimGrid platform from a PlatformSpec, and the
// critical-path engine reads uncontended transfer times from it directly.
#ifndef PPSIM_PLATFORMS_PLATFORM_H_
#define PPSIM_PLATFORMS_PLATFORM_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/index.h"
#include "schedules/status.h"

namespace ppsim {

enum class Fabric {
  // Every pair of GPUs has its own dedicated link, used by any number of transfers in either
  // direction at full bandwidth: nothing ever contends.
  kFullMesh,
  // A non-blocking switch (NVSwitch): each GPU has one full-duplex port into it. A transfer from
  // GPU a to b crosses a's port upward and b's port downward, so transfers leaving (or entering)
  // the same GPU share that port's bandwidth.
  kSwitch,
};

// What the cost model and the memory check need from a GPU.
struct GpuSpec {
  std::string name;
  double dense_bf16_flops_per_s = 0;  // peak dense FLOP/s at bf16/fp16
  double dense_fp8_flops_per_s = 0;   // peak dense FLOP/s at fp8
  int64_t memory_bytes = 0;           // HBM capacity
};

struct PlatformSpec {
  std::string name;
  Fabric fabric = Fabric::kFullMesh;
  int32_t num_gpus = 0;
  // The GPU of every rank.
  GpuSpec gpu;
  // Compute speed of one GPU's SimGrid host in FLOP/s. Costs given as durations run as
  // duration × this many FLOPs, so the speed does not change a run's times.
  double gpu_flops_per_s = 1e15;
  // kFullMesh: latency of a pair's link. kSwitch: latency of one port (a route crosses two).
  double link_latency_s = 0;
  // Per direction. Infinity means a transfer's size does not matter.
  double link_bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  // GPU of each pipeline rank.
  std::vector<int32_t> rank_to_gpu;

  // Latency and bandwidth of the route from one rank's GPU to another's.
  double RouteLatency(RankIndex src, RankIndex dst) const;
  double RouteBandwidth(RankIndex src, RankIndex dst) const;
  // latency + bytes / bandwidth: the time of a transfer that shares no link.
  double UncontendedTransferTime(RankIndex src, RankIndex dst, int64_t bytes) const;
};

// Overrides for the `ideal` preset (--p2p-latency, --p2p-bandwidth). Other presets have their own
// links and reject these.
struct PlatformOptions {
  bool has_p2p_latency = false;
  double p2p_latency_s = 0;
  bool has_p2p_bandwidth = false;
  double p2p_bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
};

struct PlatformPreset {
  std::string_view name;
  std::string_view summary;  // One line for `ppsim platforms`.
};

// The presets, in the order `ppsim platforms` lists them.
const std::vector<PlatformPreset>& AllPlatformPresets();

// Builds the named preset for `num_ranks` pipeline ranks, rank r on GPU r. Errors name the flag
// (--platform, --pp, --p2p-latency, --p2p-bandwidth).
Status MakePlatform(std::string_view preset, const PlatformOptions& options, int32_t num_ranks,
                    PlatformSpec* spec);

}  // namespace ppsim

#endif  // PPSIM_PLATFORMS_PLATFORM_H_
