// `ppsim merge SHARD.csv... -o RESULTS.csv`: the results of sweep shards joined.
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

namespace ppsim::cli {

namespace po = boost::program_options;

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
  for (const std::string& input : inputs) all_inputs.push_back(JsonLinesPath(input));
  for (const std::string& written : {output, JsonLinesPath(output)}) {
    status = CheckNotAnInput("-o", written, all_inputs);
    if (!status.ok()) return Fail(err, status);
  }
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
  out << "wrote " << output << (with_json ? " and " + JsonLinesPath(output) : std::string())
      << "\n";
  return kExitOk;
}

}  // namespace ppsim::cli
