// SimGrid XML platforms (--platform FILE.xml), checked before SimGrid reads them: SimGrid aborts
// the process on a file it cannot take, so everything it would refuse is refused here first,
// located, one problem per line.
//
// The file is parsed with libxml2 (no network, no external DTD, no entity expansion), then
// checked against SimGrid 3.32's platform format (DTD version 4.1): the root <platform
// version="4.1"> (or "4"); the elements and attributes the DTD allows, the required ones present,
// enumerations spelled as it spells them; numbers with SimGrid's units (speed "1Gf", bandwidth
// "10GBps", latency "5us") inside ppsim's ranges (config/units.h); ids unique among hosts,
// routers and zones, and among links; every route's ends and links declared. Elements that make
// SimGrid read other files or run code (include, trace, trace_connect, actor, process, storage,
// *_file attributes, config, random) are refused: ppsim runs the platform, nothing else.
#ifndef PPSIM_PLATFORMS_XML_PLATFORM_H_
#define PPSIM_PLATFORMS_XML_PLATFORM_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// What ppsim needs of a checked platform: the name of every host, in document order (a
// <cluster>'s hosts as prefix + number + suffix, for each number of its radical "0-15,20").
struct XmlPlatform {
  std::vector<std::string> hosts;
};

// Reads and checks the XML platform at `path`. InvalidInput "PATH:LINE: <element id="x">: what
// is wrong; what is valid", every problem (at most 20) one per line; "PATH: cannot read: ..."
// when it cannot be read. Files are read up to 16 MiB.
Status ReadSimGridXml(const std::string& path, XmlPlatform* platform);
// The same checks on `text` read from `source` (named in messages).
Status CheckSimGridXml(std::string_view text, const std::string& source, XmlPlatform* platform);

}  // namespace ppsim

#endif  // PPSIM_PLATFORMS_XML_PLATFORM_H_
