// How a training job lays out its GPUs: the parallel degrees, in one place for the request, the
// model, the platform's placement, the compiler and the search.
//
// A pipeline of pp ranks is replicated dp times; each rank is a group of tp x cp GPUs (cp slices
// of tp tensor-parallel GPUs; context parallelism splits each sequence over the slices), so a run
// has pp x dp x tp x cp GPUs. Expert parallelism does not add GPUs: each mixture-of-experts layer's
// experts are sharded over ep of a stage's dp x tp x cp GPUs (Megatron-core's expert groups).
#ifndef PPSIM_BASE_PARALLEL_LAYOUT_H_
#define PPSIM_BASE_PARALLEL_LAYOUT_H_

#include <cstdint>

namespace ppsim {

struct ParallelLayout {
  int32_t pp = 1;  // pipeline ranks
  int32_t dp = 1;  // data-parallel replicas of the pipeline
  int32_t tp = 1;  // tensor-parallel GPUs of a slice
  int32_t cp = 1;  // context-parallel slices of a rank
  int32_t ep = 1;  // expert-parallel degree

  // GPUs of one rank: tp x cp.
  int32_t GpusPerRank() const { return tp * cp; }
  // GPUs of the run: pp x dp x tp x cp.
  int64_t Gpus() const { return int64_t{pp} * dp * tp * cp; }

  friend bool operator==(const ParallelLayout&, const ParallelLayout&) = default;
};

}  // namespace ppsim

#endif  // PPSIM_BASE_PARALLEL_LAYOUT_H_
