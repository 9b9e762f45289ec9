#include "batch/result_values.h"

#include <cstdio>

#include "batch/results.h"
#include "config/units.h"

namespace ppsim {


std::string ShowValue(int column, double value) {
  switch (column) {
    case kMakespanColumn:
    case kTimeToTrainColumn:
    case kWallColumn:
      return HumanDuration(value);
    case kBubbleColumn:
    case kBubbleOverIdealColumn:
    case kStageBubbleColumn:
    case kMfuColumn:
    case kHfuColumn:
      return HumanPercent(value);
    case kThroughputColumn:
    case kSamplesColumn:
    case kTokensColumn:
      return HumanCount(value) + "/s";
    case kCapacityColumn:
      if (value == 0) return "unlimited";
      return HumanBytes(value);
    case kPeakMemoryColumn:
    case kStaticMemoryColumn:
      return HumanBytes(value);
    case kGpuHoursColumn:
    case kCostColumn:
      return HumanCount(value);
    default:
      return "";
  }
}

}  // namespace ppsim
