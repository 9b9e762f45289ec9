#include "platforms/calibration.h"

#include <google/protobuf/text_format.h>

#include <cmath>
#include <memory>

#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "config/units.h"
#include "platforms/cluster.h"

namespace ppsim {
namespace {

// The string field of `cluster` at a scalable path; null for another path.
std::string* BandwidthField(const std::string& path, proto::Cluster* cluster) {
  if (path == "intra_node.bandwidth") return cluster->mutable_intra_node()->mutable_bandwidth();
  if (path == "nic.bandwidth") return cluster->mutable_nic()->mutable_bandwidth();
  return nullptr;
}

// Where a field of the calibration was written: "c.textproto:4:1: set[0]", or (built in memory)
// where the request named the calibration.
std::string At(const LoadedCalibration& loaded, const std::string& field_where,
               const std::string& path) {
  if (loaded.source.empty()) return field_where + ": " + path;
  return loaded.locations.Where(path) + ": " + path;
}

Status ApplyScale(const LoadedCalibration& loaded, const std::string& field_where, int index,
                  proto::Cluster* cluster, CalibrationApplied* applied) {
  const proto::BandwidthScale& scale = loaded.calibration.scale(index);
  const std::string at = "scale[" + std::to_string(index) + "]";
  std::string* field = BandwidthField(scale.path(), cluster);
  if (field == nullptr) {
    return Status::InvalidInput(At(loaded, field_where, at + ".path") + ": " +
                                UnknownName("bandwidth", scale.path(), ScalableBandwidthPaths()));
  }
  if (!(scale.factor() > 0 && std::isfinite(scale.factor()))) {
    return Status::InvalidInput(At(loaded, field_where, at + ".factor") + ": " +
                                FormatNumber(scale.factor()) +
                                " is not a scale of a bandwidth; give a number > 0");
  }
  if (field->empty()) return Status();  // the cluster has no such link
  double bytes_per_s = 0;
  RETURN_IF_ERROR(
      ParseBandwidth(At(loaded, field_where, at) + ": " + scale.path(), *field, &bytes_per_s));
  if (std::isinf(bytes_per_s)) return Status();
  *field = FormatNumber(bytes_per_s * scale.factor());
  applied->paths.emplace_back(scale.path(), At(loaded, field_where, at));
  return Status();
}

}  // namespace

const std::vector<std::string>& ScalableBandwidthPaths() {
  static const std::vector<std::string> paths = {"intra_node.bandwidth", "nic.bandwidth"};
  return paths;
}

Status ReadCalibration(const std::string& path, const Locator& where, const std::string& field,
                       LoadedCalibration* loaded) {
  *loaded = LoadedCalibration();
  loaded->source = path;
  Status status = ReadConfigFile(path, &loaded->calibration, &loaded->locations);
  if (!status.ok()) return status.WithMessage(where.Where(field) + ": " + status.message());
  if (loaded->calibration.gpu().empty()) {
    return Status::InvalidInput(where.Where(field) + ": " + path +
                                ": gpu: required; the gpu.name of the cluster it was fitted on");
  }
  return Status();
}

Status ApplyCalibration(const LoadedCalibration& loaded, const std::string& field_where,
                        proto::Cluster* cluster, CalibrationApplied* applied) {
  *applied = CalibrationApplied();
  const proto::Calibration& c = loaded.calibration;
  if (c.gpu() != cluster->gpu().name()) {
    const std::string file = loaded.source.empty() ? "the calibration" : loaded.source;
    return Status::InvalidInput(field_where + ": " + file + " was fitted on " + Printable(c.gpu()) +
                                "; this run's GPU is " + Printable(cluster->gpu().name()) +
                                "; calibrate on this GPU");
  }
  for (int i = 0; i < c.set_size(); ++i) {
    const std::string at = At(loaded, field_where, "set[" + std::to_string(i) + "]");
    const PrefixLocator where(at + ": ", std::make_shared<FieldNames>());
    RETURN_IF_ERROR(ApplyClusterSetting(c.set(i), where, cluster));
    applied->paths.emplace_back(c.set(i).substr(0, c.set(i).find('=')), at);
  }
  for (int i = 0; i < c.scale_size(); ++i) {
    RETURN_IF_ERROR(ApplyScale(loaded, field_where, i, cluster, applied));
  }
  if (!c.memory_reserve().empty()) {
    RETURN_IF_ERROR(ParseSize(At(loaded, field_where, "memory_reserve"), c.memory_reserve(),
                              &applied->memory_reserve_bytes));
  }
  return Status();
}

std::string CalibrationText(const proto::Calibration& calibration, const std::string& header) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(calibration, &text);
  return header + text;
}

}  // namespace ppsim
