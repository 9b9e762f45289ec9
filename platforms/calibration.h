// Calibration files (platforms/calibration.proto): per-GPU values of the analytic model fitted to
// measurements (`ppsim calibrate`), applied to a cluster with `--calibration FILE`.
#ifndef PPSIM_PLATFORMS_CALIBRATION_H_
#define PPSIM_PLATFORMS_CALIBRATION_H_

#include <string>
#include <utility>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "config/config_file.h"
#include "platforms/calibration.pb.h"
#include "platforms/cluster.pb.h"

namespace ppsim {

// The bandwidth paths a calibration may scale: "intra_node.bandwidth", "nic.bandwidth".
const std::vector<std::string>& ScalableBandwidthPaths();

// A calibration and where it came from.
struct LoadedCalibration {
  proto::Calibration calibration;
  std::string source;         // the file, or "" for one built in memory
  ConfigLocations locations;  // where the file wrote each field (nothing when built in memory)
};

// Reads a calibration file (config/config_file.h formats). Errors start with where.Where(field)
// (the request's `calibration` field: "--calibration"), then the file's own located messages:
// "--calibration: c.textproto: cannot read: No such file or directory".
Status ReadCalibration(const std::string& path, const Locator& where, const std::string& field,
                       LoadedCalibration* loaded);

// What a calibration changed of a cluster.
struct CalibrationApplied {
  // The cluster fields set or scaled, each with where the calibration wrote it
  // ("c.textproto:2:6: set[0]"), for messages about the value.
  std::vector<std::pair<std::string, std::string>> paths;
  int64_t memory_reserve_bytes = -1;  // -1: the calibration has none
};

// Applies `loaded` to `cluster`: refuses another GPU ("FIELD_WHERE: FILE was fitted on H100 SXM5
// 80GB; this run's GPU is A100 SXM4 80GB; calibrate on this GPU"), then sets each `set` and
// scales each `scale`, and parses the memory reserve. Messages about a value are located in the
// calibration file ("c.textproto:4:1: set[0]: ...") or, built in memory, at `field_where`.
Status ApplyCalibration(const LoadedCalibration& loaded, const std::string& field_where,
                        proto::Cluster* cluster, CalibrationApplied* applied);

// The calibration as protobuf text, after `header` (comment lines, each starting with "# ").
std::string CalibrationText(const proto::Calibration& calibration, const std::string& header);

}  // namespace ppsim

#endif  // PPSIM_PLATFORMS_CALIBRATION_H_
