#include "cli/options.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <limits>
#include <ostream>

#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "config/config_file.h"
#include "interop/megatron_args.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;
namespace pb = google::protobuf;

constexpr const char* kPositional = "positional";

struct GroupName {
  proto::Flag::Group group;
  const char* caption;
};
constexpr GroupName kGroups[] = {
    {proto::Flag::SCHEDULE, "schedule"},
    {proto::Flag::COSTS, "costs (one value for every virtual stage, or a comma list of one each)"},
    {proto::Flag::MODEL, "analytic model"},
    {proto::Flag::CLUSTER, "cluster"},
    {proto::Flag::PARALLELISM, "parallelism and placement"},
    {proto::Flag::OUTPUTS, "outputs"},
    {proto::Flag::LIMITS, "limits"},
};

// "--name" of an option given as "--name" or "--name=value"; "" for anything else.
std::string LongName(const std::string& arg) {
  if (arg.rfind("--", 0) != 0 || arg.size() == 2) return "";
  return arg.substr(2, arg.find('=') - 2);
}

// "--microbatch: unknown option; did you mean --microbatches? see 'ppsim run --help' ..."
Status UnknownOption(std::string_view command, const std::string& given,
                     const po::options_description& options) {
  // A Megatron-LM spelling: ppsim's flag for it and --megatron, from the one table.
  if (const std::string hint = MegatronFlagHint(given); !hint.empty()) {
    return Status::InvalidInput(given + ": unknown option; " + hint);
  }
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const auto& o : options.options()) {
    if (o->long_name() == kPositional) continue;
    const std::string name = "--" + o->long_name();
    // A prefix of a valid name counts as close.
    const size_t distance = name.rfind(given, 0) == 0 ? 1 : EditDistance(given, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = name;
    }
  }
  const std::string hint =
      best_distance <= std::max<size_t>(2, given.size() / 4) ? "did you mean " + best + "? " : "";
  return Status::InvalidInput(given + ": unknown option; " + hint + "see 'ppsim " +
                              std::string(command) + " --help' for the valid options");
}

// Whether a command declares short options ("-o [ --output ]" rather than "--output").
bool HasShortOptions(const po::options_description& options) {
  for (const auto& o : options.options()) {
    const std::string name = o->format_name();
    if (name.size() > 1 && name[0] == '-' && name[1] != '-') return true;
  }
  return false;
}

// The arguments with every valued long option joined to its value ("--f=-1ms").
Status JoinValues(std::string_view command, const std::vector<std::string>& args,
                  const po::options_description& options, bool short_options,
                  std::vector<std::string>* joined) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string name = LongName(a);
    if (!name.empty()) {
      const po::option_description* o = options.find_nothrow(name, false);
      if (o == nullptr || name == kPositional) return UnknownOption(command, "--" + name, options);
      if (a.find('=') == std::string::npos && o->semantic()->max_tokens() > 0) {
        if (i + 1 >= args.size()) {
          return Status::InvalidInput(a + ": missing value; see 'ppsim " + std::string(command) +
                                      " --help'");
        }
        joined->push_back(a + "=" + args[++i]);
        continue;
      }
    } else if (!short_options && a.size() > 1 && a[0] == '-' && a != "--") {
      return Status::InvalidInput(a + ": unknown option; options are long (--name); see 'ppsim " +
                                  std::string(command) + " --help' for the valid options");
    }
    joined->push_back(a);
  }
  return Status();
}

const proto::Flag& FlagOptions(const pb::FieldDescriptor* field) {
  return field->options().GetExtension(proto::flag);
}

}  // namespace

int Fail(std::ostream& err, const Status& status) {
  // Every message is built to be read, one located line per problem; this is the last guard
  // against a line a user cannot read (a value echoed whole somewhere): no line over 2000 bytes.
  constexpr size_t kLongestLine = 2000;
  const std::string& message = status.message();
  size_t start = 0;
  while (start <= message.size()) {
    const size_t end = std::min(message.find('\n', start), message.size());
    const std::string_view line = std::string_view(message).substr(start, end - start);
    if (line.size() > kLongestLine) {
      err << line.substr(0, kLongestLine) << "... (" << line.size() << " bytes)\n";
    } else {
      err << line << "\n";
    }
    start = end + 1;
  }
  return status.code() == StatusCode::kInvalidInput ? kExitInvalidInput : kExitSimulationProblem;
}

Status ParseCount(const std::string& flag, const std::string& text, int32_t minimum,
                  int32_t* value) {
  int64_t v = 0;
  if (!ParseWhole(text, &v) || v > std::numeric_limits<int32_t>::max()) {
    return Status::InvalidInput(flag + ": invalid value " + Quoted(text) +
                                "; expected a whole number >= " + std::to_string(minimum));
  }
  if (v < minimum) {
    return Status::InvalidInput(flag + ": must be at least " + std::to_string(minimum) + "; got " +
                                text);
  }
  *value = static_cast<int32_t>(v);
  return Status();
}

