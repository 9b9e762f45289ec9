// `ppsim platforms`: the cluster presets, one in full, or the paths --set accepts.
#include <string>
#include <vector>

#include "experiments/cli_flags.h"
#include "platforms/cluster.h"

namespace ppsim::cli {

int PlatformsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    for (const ClusterPreset& preset : AllClusterPresets()) {
      PlatformChoice choice;
      choice.platform = std::string(preset.name);
      PlatformSpec platform;
      Status status = LoadCluster(choice, &platform);
      if (!status.ok()) return Fail(err, status);
      out << preset.name << std::string(preset.name.size() < 12 ? 12 - preset.name.size() : 1, ' ')
          << DescribePlatform(platform) << "\n";
    }
    out << "\n'ppsim platforms NAME' prints a preset as a cluster file to start from; "
           "'ppsim platforms --keys' lists what --set accepts\n";
    return kExitOk;
  }
  if (args.size() == 1 && args[0] == "--keys") {
    out << ClusterSettingPaths() << "\n";
    return kExitOk;
  }
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    out << "usage: ppsim platforms [NAME | --keys]\n";
    return kExitOk;
  }
  if (args.size() == 1) {
    if (const ClusterPreset* preset = FindClusterPreset(args[0])) {
      out << "# ppsim cluster preset " << preset->name
          << " (platforms/cluster.proto; sources in platforms/cluster.cc)\n"
          << preset->text;
      return kExitOk;
    }
    return Usage(err, "ppsim platforms: unknown preset '" + args[0] + "'; valid: " +
                          ClusterPresetNames());
  }
  return Usage(err, "ppsim platforms: unexpected argument '" + args[1] +
                        "'; usage: ppsim platforms [NAME | --keys]");
}

}  // namespace ppsim::cli
