#include "platforms/xml_platform.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "base/numbers.h"
#include "config/units.h"

namespace ppsim {
namespace {

constexpr int kMaxErrors = 20;
constexpr int64_t kMaxXmlBytes = 16 << 20;
constexpr int64_t kMaxHosts = int64_t{1} << 24;

enum class Value { kText, kId, kSpeed, kBandwidth, kLatency, kCount, kEnum, kRouting };

struct AttributeRule {
  const char* name;
  Value value;
  bool required;
  std::vector<std::string> choices = {};  // kEnum
};

// The elements of SimGrid's platform DTD 4.1 that ppsim takes, with their attributes.
const std::map<std::string, std::vector<AttributeRule>>& Rules() {
  static const std::vector<std::string> kLinkSharing = {"SHARED", "SPLITDUPLEX", "FULLDUPLEX",
                                                        "FATPIPE", "WIFI"};
  static const std::vector<std::string> kSymmetrical = {"YES", "NO", "yes", "no"};
  static const std::map<std::string, std::vector<AttributeRule>> kRules = [] {
    std::map<std::string, std::vector<AttributeRule>> r;
    r["platform"] = {{"version", Value::kEnum, false, {"4", "4.1"}}};
    r["zone"] = {{"id", Value::kId, true}, {"routing", Value::kRouting, true}};
    r["AS"] = r["zone"];
    r["host"] = {{"id", Value::kId, true},
                 {"speed", Value::kSpeed, true},
                 {"core", Value::kCount, false},
                 {"coordinates", Value::kText, false},
                 {"pstate", Value::kText, false}};
    r["router"] = {{"id", Value::kId, true}, {"coordinates", Value::kText, false}};
    r["link"] = {{"id", Value::kId, true},
                 {"bandwidth", Value::kBandwidth, true},
                 {"latency", Value::kLatency, false},
                 {"sharing_policy", Value::kEnum, false, kLinkSharing}};
    r["backbone"] = {{"id", Value::kId, true},
                     {"bandwidth", Value::kBandwidth, true},
                     {"latency", Value::kLatency, true}};
    r["route"] = {{"src", Value::kText, true},
                  {"dst", Value::kText, true},
                  {"symmetrical", Value::kEnum, false, kSymmetrical}};
    r["link_ctn"] = {{"id", Value::kText, true},
                     {"direction", Value::kEnum, false, {"UP", "DOWN", "NONE"}}};
    r["zoneRoute"] = {{"src", Value::kText, true},      {"dst", Value::kText, true},
                      {"gw_src", Value::kText, true},   {"gw_dst", Value::kText, true},
                      {"symmetrical", Value::kEnum, false, kSymmetrical}};
    r["ASroute"] = r["zoneRoute"];
    r["bypassRoute"] = {{"src", Value::kText, true}, {"dst", Value::kText, true}};
    r["bypassZoneRoute"] = {{"src", Value::kText, true},
                            {"dst", Value::kText, true},
                            {"gw_src", Value::kText, true},
                            {"gw_dst", Value::kText, true}};
    r["bypassASroute"] = r["bypassZoneRoute"];
    r["cluster"] = {{"id", Value::kId, true},
                    {"prefix", Value::kText, true},
                    {"suffix", Value::kText, true},
                    {"radical", Value::kText, true},
                    {"speed", Value::kSpeed, true},
                    {"bw", Value::kBandwidth, true},
                    {"lat", Value::kLatency, true},
                    {"core", Value::kCount, false},
                    {"sharing_policy", Value::kEnum, false,
                     {"SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"}},
                    {"topology", Value::kEnum, false, {"FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"}},
                    {"topo_parameters", Value::kText, false},
                    {"bb_bw", Value::kBandwidth, false},
                    {"bb_lat", Value::kLatency, false},
                    {"bb_sharing_policy", Value::kEnum, false, {"SHARED", "FATPIPE"}},
                    {"router_id", Value::kText, false},
                    {"limiter_link", Value::kBandwidth, false},
                    {"loopback_bw", Value::kBandwidth, false},
                    {"loopback_lat", Value::kLatency, false}};
    r["cabinet"] = {{"id", Value::kId, true},     {"prefix", Value::kText, true},
                    {"suffix", Value::kText, true}, {"radical", Value::kText, true},
                    {"speed", Value::kSpeed, true}, {"bw", Value::kBandwidth, true},
                    {"lat", Value::kLatency, true}};
    r["peer"] = {{"id", Value::kId, true},           {"speed", Value::kSpeed, true},
                 {"bw_in", Value::kBandwidth, true},  {"bw_out", Value::kBandwidth, true},
                 {"lat", Value::kLatency, false},     {"coordinates", Value::kText, false}};
    r["host_link"] = {{"id", Value::kText, true}, {"up", Value::kText, true},
                      {"down", Value::kText, true}};
    r["prop"] = {{"id", Value::kText, true}, {"value", Value::kText, true}};
    return r;
  }();
  return kRules;
}

// Elements of the DTD that read other files, run code or configure SimGrid itself.
bool Refused(std::string_view element) {
  for (std::string_view name : {"include", "trace", "trace_connect", "actor", "process",
                                "argument", "storage", "storage_type", "mount", "config",
                                "random", "model_prop", "disk"}) {
    if (element == name) return true;
  }
  return false;
}

struct UnitScale {
  std::string_view name;
  double scale;
};

// A number with one of `units` after it (a bare number takes the first unit's scale).
bool ParseWithUnit(std::string_view text, const std::vector<UnitScale>& units, double* value) {
  const size_t end = text.find_first_not_of("0123456789.eE+-");
  const std::string_view number = text.substr(0, end);
  const std::string_view unit = end == std::string_view::npos ? "" : text.substr(end);
  double x = 0;
  if (!ParseFinite(number, &x)) return false;
  for (const UnitScale& u : units) {
    if (u.name == unit) {
      *value = x * u.scale;
      return std::isfinite(*value);
    }
  }
  return false;
}

const std::vector<UnitScale>& SpeedUnits() {
  static const std::vector<UnitScale> kUnits = [] {
    std::vector<UnitScale> units = {{"", 1}, {"f", 1}, {"flops", 1}};
    const std::pair<const char*, const char*> prefixes[] = {
        {"k", "kilo"}, {"M", "mega"}, {"G", "giga"}, {"T", "tera"},
        {"P", "peta"}, {"E", "exa"},  {"Z", "zetta"}, {"Y", "yotta"}};
    static std::vector<std::string> names;
    names.reserve(32);
    double scale = 1;
    for (const auto& [letter, word] : prefixes) {
      scale *= 1000;
      names.push_back(std::string(letter) + "f");
      units.push_back({names.back(), scale});
      names.push_back(std::string(word) + "flops");
      units.push_back({names.back(), scale});
    }
    return units;
  }();
  return kUnits;
}

const std::vector<UnitScale>& BandwidthUnits() {
  static const std::vector<UnitScale> kUnits = [] {
    std::vector<UnitScale> units = {{"", 1}, {"Bps", 1}, {"bps", 0.125}};
    static std::vector<std::string> names;
    names.reserve(64);
    const char* decimal[] = {"k", "M", "G", "T", "P", "E"};
    const char* binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    for (int i = 0; i < 6; ++i) {
      const double power10 = std::pow(1000.0, i + 1);
      const double power2 = std::pow(1024.0, i + 1);
      for (const auto& [prefix, scale] :
           {std::pair{std::string(decimal[i]), power10}, {std::string(binary[i]), power2}}) {
        names.push_back(prefix + "Bps");
        units.push_back({names.back(), scale});
        names.push_back(prefix + "bps");
        units.push_back({names.back(), scale / 8});
      }
    }
    names.push_back("KBps");  // the DTD's list spells kilo with a small k; SimGrid takes both
    units.push_back({names.back(), 1000});
    return units;
  }();
  return kUnits;
}

const std::vector<UnitScale>& LatencyUnits() {
  static const std::vector<UnitScale> kUnits = {
      {"", 1},     {"s", 1},      {"w", 604800}, {"d", 86400}, {"h", 3600},
      {"m", 60},   {"ms", 1e-3},  {"us", 1e-6},  {"ns", 1e-9}, {"ps", 1e-12}};
  return kUnits;
}

// "0-15,20": the numbers of a cluster's hosts, or false (malformed or too many).
bool ParseRadical(std::string_view text, std::vector<int64_t>* numbers) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view part = text.substr(start, comma == std::string_view::npos
                                                         ? std::string_view::npos
                                                         : comma - start);
    const size_t dash = part.find('-', 1);
    int64_t first = 0, last = 0;
    if (!ParseWhole(part.substr(0, dash), &first) || first < 0) return false;
    last = first;
    if (dash != std::string_view::npos && (!ParseWhole(part.substr(dash + 1), &last) || last < first)) {
      return false;
    }
    if (static_cast<int64_t>(numbers->size()) + (last - first + 1) > kMaxHosts) return false;
    for (int64_t n = first; n <= last; ++n) numbers->push_back(n);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return true;
}

std::string Attribute(xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr) return "";
  std::string text(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return text;
}

bool HasAttribute(xmlNode* node, const char* name) {
  return xmlHasProp(node, reinterpret_cast<const xmlChar*>(name)) != nullptr;
}

class Checker {
 public:
  Checker(std::string path, XmlPlatform* platform) : path_(std::move(path)), platform_(platform) {}

