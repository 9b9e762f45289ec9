// Model files (model.proto) in the three formats, checked, then costed for a small pipeline.
#include "base/flag_locator.h"
#include "config/config_file.h"
#include "experiments/locators.h"
#include "models/model.pb.h"
#include "models/transformer.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ppsim::ConfigFormat formats[] = {ppsim::ConfigFormat::kTextProto,
                                         ppsim::ConfigFormat::kJson, ppsim::ConfigFormat::kYaml};
  ppsim::proto::TransformerModel message;
  ppsim::ConfigLocations locations;
  ppsim::Status status = ppsim::ParseConfig(ppsim::fuzz::Text(data + 1, size - 1),
                                            formats[data[0] % 3], "m.cfg", &message, &locations);
  ppsim::fuzz::ExpectReadable(status, "m.cfg");
  if (!status.ok()) return 0;
  ppsim::TransformerSpec spec;
  status = ppsim::TransformerFromProto(message, locations, &spec);
  ppsim::fuzz::ExpectReadable(status, "m.cfg");
  if (!status.ok()) return 0;
  ppsim::TrainingSetup setup;
  setup.seq_len = spec.seq_len;
  const ppsim::FlagLocator flags;
  if (!ppsim::CheckTrainingSetup(spec, setup, flags).ok()) return 0;
  std::vector<int32_t> layers;
  if (!ppsim::SplitLayers(spec, 4, {}, flags, &layers).ok()) return 0;
  ppsim::BuildStageModels(spec, setup, layers);
  return 0;
}
