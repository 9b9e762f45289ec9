// `ppsim merge`: the results of sweep shards (batch/sweep.h, --shard I/N) joined into the
// files an unsharded sweep writes.
#ifndef PPSIM_BATCH_MERGE_H_
#define PPSIM_BATCH_MERGE_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace ppsim {

// Joins the results of shards (results CSV files, or JSON lines files when `output` ends in
// .jsonl) into `output`: the same header, rows in point order, every point 0..n-1 exactly once.
// InvalidInput naming the file and line of a duplicate, a gap, a foreign header or a line that is
// not a result.
Status MergeResults(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace ppsim

#endif  // PPSIM_BATCH_MERGE_H_