  void Check(xmlNode* root) {
    if (root == nullptr || std::string_view(reinterpret_cast<const char*>(root->name)) != "platform") {
      Complain(root, "the root element must be <platform version=\"4.1\">");
      return;
    }
    if (!HasAttribute(root, "version")) {
      Complain(root, "version: required; SimGrid 3.32 reads platform version 4.1 (or 4)");
    }
    CheckElement(root);
    Walk(root);
    CheckReferences();
  }

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  // "lab.xml:7: <link id="wire">"
  std::string Where(xmlNode* node) const {
    std::string where = path_;
    if (node != nullptr) where += ":" + std::to_string(xmlGetLineNo(node));
    if (node == nullptr) return where;
    where += ": <" + Printable(reinterpret_cast<const char*>(node->name));
    const std::string id = Attribute(node, "id");
    if (!id.empty()) where += " id=\"" + Printable(id) + "\"";
    return where + ">";
  }

  void Complain(xmlNode* node, const std::string& what) {
    if (static_cast<int>(errors_.size()) < kMaxErrors) errors_.push_back(Where(node) + ": " + what);
  }

  void Walk(xmlNode* node) {
    for (xmlNode* child = node->children; child != nullptr; child = child->next) {
      if (child->type != XML_ELEMENT_NODE) continue;
      CheckElement(child);
      Walk(child);
    }
  }

