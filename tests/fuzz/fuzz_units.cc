// Quantities with units, one parser per kind (the first byte picks it), and comma lists.
#include <vector>

#include "config/units.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text = ppsim::fuzz::Text(data + 1, size - 1);
  double value = 0;
  int64_t bytes = 0;
  std::vector<double> times;
  std::vector<int64_t> sizes;
  switch (data[0] % 6) {
    case 0: ppsim::fuzz::ExpectReadable(ppsim::ParseDuration("--f", text, &value), "--f"); break;
    case 1: ppsim::fuzz::ExpectReadable(ppsim::ParseSize("--a", text, &bytes), "--a"); break;
    case 2: ppsim::fuzz::ExpectReadable(ppsim::ParseBandwidth("--b", text, &value), "--b"); break;
    case 3: ppsim::fuzz::ExpectReadable(ppsim::ParseFlopRate("--r", text, &value), "--r"); break;
    case 4: ppsim::fuzz::ExpectReadable(ppsim::ParseDurationList("--f", text, &times), "--f"); break;
    default: ppsim::fuzz::ExpectReadable(ppsim::ParseSizeList("--a", text, &sizes), "--a");
  }
  return 0;
}
