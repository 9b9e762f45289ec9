// Profiles: the CSV reader, and the structured formats (the first byte picks one) through the
// configuration reader and the profile's own checks.
#include "config/config_file.h"
#include "models/profile.h"
#include "models/profile.pb.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text = ppsim::fuzz::Text(data + 1, size - 1);
  ppsim::Profile profile;
  if (data[0] % 4 == 0) {
    ppsim::fuzz::ExpectReadable(ppsim::ParseProfileCsv(text, "p.csv", &profile), "p.csv");
    return 0;
  }
  const ppsim::ConfigFormat formats[] = {ppsim::ConfigFormat::kTextProto,
                                         ppsim::ConfigFormat::kJson, ppsim::ConfigFormat::kYaml};
  ppsim::proto::Profile message;
  ppsim::ConfigLocations locations;
  ppsim::Status status =
      ppsim::ParseConfig(text, formats[data[0] % 4 - 1], "p.cfg", &message, &locations);
  ppsim::fuzz::ExpectReadable(status, "p.cfg");
  if (status.ok()) {
    ppsim::fuzz::ExpectReadable(ppsim::ProfileFromProto(message, locations, &profile), "p.cfg");
  }
  return 0;
}