  void CheckElement(xmlNode* node) {
    const std::string name(reinterpret_cast<const char*>(node->name));
    if (Refused(name)) {
      Complain(node, "not taken: ppsim runs the platform's hosts, links and routes, and this "
                     "element reads other files, runs code or configures SimGrid");
      return;
    }
    const auto rules = Rules().find(name);
    if (rules == Rules().end()) {
      std::vector<std::string> names;
      for (const auto& [element, attributes] : Rules()) names.push_back(element);
      Complain(node, UnknownName("element", name, names));
      return;
    }
    if (name == "platform" && node != xmlDocGetRootElement(node->doc)) {
      Complain(node, "<platform> is the root element only");
    }
    for (xmlAttr* a = node->properties; a != nullptr; a = a->next) {
      const std::string attribute(reinterpret_cast<const char*>(a->name));
      bool known = false;
      for (const AttributeRule& rule : rules->second) known = known || attribute == rule.name;
      if (!known) {
        std::vector<std::string> names;
        for (const AttributeRule& rule : rules->second) names.push_back(rule.name);
        Complain(node, UnknownName("attribute", attribute, names));
      }
    }
    for (const AttributeRule& rule : rules->second) {
      if (!HasAttribute(node, rule.name)) {
        if (rule.required) Complain(node, std::string(rule.name) + ": required");
        continue;
      }
      CheckValue(node, rule, Attribute(node, rule.name));
    }
    Declare(node, name);
  }

