// Quantities with units, as users type them on the command line and in files.
//
// Internally ppsim uses seconds and bytes. `what` names where the text came from (a Locator's
// Where: "--f", or "file:line:col: base.f") and starts every error message.
#ifndef PPSIM_CONFIG_UNITS_H_
#define PPSIM_CONFIG_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

// The valid ranges: chosen so that nothing computed from them (sums over every task of a run,
// products with sizes, SimGrid's flop amounts) overflows, underflows to zero or becomes NaN.
inline constexpr double kMinDurationS = 1e-12;          // 1 ps; 0 is valid too
inline constexpr double kMaxDurationS = 1e9;            // about 32 years
inline constexpr int64_t kMaxSizeBytes = int64_t{1} << 50;  // 1 PiB
inline constexpr double kMinBandwidthBytesPerS = 1e3;   // 1 KB/s (or infinite)
inline constexpr double kMaxBandwidthBytesPerS = 1e18;  // 1 EB/s
inline constexpr double kMinFlopRate = 1e6;
inline constexpr double kMaxFlopRate = 1e21;

// "1.2ms", "5us", "3ns", "0.5s", "2" (bare = seconds). 0, or from kMinDurationS to kMaxDurationS.
Status ParseDuration(std::string_view what, std::string_view text, double* seconds);

// "512MiB", "1.5GB", "64KB", "100B", "4096" (bare = bytes). Decimal prefixes are powers of 1000,
// binary ones (KiB, MiB, GiB, TiB) powers of 1024. A whole number of bytes, 0 to kMaxSizeBytes.
Status ParseSize(std::string_view what, std::string_view text, int64_t* bytes);

// "450GB/s", "50GiB/s", "400Gbps" or "400Gb/s" (bits per second), "1e12" (bare = bytes per
// second), or "inf". From kMinBandwidthBytesPerS to kMaxBandwidthBytesPerS.
Status ParseBandwidth(std::string_view what, std::string_view text, double* bytes_per_s);

// "989TFLOP/s", "2.25PFLOPS", "312e12" (bare = FLOP/s); prefixes K, M, G, T, P, E. From
// kMinFlopRate to kMaxFlopRate.
Status ParseFlopRate(std::string_view what, std::string_view text, double* flops_per_s);

// A count of things, such as sequences or tokens: "512", "2Mi" (2^21), "4M", "1.5T", "300B"
// (prefixes K, M, B or G, T, P are powers of 1000; Ki, Mi, Gi, Ti, Pi powers of 1024), optionally
// followed by one of `suffixes` ("tok"), which *suffix gets ("" when none). A whole number from 0
// to kMaxCount.
inline constexpr int64_t kMaxCount = 1'000'000'000'000'000'000;
Status ParseCount(std::string_view what, std::string_view text,
                  const std::vector<std::string_view>& suffixes, int64_t* count,
                  std::string_view* suffix);

// Comma-separated lists of at least one value, each as above ("1ms,1ms,2ms"). How many values a
// list must hold is for its user to say (costs: one for all stages, or one per stage).
Status ParseDurationList(std::string_view what, std::string_view text,
                         std::vector<double>* seconds);
Status ParseSizeList(std::string_view what, std::string_view text, std::vector<int64_t>* bytes);

// Short human-readable forms for tables: "1.2 ms", "33 s", "1.5 GiB". Not for round-tripping.
std::string HumanDuration(double seconds);
std::string HumanBytes(double bytes);
std::string HumanFlops(double flops);  // "494.5 TFLOP"
std::string HumanCount(double count);
// "29.48%", "5%", "0%": a fraction as a percentage to 4 significant digits; below 1e-6 (sums'
// rounding, as -2e-16) it is 0.
std::string HumanPercent(double fraction);  // "8.03 B", "218.1 M", "15 T", "640"

}  // namespace ppsim

#endif  // PPSIM_CONFIG_UNITS_H_
