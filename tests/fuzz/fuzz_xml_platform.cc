// SimGrid XML platforms, checked as --platform FILE.xml checks them before SimGrid reads them.
#include "platforms/xml_platform.h"
#include "tests/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ppsim::XmlPlatform platform;
  ppsim::fuzz::ExpectReadable(
      ppsim::CheckSimGridXml(ppsim::fuzz::Text(data, size), "p.xml", &platform), "p.xml");
  return 0;
}
