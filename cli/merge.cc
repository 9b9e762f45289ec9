// `ppsim merge SHARD.csv... -o RESULTS.csv`: the results of sweep shards joined, with their JSON
// lines when every shard has them, and the about file the report reads.
#include <unistd.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>

#include <string>
#include <vector>

#include "base/files.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "batch/journal.h"
#include "batch/merge.h"
#include "report/report_about.h"

namespace ppsim::cli {

namespace po = boost::program_options;

namespace {

// The shards' common provenance: each field the about files beside the shards agree on (a shard
// without one says nothing); a field they differ on stays empty.
Status MergedAbout(const std::vector<std::string>& shards, ReportAbout* merged) {
  std::vector<ReportAbout> abouts;
  for (const std::string& shard : shards) {
    const std::string path = AboutPath(shard);
    if (access(path.c_str(), F_OK) != 0) continue;
    RETURN_IF_ERROR(ReadAboutFile(path, &abouts.emplace_back()));
  }
  if (abouts.empty()) return Status();
  auto common = [&](std::string ReportAbout::*field) {
    for (const ReportAbout& a : abouts) {
      if (a.*field != abouts[0].*field) return std::string();
    }
    return abouts[0].*field;
  };
  merged->ppsim_version = common(&ReportAbout::ppsim_version);
  merged->experiment = common(&ReportAbout::experiment);
  merged->experiment_file = common(&ReportAbout::experiment_file);
  merged->baseline = common(&ReportAbout::baseline);
  return Status();
}

}  // namespace

int MergeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  po::options_description options("ppsim merge options", 100);
  options.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                        "the merged results CSV (or .jsonl)");
  ParsedArgs parsed;
  Status status = ParseArgs("merge", args, options, -1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << "usage: ppsim merge SHARD.csv... -o RESULTS.csv\n\n" << options;
    return kExitOk;
  }
  const std::string output = OptionText(parsed, "output");
  if (output.empty()) {
    return Fail(err, Status::InvalidInput("-o: required; give the merged results CSV"));
  }
  const std::vector<std::string>& inputs = parsed.positional;
  std::vector<std::string> all_inputs = inputs;
  for (const std::string& input : inputs) {
    all_inputs.push_back(JsonLinesPath(input));
    all_inputs.push_back(AboutPath(input));
  }
  for (const std::string& written : {output, JsonLinesPath(output), AboutPath(output)}) {
    status = CheckNotAnInput("-o", written, all_inputs);
    if (!status.ok()) return Fail(err, status);
  }
  // The report's header (report/report_about.h): this command, and what the shards' about files
  // say of the experiment and the ppsim that ran it when they all say the same. Read before
  // anything is written.
  ReportAbout about;
  status = MergedAbout(inputs, &about);
  if (!status.ok()) return Fail(err, status);
  status = MergeResults(inputs, output);
  if (!status.ok()) return Fail(err, status);
  // The JSON lines beside the shards, when they are there.
  std::vector<std::string> json_inputs;
  for (const std::string& input : inputs) {
    if (access(JsonLinesPath(input).c_str(), R_OK) == 0) json_inputs.push_back(JsonLinesPath(input));
  }
  const bool with_json = !inputs.empty() && json_inputs.size() == inputs.size();
  if (with_json) {
    status = MergeResults(json_inputs, JsonLinesPath(output));
    if (!status.ok()) return Fail(err, status);
  }
  about.command = "ppsim merge";
  for (const std::string& a : args) about.command += " " + a;
  status = WriteWholeFile("", AboutPath(output), AboutJson(about));
  if (!status.ok()) return Fail(err, status);
  out << "wrote " << output << (with_json ? ", " + JsonLinesPath(output) : std::string())
      << " and " << AboutPath(output) << "\n";
  return kExitOk;
}

}  // namespace ppsim::cli
