// What `ppsim search` prints (batch/search.h): a table, JSON or CSV, and the HTML report.
//
// JSON (best first, written with the JSON library):
//   {"evaluated": N, "candidates": [C, ...], "pareto": [C, ...], "counts": {...},
//    "reasons": [{"reason": "...", "candidates": n}, ...]}
// where each C is {"command": "ppsim run ...", "tokens_per_s", "iteration_s",
// "peak_memory_bytes", "memory_capacity_bytes", "oom" (always false: OOM candidates are not
// ranked), "mfu", "critical_path_s", "work_bound_s", "index", "schedule", "tp", "pp", "dp",
// "microbatch_size", "microbatches", "stages_per_rank", "recompute", "layer_split" (even or
// balanced), "sequence_parallel"}; "candidates" holds the top K, "pareto" the front of throughput
// against peak memory. CSV: a header, then one row per candidate SimGrid simulated, best first,
// with its rank, whether it is on the front, and C's fields. Neither holds the wall time, so the
// same inputs give byte-identical JSON and CSV for any -j; the table ends with it.
//
// With a baseline (SearchResult::has_baseline; without one every output is as above, byte for
// byte): the table starts with "baseline: tokens/s T, iteration I, peak memory M of CAP (fits |
// OUT OF MEMORY ...): COMMAND" and a "  note: ..." line per baseline note, and its tables get a
// "speed-up" column after tokens/s ("1.27x": the candidate's tokens/s over the baseline's, two
// decimals); JSON gets "baseline": C (index -1, "oom" true when it does not fit) and
// "baseline_notes": [...] after "evaluated", and each C ends with "speedup" (a number; 1 for the
// baseline); CSV rows end with a "speedup" column (the baseline is not a row).
#ifndef PPSIM_BATCH_SEARCH_OUTPUT_H_
#define PPSIM_BATCH_SEARCH_OUTPUT_H_

#include <string>

#include "batch/search.h"

namespace ppsim {

std::string SearchTable(const SearchResult& result);
// Why no candidate ranks (result.ranking empty): the counts by cause, the most frequent reasons
// candidates were invalid, and the least memory any candidate needs against its GPU's, with its
// command. One paragraph, ending in a newline.
std::string SearchDiagnosis(const SearchResult& result);
std::string SearchJson(const SearchResult& result);
std::string SearchCsv(const SearchResult& result);

// A self-contained page: the counts, an SVG scatter of tokens/s against peak memory (every
// simulated candidate, the Pareto front drawn as a line and its points filled), the ranking and
// the front as tables. `title` names the search (its command line). With a baseline: its row (and
// notes) in a table of its own, a speed-up column, and on the scatter a dashed line across at its
// tokens/s and a diamond at its point.
std::string SearchHtml(const SearchResult& result, const std::string& title);

}  // namespace ppsim

#endif  // PPSIM_BATCH_SEARCH_OUTPUT_H_
