// `ppsim search`: the best configuration of a model on a cluster (batch/search.h).
#include "batch/search.h"

#include <unistd.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "base/files.h"
#include "base/flag_locator.h"
#include "base/names.h"
#include "base/shell_words.h"
#include "batch/search_output.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "config/units.h"
#include "experiments/framework_emit.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kSynopsis =
    "usage: ppsim search --model NAME|FILE --platform NAME|FILE (--nodes N | --gpus G) "
    "--global-batch N [--seq-len S] [--memory-reserve BYTES] [--calibration FILE] [--tp LIST] "
    "[--cp LIST] [--pp LIST] "
    "[--microbatch-size LIST] [--schedules LIST] [--stages-per-rank LIST] [--recompute LIST] "
    "[--zero LIST] [--dp-shard LIST] [--ep LIST] [--offload LIST] [--microbatch-group-size LIST] "
    "[--layouts 'A;B'] [--headroom PCT|SIZE] "
    "[--baseline ARGS] [--top K] [--format table|json|csv] [-j N] [--shard I/N] "
    "[--report FILE.html]\n";

// The RunConfig fields every candidate shares, as `ppsim run` reads them.
const std::vector<std::string> kBaseFields = {"model",   "platform",       "nodes", "global_batch",
                                              "seq_len", "memory_reserve", "set",   "calibration"};

po::options_description SearchOptionsDescription() {
  po::options_description d = RunConfigOptions(
      {proto::Flag::SCHEDULE, proto::Flag::COSTS, proto::Flag::MODEL, proto::Flag::CLUSTER},
      kBaseFields);
  po::options_description space("The space (comma lists restrict an axis; default: all of it)",
                                100);
  space.add_options()("gpus", po::value<std::string>()->value_name("G"),
                      "GPUs instead of --nodes (a multiple of the GPUs per node)")(
      "tp", po::value<std::string>()->value_name("LIST"),
      "tensor-parallel degrees (default: the divisors of the GPUs per node)")(
      "cp", po::value<std::string>()->value_name("LIST"),
      "context-parallel degrees, across nodes too (default 1; from 32K tokens also 2, 4, ... "
      "keeping 8K tokens per GPU)")(
      "pp", po::value<std::string>()->value_name("LIST"),
      "pipeline ranks (default: tp x pp divides the GPUs, pp <= layers)")(
      "microbatch-size", po::value<std::string>()->value_name("LIST"),
      "sequences per microbatch (default 1,2,4,8,16)")(
      "schedules", po::value<std::string>()->value_name("LIST"),
      "schedule names (default: every schedule, see 'ppsim schedules')")(
      "stages-per-rank", po::value<std::string>()->value_name("LIST"),
      "virtual stages per rank (default: the schedule's; an interleaved one's also every V >= 2 "
      "dividing a rank's layers, or its layers with the embedding and loss counted)")(
      "recompute", po::value<std::string>()->value_name("LIST"),
      "none, selective, full, or recompute modules joined by + (default: none, selective, full, "
      "layernorm+mlp; with MLA layernorm+mla_up_proj, with experts layernorm+moe_act)")(
      "zero", po::value<std::string>()->value_name("LIST"),
      "ZeRO stages 0-3 (default 1,2,3; 2 with Megatron's default gradient bucket)")(
      "dp-shard", po::value<std::string>()->value_name("LIST"),
      "with ZeRO 3: shard degrees dividing dp, the rest replicated (default: dp)")(
      "ep", po::value<std::string>()->value_name("LIST"),
      "a MoE model's expert-parallel degrees (default: dividing the experts and dp x tp x cp, at "
      "most 16 experts per GPU)")(
      "offload", po::value<std::string>()->value_name("LIST"),
      "none, or activation-offload modules joined by + (attn_norm+core_attn; default none)")(
      "microbatch-group-size", po::value<std::string>()->value_name("LIST"),
      "Megatron-Interleaved's microbatch groups, those in [pp, m] (default: pp)")(
      "layouts", po::value<std::string>()->value_name("LIST"),
      "layer splits separated by ';': even, balanced (embedding and loss counted as layers), or "
      "Megatron layout strings (Et*3|t*4|...|t*3L; V = stages / pp) (default: even;balanced)")(
      "headroom", po::value<std::string>()->value_name("PCT|SIZE"),
      "what a candidate must leave free of its GPU's memory to rank: a percentage of it (default "
      "5%) or a size (4GiB)");
  po::options_description own("Output and execution", 100);
  own.add_options()("baseline", po::value<std::string>()->value_name("ARGS"),
                    "a `ppsim run` configuration to compare with, as one string of its options "
                    "(\"--schedule 1F1B --pp 4 --tp 8\", \"--megatron @args.txt\"); the search's "
                    "model, batch and cluster fill what it does not give; adds its line and each "
                    "candidate's speed-up (tokens/s over the baseline's)")(
      "top", po::value<std::string>()->value_name("K"), "candidates ranked (default 10)")(
      "format", po::value<std::string>()->value_name("NAME"), "table (default), json or csv")(
      "jobs,j", po::value<std::string>()->value_name("N"),
      "evaluations at a time, each in its own process (default: the cores; the critical-path and "
      "SimGrid tiers run rounds of 4)")("shard", po::value<std::string>()->value_name("I/N"),
                                        "evaluate every N-th group of candidates from the I-th "
                                        "(the best K over shards is the best K)")(
      "emit", po::value<std::string>()->value_name("FRAMEWORK"),
      "megatron or torchtitan: each candidate's launch (Megatron-LM arguments or a torchtitan job "
      "file) and the ppsim command importing it back; the table shows the best's")(
      "report", po::value<std::string>()->value_name("FILE"),
      "write an HTML page: the ranking and throughput against peak memory");
  d.add(space);
  d.add(own);
  return d;
}

