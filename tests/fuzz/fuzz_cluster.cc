// Cluster files in the three formats, loaded and checked as --platform loads them, then placed.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* extensions[] = {".textproto", ".json", ".yaml"};
  const std::string path =
      "/tmp/ppsim-fuzz-cluster-" + std::to_string(getpid()) + extensions[data[0] % 3];
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data + 1, 1, size - 1, file);
  std::fclose(file);
  ppsim::PlatformChoice choice;
  choice.platform = path;
  ppsim::PlatformSpec platform;
  const ppsim::Status status =
      ppsim::BuildPlatform(choice, {.pp = 4, .dp = 2}, ppsim::FlagLocator(), &platform);
  ppsim::fuzz::ExpectReadable(status, "");
  if (status.ok()) {
    for (int32_t gpu = 1; gpu < 8; ++gpu) platform.RouteBetween(0, gpu);
  }
  std::remove(path.c_str());
  return 0;
}
