// Hugging Face config.json files (interop/hf_config.h), read, checked, then costed for a small
// pipeline.
#include "base/flag_locator.h"
#include "interop/hf_config.h"
#include "models/transformer.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(ppsim::fuzz::Text(data, size));
  ppsim::LooksLikeHfConfig(text);
  ppsim::TransformerSpec spec;
  const ppsim::Status status = ppsim::ReadHfConfig(text, "config.json", &spec);
  ppsim::fuzz::ExpectReadable(status, "config.json");
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
