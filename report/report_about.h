// What a report says it shows: where the results came from (the experiment, the ppsim that ran it
// and its command) and what was simulated (the model, the cluster, the parallelism).
//
// A sweep writes, beside `-o results.csv`, the file `results.about.json` (AboutPath):
//   {"ppsim_version": "0.1.0", "command": "ppsim sweep e.yaml -o results.csv",
//    "experiment": "microbatch-sweep", "experiment_file": "e.yaml"}
// and "baseline": "1F1B" when the experiment names one.
// Its CSV and JSON lines files are unchanged. `ppsim report results.csv` reads that file and the
// JSON lines file (results.jsonl) when they are there: what was simulated comes from the runs'
// JSON (model, platform, gpus, pp, tp, dp, cp, ep of the ok points). For a run's CSV it comes from
// its columns (platform, pp, tp, dp, and model).
#ifndef PPSIM_REPORT_REPORT_ABOUT_H_
#define PPSIM_REPORT_REPORT_ABOUT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ppsim {

struct ReportAbout {
  // Where the results came from; "" when not recorded.
  std::string ppsim_version;
  std::string command;
  std::string experiment;
  std::string experiment_file;
  // The point the experiment names as its baseline (Experiment.baseline): the report compares
  // every point with it unless --baseline names another. "" when none.
  std::string baseline;
  // What was simulated, in order: ("model", "llama3-8b"), ("cluster", "h100-node, 8 GPUs"),
  // ("parallelism", "pp 4 · tp 1 · dp 1 · cp 1"). A field that differs between points lists its
  // values ("pp 4, 8"). Empty: not recorded.
  std::vector<std::pair<std::string, std::string>> simulated;
  std::string report_version;  // the ppsim that writes the report; "" to leave it out
};

// "r.csv" -> "r.about.json"; anything else + ".about.json".
std::string AboutPath(const std::string& csv_path);

// The about file's text: one JSON object, pretty-printed, ending in a line break.
std::string AboutJson(const ReportAbout& about);

// Reads an about file into the provenance fields of *about. Errors: InvalidInput "SOURCE: not a
// JSON object; an about file is {"ppsim_version": ..., "command": ..., "experiment": ...,
// "experiment_file": ...}" (also for a field that is not a string).
Status ReadAboutJson(std::string_view text, const std::string& source, ReportAbout* about);

// Reads the about file at `path` (at most 1 MiB) with ReadAboutJson; its errors, and base/files.h
// ReadFile's.
Status ReadAboutFile(const std::string& path, ReportAbout* about);

// Sets about->simulated from a sweep's JSON lines (batch/results.h ReadResultsJsonLines; the ok
// points' "result"). Lines that do not read are left out: the CSV is what the report checks.
void SimulatedFromJsonLines(std::string_view text, ReportAbout* about);

// Sets about->simulated from a run's CSV (ppsim run --format csv): its platform, pp, tp, dp and
// model columns, those it has.
void SimulatedFromRunCsv(std::string_view text, ReportAbout* about);

}  // namespace ppsim

#endif  // PPSIM_REPORT_REPORT_ABOUT_H_