  void CheckValue(xmlNode* node, const AttributeRule& rule, const std::string& text) {
    const std::string what = std::string(rule.name) + ": " + Quoted(text);
    double value = 0;
    switch (rule.value) {
      case Value::kText:
        return;
      case Value::kId:
        if (text.empty()) Complain(node, std::string(rule.name) + ": empty; give a name");
        return;
      case Value::kEnum:
        if (std::find(rule.choices.begin(), rule.choices.end(), text) == rule.choices.end()) {
          Complain(node, std::string(rule.name) + ": " + UnknownName("value", text, rule.choices));
        }
        return;
      case Value::kRouting: {
        const std::vector<std::string> kinds = {"Full",    "Floyd",         "Dijkstra",
                                                "DijkstraCache", "None",  "Vivaldi",
                                                "Cluster", "ClusterTorus",  "ClusterFatTree",
                                                "ClusterDragonfly", "Wifi"};
        bool known = false;
        for (const std::string& kind : kinds) known = known || EqualsIgnoringCase(kind, text);
        if (!known) Complain(node, "routing: " + UnknownName("routing", text, kinds));
        return;
      }
      case Value::kCount: {
        int64_t count = 0;
        if (!ParseWhole(text, &count) || count < 1 || count > 1'000'000) {
          Complain(node, what + " is not a count; give a whole number from 1 to 1000000");
        }
        return;
      }
      case Value::kSpeed: {
        // A host may list one speed per power state: "1Gf,500Mf".
        size_t start = 0;
        while (true) {
          const size_t comma = text.find(',', start);
          const std::string one = text.substr(start, comma == std::string::npos ? comma : comma - start);
          if (!ParseWithUnit(one, SpeedUnits(), &value) ||
              !(value >= kMinFlopRate && value <= kMaxFlopRate)) {
            Complain(node, what + " is not a speed from 1Mf to 1e21f (units f, kf, Mf, Gf, Tf, Pf, "
                                  "Ef, or flops with kilo..yotta)");
            return;
          }
          if (comma == std::string::npos) return;
          start = comma + 1;
        }
      }
      case Value::kBandwidth:
        if (!ParseWithUnit(text, BandwidthUnits(), &value) ||
            !(value >= kMinBandwidthBytesPerS && value <= kMaxBandwidthBytesPerS)) {
          Complain(node, what + " is not a bandwidth from 1kBps to 1EBps (units Bps, kBps, MBps, "
                                "GBps, TBps, KiBps..EiBps, or bps forms)");
        }
        return;
      case Value::kLatency:
        if (!ParseWithUnit(text, LatencyUnits(), &value) ||
            !(value == 0 || (value >= kMinDurationS && value <= kMaxDurationS))) {
          Complain(node, what + " is not a latency of 0 or from 1ps to 1e9s (units s, ms, us, ns, "
                                "ps, m, h, d, w)");
        }
        return;
    }
  }

  // Records what the element names, and checks ids are not given twice.
  void Declare(xmlNode* node, const std::string& element) {
    const std::string id = Attribute(node, "id");
    auto unique = [&](std::map<std::string, int>* names, const char* kind) {
      const auto [it, added] = names->emplace(id, xmlGetLineNo(node));
      if (!added) {
        Complain(node, std::string("id: ") + kind + " " + Quoted(id) + " is already declared at line " +
                           std::to_string(it->second) + "; ids are unique");
      }
    };
    if (element == "host" || element == "peer") {
      unique(&points_, "host, router or zone");
      platform_->hosts.push_back(id);
    } else if (element == "router") {
      unique(&points_, "host, router or zone");
    } else if (element == "zone" || element == "AS") {
      unique(&points_, "host, router or zone");
      zones_.insert(id);
    } else if (element == "link" || element == "backbone") {
      unique(&links_, "link");
    } else if (element == "cluster" || element == "cabinet") {
      generates_ = true;
      unique(&points_, "host, router or zone");
      zones_.insert(id);
      std::vector<int64_t> numbers;
      if (!ParseRadical(Attribute(node, "radical"), &numbers)) {
        Complain(node, "radical: " + Quoted(Attribute(node, "radical")) +
                           " is not a list of numbers and ranges, e.g. 0-15,20, of at most 2^24 "
                           "hosts");
      }
      const std::string prefix = Attribute(node, "prefix");
      const std::string suffix = Attribute(node, "suffix");
      for (int64_t n : numbers) platform_->hosts.push_back(prefix + std::to_string(n) + suffix);
    } else if (element == "route" || element == "bypassRoute") {
      routes_.push_back({node, false});
    } else if (element == "zoneRoute" || element == "ASroute" || element == "bypassZoneRoute" ||
               element == "bypassASroute") {
      routes_.push_back({node, true});
    } else if (element == "link_ctn") {
      link_uses_.push_back(node);
    }
  }

