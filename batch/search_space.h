// The space `ppsim search` enumerates (batch/search.h describes it): the request's own fields
// checked, the model's and cluster's shape learned, and every candidate written as one
// proto::RunConfig. Used by batch/search.cc only.
#ifndef PPSIM_BATCH_SEARCH_SPACE_H_
#define PPSIM_BATCH_SEARCH_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "batch/search.h"
#include "experiments/run_config.pb.h"

namespace ppsim {

// What the search needs to know about the model and the cluster.
struct SpaceShape {
  int32_t layers = 0;
  int32_t mtp_layers = 0;
  int32_t experts = 0;  // routed experts; 0: a dense model
  bool mla = false;
  int32_t gpus_per_node = 0;
  int32_t gpus = 0;
  int64_t sequences = 0;  // per iteration (the global batch); 0: not known before PrepareRun
  int32_t seq_len = 0;
  std::string platform_name;
};

// One enumerated candidate: its request, or why it is outside the space before any check.
struct Enumerated {
  proto::RunConfig config;
  std::string invalid;
  // Candidates that may come out equal (the same tp, pp, microbatch size and schedule; V and the
  // split may coincide) share a group, and a shard takes whole groups.
  int64_t group = 0;
};

// Checks the request's own fields and the axes' values (as `ppsim run` would, located at the
// flags: "--recompute: ...", "--layouts: ...") and learns the model's and the cluster's shape.
// Sets base.nodes from --gpus.
Status CheckBase(SearchSpace* space, SpaceShape* shape);

// The candidates of `space`, in a fixed order.
std::vector<Enumerated> Enumerate(const SearchSpace& space, const SpaceShape& shape);

// Megatron's default gradient bucket for data-parallel degree `dp`: max(40M, 1M x dp) elements
// (DistributedDataParallelConfig.bucket_size), in fp32 bytes; what a ZeRO-2 candidate reduces
// its gradients in as the backward produces them.
int64_t DefaultGradBucketBytes(int32_t dp);

}  // namespace ppsim

#endif  // PPSIM_BATCH_SEARCH_SPACE_H_