// "1,2,4" into whole numbers >= 1, named by `flag`.
Status CountList(const ParsedArgs& parsed, const char* name, std::vector<int32_t>* values,
                 int32_t least = 1) {
  if (!parsed.values.count(name)) return Status();
  const std::string flag = std::string("--") + name;
  for (const std::string& item : SplitCommas(OptionText(parsed, name))) {
    int32_t value = 0;
    RETURN_IF_ERROR(ParseCount(flag, item, least, &value));
    values->push_back(value);
  }
  return Status();
}

std::vector<std::string> NameList(const ParsedArgs& parsed, const char* name) {
  return parsed.values.count(name) ? SplitCommas(OptionText(parsed, name))
                                   : std::vector<std::string>();
}

// --headroom: "5%" (a percentage of the GPU's memory, 0 to below 100) or a size ("4GiB").
Status ParseHeadroom(const std::string& text, SearchSpace* space) {
  if (!text.empty() && text.back() == '%') {
    double percent = 0;
    const std::string number = text.substr(0, text.size() - 1);
    char* end = nullptr;
    percent = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(percent >= 0) ||
        !(percent < 100)) {
      return Status::InvalidInput("--headroom: '" + text +
                                  "' is not a percentage from 0% to below 100% of the GPU's "
                                  "memory; give e.g. 5% or a size such as 4GiB");
    }
    space->headroom_fraction = percent / 100;
    space->headroom_bytes = -1;
    return Status();
  }
  int64_t bytes = 0;
  Status status = ParseSize("--headroom", text, &bytes);
  if (!status.ok()) {
    return Status::InvalidInput(status.message() +
                                " (or a percentage of the GPU's memory, e.g. 5%)");
  }
  space->headroom_bytes = bytes;
  return Status();
}