Status ParseShard(const std::string& text, int32_t* index, int32_t* count) {
  const size_t slash = text.find('/');
  int32_t i = -1, n = 0;
  if (slash == std::string::npos || !ParseCount("--shard", text.substr(0, slash), 0, &i).ok() ||
      !ParseCount("--shard", text.substr(slash + 1), 1, &n).ok() || i >= n) {
    return Status::InvalidInput("--shard: invalid shard " + Quoted(text) +
                                "; give I/N with 0 <= I < N, e.g. --shard 0/4");
  }
  *index = i;
  *count = n;
  return Status();
}

std::string FlagOf(std::string_view field) {
  std::string flag = "--" + std::string(field);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

Status ParseArgs(std::string_view command, const std::vector<std::string>& args,
                 const po::options_description& options, int max_positional, ParsedArgs* parsed) {
  *parsed = ParsedArgs();
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      parsed->help = true;
      return Status();
    }
  }
  const bool short_options = HasShortOptions(options);
  po::options_description all;
  all.add(options);
  all.add_options()(kPositional, po::value<std::vector<std::string>>()->composing());
  std::vector<std::string> joined;
  RETURN_IF_ERROR(JoinValues(command, args, all, short_options, &joined));
  po::positional_options_description positional;
  positional.add(kPositional, -1);
  int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  if (!short_options) style &= ~po::command_line_style::allow_short;
  try {
    po::store(
        po::command_line_parser(joined).options(all).positional(positional).style(style).run(),
        parsed->values);
  } catch (const po::unknown_option& e) {
    return UnknownOption(command, e.get_option_name(), options);
  } catch (const po::multiple_occurrences& e) {
    return Status::InvalidInput(e.get_option_name() +
                                ": given more than once; give each option "
                                "once");
  } catch (const po::invalid_command_line_syntax& e) {
    return Status::InvalidInput(e.get_option_name() + ": missing value; see 'ppsim " +
                                std::string(command) + " --help'");
  } catch (const po::error& e) {
    return Status::InvalidInput("ppsim " + std::string(command) + ": " + e.what() +
                                "; see 'ppsim " + std::string(command) + " --help'");
  }
  if (parsed->values.count(kPositional)) {
    parsed->positional = parsed->values[kPositional].as<std::vector<std::string>>();
  }
  if (max_positional >= 0 && static_cast<int>(parsed->positional.size()) > max_positional) {
    const std::string& stray = parsed->positional[static_cast<size_t>(max_positional)];
    return Status::InvalidInput(
        "ppsim " + std::string(command) + ": unexpected argument '" + stray + "'; " +
        (max_positional == 0
             ? "every value follows its option, see 'ppsim " + std::string(command) + " --help'"
             : "see 'ppsim " + std::string(command) + " --help'"));
  }
  return Status();
}

std::string OptionText(const ParsedArgs& parsed, const char* name) {
  const auto it = parsed.values.find(name);
  return it == parsed.values.end() ? std::string() : it->second.as<std::string>();
}

po::options_description RunConfigOptions(const std::vector<proto::Flag::Group>& groups,
                                         const std::vector<std::string>& only) {
  po::options_description all(100);
  const pb::Descriptor* type = proto::RunConfig::descriptor();
  for (const GroupName& g : kGroups) {
    if (std::find(groups.begin(), groups.end(), g.group) == groups.end()) continue;
    po::options_description group(g.caption, 100);
    for (int i = 0; i < type->field_count(); ++i) {
      const pb::FieldDescriptor* field = type->field(i);
      const proto::Flag& flag = FlagOptions(field);
      if (flag.group() != g.group) continue;
      if (!only.empty() && std::find(only.begin(), only.end(), field->name()) == only.end()) {
        continue;
      }
      const std::string name = FlagOf(field->name()).substr(2);
      if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
        group.add_options()(name.c_str(), flag.help().c_str());
      } else if (field->is_repeated()) {
        group.add_options()(
            name.c_str(),
            po::value<std::vector<std::string>>()->composing()->value_name(flag.value_name()),
            flag.help().c_str());
      } else {
        group.add_options()(name.c_str(), po::value<std::string>()->value_name(flag.value_name()),
                            flag.help().c_str());
      }
    }
    if (!group.options().empty()) all.add(group);
  }
  return all;
}

Status FillRunConfig(const po::variables_map& values, proto::RunConfig* config,
                     std::vector<std::string>* fields) {
  const pb::Descriptor* type = proto::RunConfig::descriptor();
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* field = type->field(i);
    const std::string flag = FlagOf(field->name());
    const auto it = values.find(flag.substr(2));
    if (it == values.end()) continue;
    std::vector<std::string> texts;
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
      texts.push_back("true");
    } else if (field->is_repeated()) {
      texts = it->second.as<std::vector<std::string>>();
    } else {
      texts.push_back(it->second.as<std::string>());
    }
    for (const std::string& text : texts) {
      RETURN_IF_ERROR(SetFieldFromText(field->name(), text, flag, config));
      if (fields == nullptr) continue;
      fields->push_back(field->is_repeated() ? field->name() + "." + text.substr(0, text.find('='))
                                             : field->name());
    }
  }
  return Status();
}

}  // namespace ppsim::cli