  // Routes end at declared hosts, routers or zones, and cross declared links. A <cluster> names
  // its own hosts and links, so references are not checked in a file that has one.
  void CheckReferences() {
    if (generates_) return;
    for (const auto& [node, between_zones] : routes_) {
      for (const char* end : {"src", "dst"}) {
        const std::string name = Attribute(node, end);
        const bool known = between_zones ? zones_.count(name) > 0 : points_.count(name) > 0;
        if (!known) {
          Complain(node, std::string(end) + ": " + Quoted(name) + " is not a declared " +
                             (between_zones ? "zone" : "host or router"));
        }
      }
      if (!between_zones) continue;
      for (const char* gateway : {"gw_src", "gw_dst"}) {
        const std::string name = Attribute(node, gateway);
        if (points_.count(name) == 0) {
          Complain(node, std::string(gateway) + ": " + Quoted(name) +
                             " is not a declared host or router");
        }
      }
    }
    for (xmlNode* use : link_uses_) {
      const std::string id = Attribute(use, "id");
      if (links_.count(id) == 0) {
        Complain(use, "id: " + Quoted(id) + " is not a declared link");
      }
    }
  }

  std::string path_;
  XmlPlatform* platform_;
  std::vector<std::string> errors_;
  std::map<std::string, int> points_;  // hosts, routers, zones: id -> line
  std::map<std::string, int> links_;
  std::set<std::string> zones_;
  std::vector<std::pair<xmlNode*, bool>> routes_;
  std::vector<xmlNode*> link_uses_;
  bool generates_ = false;
};

struct DocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

}  // namespace

Status ReadSimGridXml(const std::string& path, XmlPlatform* platform) {
  *platform = XmlPlatform();
  std::string text;
  RETURN_IF_ERROR(ReadFile(path, &text, kMaxXmlBytes, "XML platform", /*raw=*/true));
  return CheckSimGridXml(text, path, platform);
}

Status CheckSimGridXml(std::string_view text, const std::string& path, XmlPlatform* platform) {
  *platform = XmlPlatform();
  // No network, no DTD loading, no entity substitution: a platform file is plain elements.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  xmlResetLastError();
  std::unique_ptr<xmlDoc, DocFree> doc(
      xmlReadMemory(text.data(), static_cast<int>(text.size()), path.c_str(), nullptr, options));
  if (doc == nullptr) {
    const xmlError* error = xmlGetLastError();
    std::string message = error != nullptr && error->message != nullptr ? error->message
                                                                        : "not a well-formed XML file";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    const int line = error != nullptr ? error->line : 0;
    return Status::InvalidInput(path + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                                Printable(message) + "; expected a SimGrid platform (version 4.1)");
  }
  if (xmlDocGetRootElement(doc.get()) != nullptr && doc->intSubset != nullptr &&
      doc->intSubset->children != nullptr) {
    return Status::InvalidInput(path + ": the DOCTYPE declares entities or elements; a platform "
                                       "file names SimGrid's DTD and nothing more");
  }
  Checker checker(path, platform);
  checker.Check(xmlDocGetRootElement(doc.get()));
  if (checker.errors().empty()) return Status();
  std::string message;
  for (const std::string& e : checker.errors()) message += (message.empty() ? "" : "\n") + e;
  return Status::InvalidInput(message);
}

}  // namespace ppsim
