// `ppsim platforms`: the cluster presets, one in full, or the paths --set accepts.
#include <boost/program_options/options_description.hpp>
#include <string>
#include <vector>

#include "base/flag_locator.h"
#include "base/names.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"

namespace ppsim::cli {

int PlatformsCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  boost::program_options::options_description options("ppsim platforms options", 100);
  options.add_options()("keys", "list the cluster fields --set accepts");
  ParsedArgs parsed;
  Status status = ParseArgs("platforms", args, options, 1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << "usage: ppsim platforms [NAME | --keys]\n\n"
           "Lists the cluster presets with their key numbers; with NAME prints that preset as a\n"
           "cluster file to start from.\n\n"
        << options;
    return kExitOk;
  }
  if (parsed.values.count("keys")) {
    if (!parsed.positional.empty()) {
      return Fail(err, Status::InvalidInput("ppsim platforms: unexpected argument '" +
                                            parsed.positional[0] +
                                            "'; usage: ppsim platforms [NAME | --keys]"));
    }
    out << ClusterSettingPaths() << "\n";
    return kExitOk;
  }
  if (!parsed.positional.empty()) {
    const std::string& name = parsed.positional[0];
    if (const ClusterPreset* preset = FindClusterPreset(name)) {
      out << "# ppsim cluster preset " << preset->name << " (platforms/cluster.proto; sources in "
          << preset->file << ")\n"
          << preset->text;
      return kExitOk;
    }
    std::vector<std::string> names;
    for (const ClusterPreset& p : AllClusterPresets()) names.emplace_back(p.name);
    return Fail(err,
                Status::InvalidInput("ppsim platforms: " + UnknownName("preset", name, names)));
  }
  for (const ClusterPreset& preset : AllClusterPresets()) {
    PlatformChoice choice;
    choice.platform = std::string(preset.name);
    PlatformSpec platform;
    status = LoadCluster(choice, FlagLocator(), &platform);
    if (!status.ok()) return Fail(err, status);
    out << preset.name << std::string(preset.name.size() < 12 ? 12 - preset.name.size() : 1, ' ')
        << DescribePlatform(platform) << "\n";
  }
  out << "\n'ppsim platforms NAME' prints a preset as a cluster file to start from; "
         "'ppsim platforms --keys' lists what --set accepts\n";
  return kExitOk;
}

}  // namespace ppsim::cli