Status ReadSearch(const ParsedArgs& parsed, SearchSpace* space, SearchOptions* options,
                  std::string* format) {
  // Only the base fields: --tp, --pp, ... are the search's lists, not the run's values.
  po::variables_map base;
  for (const std::string& field : kBaseFields) {
    std::string flag = FlagOf(field).substr(2);
    if (parsed.values.count(flag)) base.insert({flag, parsed.values[flag]});
  }
  RETURN_IF_ERROR(FillRunConfig(base, &space->base));
  if (parsed.values.count("gpus")) {
    RETURN_IF_ERROR(ParseCount("--gpus", OptionText(parsed, "gpus"), 1, &space->gpus));
  }
  RETURN_IF_ERROR(CountList(parsed, "tp", &space->tp));
  RETURN_IF_ERROR(CountList(parsed, "cp", &space->cp));
  RETURN_IF_ERROR(CountList(parsed, "pp", &space->pp));
  RETURN_IF_ERROR(CountList(parsed, "microbatch-size", &space->microbatch_size));
  RETURN_IF_ERROR(CountList(parsed, "stages-per-rank", &space->stages_per_rank));
  RETURN_IF_ERROR(CountList(parsed, "zero", &space->zero, 0));
  RETURN_IF_ERROR(CountList(parsed, "dp-shard", &space->dp_shard));
  RETURN_IF_ERROR(CountList(parsed, "ep", &space->ep));
  RETURN_IF_ERROR(CountList(parsed, "microbatch-group-size", &space->microbatch_group_size));
  space->offload = NameList(parsed, "offload");
  if (parsed.values.count("layouts")) {
    for (std::string item : SplitOn(OptionText(parsed, "layouts"), ';')) {
      if (item.empty()) {
        return Status::InvalidInput(
            "--layouts: an empty item; give even, balanced or Megatron layout strings separated "
            "by ';'");
      }
      space->layouts.push_back(item);
    }
  }
  if (parsed.values.count("baseline")) {
    std::vector<std::string> words;
    Status status = SplitShellWords(OptionText(parsed, "baseline"), &words);
    if (!status.ok()) return status.WithMessage("--baseline: " + status.message());
    RETURN_IF_ERROR(ParseRunWords(words, "--baseline: ", &space->baseline));
    space->has_baseline = true;
  }
  if (parsed.values.count("headroom"))
    RETURN_IF_ERROR(ParseHeadroom(OptionText(parsed, "headroom"), space));
  space->schedules = NameList(parsed, "schedules");
  space->recompute = NameList(parsed, "recompute");
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  options->jobs = cores > 0 ? static_cast<int32_t>(cores) : 1;
  if (parsed.values.count("jobs")) {
    RETURN_IF_ERROR(ParseCount("-j", OptionText(parsed, "jobs"), 1, &options->jobs));
  }
  if (parsed.values.count("top")) {
    RETURN_IF_ERROR(ParseCount("--top", OptionText(parsed, "top"), 1, &options->top));
  }
  if (parsed.values.count("shard")) {
    RETURN_IF_ERROR(
        ParseShard(OptionText(parsed, "shard"), &options->shard_index, &options->shard_count));
  }
  if (parsed.values.count("emit")) {
    Framework framework = Framework::kMegatron;
    RETURN_IF_ERROR(ParseFramework("--emit", OptionText(parsed, "emit"), &framework));
    options->emit = framework;
  }
  *format = parsed.values.count("format") ? OptionText(parsed, "format") : "table";
  if (*format != "table" && *format != "json" && *format != "csv") {
    return Status::InvalidInput("--format: " +
                                UnknownName("format", *format, {"table", "json", "csv"}));
  }
  return Status();
}

}  // namespace

int SearchCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = SearchOptionsDescription();
  ParsedArgs parsed;
  Status status = ParseArgs("search", args, options, 0, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kSynopsis << "\n" << options;
    return kExitOk;
  }
  SearchSpace space;
  space.where = std::make_shared<FlagLocator>();
  space.baseline_where = std::make_shared<PrefixLocator>("--baseline: ", space.where);
  SearchOptions search;
  std::string format;
  status = ReadSearch(parsed, &space, &search, &format);
  if (!status.ok()) return Fail(err, status);
  const std::string report = OptionText(parsed, "report");
  if (!report.empty()) {
    std::vector<std::string> inputs = {space.base.model(), space.base.platform(),
                                       space.baseline.model(), space.baseline.torchtitan()};
    if (space.baseline.megatron().starts_with("@")) {
      inputs.push_back(space.baseline.megatron().substr(1));
    }
    status = CheckNotAnInput("--report", report, inputs);
    if (!status.ok()) return Fail(err, status);
  }
  SearchResult result;
  status = RunSearch(space, search, err, &result);
  if (!status.ok()) return Fail(err, status);
  if (format == "json") {
    out << SearchJson(result);
  } else if (format == "csv") {
    out << SearchCsv(result);
  } else {
    out << SearchTable(result);
  }
  if (format != "table") err << "search: wall time " << HumanDuration(result.wall_s) << "\n";
  if (result.ranking.empty()) {
    // Nothing feasible is not success: exit 1 with the diagnosis.
    err << SearchDiagnosis(result);
    if (!report.empty()) {
      std::string title = "ppsim search";
      for (const std::string& a : args) title += " " + a;
      status = WriteWholeFile("--report", report, SearchHtml(result, title));
      if (!status.ok()) return Fail(err, status);
    }
    return kExitSimulationProblem;
  }
  if (!report.empty()) {
    std::string title = "ppsim search";
    for (const std::string& a : args) title += " " + a;
    status = WriteWholeFile("--report", report, SearchHtml(result, title));
    if (!status.ok()) return Fail(err, status);
  }
  return kExitOk;
}

}  // namespace ppsim::cli
