#include "platforms/platform.h"

namespace ppsim {
namespace {

// H100 SXM5 (NVIDIA H100 Tensor Core GPU datasheet): 989 TFLOP/s dense BF16; NVLink 4 with 18
// links of 25 GB/s per direction = 450 GB/s per direction (the "900 GB/s" bidirectional figure)
// into the node's NVSwitches.
constexpr double kH100DenseBf16FlopsPerS = 989e12;
// Same datasheet: 1,979 TFLOP/s dense FP8 (3,958 with sparsity); 80 GB of HBM3, i.e. 5 stacks of
// 16 GiB = 80 GiB (nvidia-smi shows 81,559 MiB of it).
constexpr double kH100DenseFp8FlopsPerS = 1979e12;
constexpr int64_t kH100MemoryBytes = 80LL << 30;
constexpr double kH100NvlinkBytesPerSPerDirection = 450e9;
// One NVSwitch hop GPU-to-GPU: a few microseconds end to end for small NCCL point-to-point
// messages (nccl-tests sendrecv on DGX H100 class nodes). Modelled as 1.5 us per port, 3 us per
// route. An assumption, not a measurement of ours.
constexpr double kNvswitchPortLatencyS = 1.5e-6;
constexpr int32_t kGpusPerH100Node = 8;

}  // namespace

double PlatformSpec::RouteLatency(RankIndex src, RankIndex dst) const {
  return fabric == Fabric::kSwitch ? 2 * link_latency_s : link_latency_s;
}

double PlatformSpec::RouteBandwidth(RankIndex src, RankIndex dst) const {
  return link_bandwidth_bytes_per_s;
}

double PlatformSpec::UncontendedTransferTime(RankIndex src, RankIndex dst, int64_t bytes) const {
  return RouteLatency(src, dst) + static_cast<double>(bytes) / RouteBandwidth(src, dst);
}

const std::vector<PlatformPreset>& AllPlatformPresets() {
  static const std::vector<PlatformPreset> kPresets = {
      {"ideal",
       "one H100 SXM per rank, a dedicated link per pair: latency --p2p-latency (default 0), "
       "bandwidth --p2p-bandwidth (default inf); nothing contends"},
      {"h100-node",
       "8 x H100 SXM (989 TFLOP/s bf16, 80 GiB) on an NVSwitch: 450 GB/s per direction per GPU "
       "port, 3 us GPU-to-GPU latency"},
  };
  return kPresets;
}

Status MakePlatform(std::string_view preset, const PlatformOptions& options, int32_t num_ranks,
                    PlatformSpec* spec) {
  *spec = PlatformSpec();
  spec->name = std::string(preset);
  // Every preset here has H100 SXM GPUs; `ideal` idealises only the network.
  spec->gpu = GpuSpec{"H100 SXM", kH100DenseBf16FlopsPerS, kH100DenseFp8FlopsPerS, kH100MemoryBytes};
  if (preset == "ideal") {
    spec->fabric = Fabric::kFullMesh;
    spec->num_gpus = num_ranks;
    spec->link_latency_s = options.p2p_latency_s;
    spec->link_bandwidth_bytes_per_s = options.p2p_bandwidth_bytes_per_s;
  } else if (preset == "h100-node") {
    if (options.has_p2p_latency || options.has_p2p_bandwidth) {
      return Status::InvalidInput(
          std::string(options.has_p2p_latency ? "--p2p-latency" : "--p2p-bandwidth") +
          ": applies to --platform ideal only; h100-node has its own NVLink ports");
    }
    spec->fabric = Fabric::kSwitch;
    spec->num_gpus = kGpusPerH100Node;
    spec->gpu_flops_per_s = kH100DenseBf16FlopsPerS;
    spec->link_latency_s = kNvswitchPortLatencyS;
    spec->link_bandwidth_bytes_per_s = kH100NvlinkBytesPerSPerDirection;
  } else {
    std::string names;
    for (const PlatformPreset& p : AllPlatformPresets()) {
      names += (names.empty() ? "" : ", ") + std::string(p.name);
    }
    return Status::InvalidInput("--platform: unknown platform '" + std::string(preset) +
                                "'; valid: " + names);
  }
  if (num_ranks > spec->num_gpus) {
    return Status::InvalidInput("--pp: " + std::to_string(num_ranks) + " ranks need " +
                                std::to_string(num_ranks) + " GPUs; platform " + spec->name +
                                " has " + std::to_string(spec->num_gpus));
  }
  for (int32_t rank = 0; rank < num_ranks; ++rank) spec->rank_to_gpu.push_back(rank);
  return Status();
}

}  // namespace ppsim
