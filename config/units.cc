#include "config/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "base/escape.h"

namespace ppsim {
namespace {

constexpr std::string_view kDurationHelp =
    "expected a non-negative number with unit ns, us, ms or s (a bare number is seconds), "
    "e.g. 1.2ms";
constexpr std::string_view kSizeHelp =
    "expected a non-negative whole number of bytes with unit B, KB, MB, GB, TB, KiB, MiB, GiB or "
    "TiB (a bare number is bytes), e.g. 512MiB";
constexpr std::string_view kBandwidthHelp =
    "expected a positive rate such as 450GB/s, 50GiB/s, 400Gbps or 400Gb/s (a bare number is "
    "bytes per second), or inf";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A decimal number split into its parts: digits before and after the point and an exponent.
struct Decimal {
  std::string integer;
  std::string fraction;
  int64_t exponent = 0;
};

// Reads "<digits>[.<digits>][e[+-]<digits>]" from the start of text; *rest gets what follows.
bool ReadDecimal(std::string_view text, Decimal* d, std::string_view* rest) {
  size_t i = 0;
  while (i < text.size() && IsDigit(text[i])) d->integer += text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDigit(text[i])) d->fraction += text[i++];
  }
  if (d->integer.empty() && d->fraction.empty()) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    bool negative = false;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) negative = text[j++] == '-';
    size_t digits_start = j;
    int64_t e = 0;
    while (j < text.size() && IsDigit(text[j])) {
      if (e < 100000) e = e * 10 + (text[j] - '0');
      ++j;
    }
    if (j == digits_start) return false;
    d->exponent = negative ? -e : e;
    i = j;
  }
  *rest = text.substr(i);
  return true;
}

// The correctly rounded double of d × 10^extra_exponent.
double ToDouble(const Decimal& d, int64_t extra_exponent) {
  std::string s = (d.integer.empty() ? "0" : d.integer) + "." +
                  (d.fraction.empty() ? "0" : d.fraction) + "e" +
                  std::to_string(d.exponent + extra_exponent);
  return std::strtod(s.c_str(), nullptr);
}

std::string Quote(std::string_view text) { return Quoted(text); }

enum class Exact { kOk, kTooManyDigits, kTooLarge, kNotWhole };

// d x scale as a whole number, in exact arithmetic: the mantissa's digits as an integer (below
// 10^24 < 2^80), times the scale, over a power of ten; anything past 2^63 - 1 is kTooLarge.
Exact ExactScaled(const Decimal& d, int64_t scale, int64_t* out) {
  std::string digits = d.integer + d.fraction;
  int64_t power_of_ten = d.exponent - static_cast<int64_t>(d.fraction.size());
  while (digits.size() > 1 && digits[0] == '0') digits.erase(0, 1);
  // Trailing zeros of the mantissa are a power of ten.
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++power_of_ten;
  }
  if (digits.size() > 24) return Exact::kTooManyDigits;
  if (power_of_ten > 30) return Exact::kTooLarge;
  __int128 value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  // value < 2^80: times a scale below 2^47 it stays inside 128 bits; a larger scale is checked.
  const __int128 limit = static_cast<__int128>(std::numeric_limits<int64_t>::max()) << 16;
  if (scale > (int64_t{1} << 46) && value > limit / scale) return Exact::kTooLarge;
  value *= scale;
  for (; power_of_ten > 0; --power_of_ten) {
    value *= 10;
    if (value > std::numeric_limits<int64_t>::max()) return Exact::kTooLarge;
  }
  for (; power_of_ten < 0; ++power_of_ten) {
    if (value % 10 != 0) return Exact::kNotWhole;
    value /= 10;
  }
  if (value > std::numeric_limits<int64_t>::max()) return Exact::kTooLarge;
  *out = static_cast<int64_t>(value);
  return Exact::kOk;
}

template <class T, class ParseOne>
Status ParseList(std::string_view what, std::string_view text, ParseOne parse_one,
                 std::vector<T>* out) {
  out->clear();
  size_t start = 0;
  while (true) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    T value{};
    Status status = parse_one(what, text.substr(start, end - start), &value);
    if (!status.ok()) {
      out->clear();
      return status;
    }
    out->push_back(value);
    if (end == text.size()) break;
    start = end + 1;
  }
  return Status();
}

std::string FormatShort(double value, const char* unit) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.4g %s", value, unit);
  return buffer;
}

}  // namespace

Status ParseDuration(std::string_view what, std::string_view text, double* seconds) {
  const std::string prefix = std::string(what) + ": ";
  if (!text.empty() && text[0] == '-') {
    return Status::InvalidInput(prefix + "negative duration " + Quote(text) +
                                "; durations must be >= 0");
  }
  Decimal d;
  std::string_view unit;
  if (!ReadDecimal(text, &d, &unit)) {
    return Status::InvalidInput(prefix + "invalid duration " + Quote(text) + "; " +
                                std::string(kDurationHelp));
  }
  int64_t exponent;
  if (unit.empty() || unit == "s") {
    exponent = 0;
  } else if (unit == "ms") {
    exponent = -3;
  } else if (unit == "us") {
    exponent = -6;
  } else if (unit == "ns") {
    exponent = -9;
  } else {
    return Status::InvalidInput(prefix + "invalid duration " + Quote(text) + "; " +
                                std::string(kDurationHelp));
  }
  const double value = ToDouble(d, exponent);
  // Sums of up to kMaxTasks durations stay finite, and no positive duration is so small that
  // times built from it lose their meaning.
  if (value != 0 && !(value >= kMinDurationS && value <= kMaxDurationS)) {
    return Status::InvalidInput(prefix + "duration " + Quote(text) + " is out of range; " +
                                "durations are 0 or from 1ps to 1e9s");
  }
  *seconds = value;
  return Status();
}

Status ParseSize(std::string_view what, std::string_view text, int64_t* bytes) {
  const std::string prefix = std::string(what) + ": ";
  if (!text.empty() && text[0] == '-') {
    return Status::InvalidInput(prefix + "negative size " + Quote(text) + "; sizes must be >= 0");
  }
  Decimal d;
  std::string_view unit;
  if (!ReadDecimal(text, &d, &unit)) {
    return Status::InvalidInput(prefix + "invalid size " + Quote(text) + "; " +
                                std::string(kSizeHelp));
  }
  struct Unit {
    std::string_view name;
    int64_t scale;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},          {"B", 1},
      {"KB", 1000},     {"MB", 1000 * 1000},
      {"GB", 1000LL * 1000 * 1000}, {"TB", 1000LL * 1000 * 1000 * 1000},
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20},
      {"GiB", 1LL << 30}, {"TiB", 1LL << 40},
  };
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) {
    return Status::InvalidInput(prefix + "invalid size " + Quote(text) + "; " +
                                std::string(kSizeHelp));
  }
  int64_t value = 0;
  switch (ExactScaled(d, found->scale, &value)) {
    case Exact::kOk:
      break;
    case Exact::kTooManyDigits:
      return Status::InvalidInput(prefix + "size " + Quote(text) + " has more than 24 significant "
                                  "digits; " + std::string(kSizeHelp));
    case Exact::kTooLarge:
      return Status::InvalidInput(prefix + "size " + Quote(text) + " is too large; sizes are at " +
                                  "most 2^63 - 1 bytes");
    case Exact::kNotWhole:
      return Status::InvalidInput(prefix + "size " + Quote(text) +
                                  " is not a whole number of bytes; " + std::string(kSizeHelp));
  }
  if (value > kMaxSizeBytes) {
    return Status::InvalidInput(prefix + "size " + Quote(text) + " is out of range; sizes are at " +
                                "most 1PiB (2^50 bytes)");
  }
  *bytes = static_cast<int64_t>(value);
  return Status();
}

Status ParseBandwidth(std::string_view what, std::string_view text, double* bytes_per_s) {
  const std::string prefix = std::string(what) + ": ";
  if (text == "inf") {
    *bytes_per_s = std::numeric_limits<double>::infinity();
    return Status();
  }
  Decimal d;
  std::string_view unit;
  const Status invalid = Status::InvalidInput(prefix + "invalid bandwidth " + Quote(text) + "; " +
                                              std::string(kBandwidthHelp));
  if (!text.empty() && text[0] == '-') return invalid;
  if (!ReadDecimal(text, &d, &unit)) return invalid;
  struct Unit {
    std::string_view name;
    double bytes_per_s;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},           {"B/s", 1},          {"KB/s", 1e3},         {"MB/s", 1e6},
      {"GB/s", 1e9},     {"TB/s", 1e12},      {"KiB/s", 1024.0},     {"MiB/s", 1048576.0},
      {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0},
      {"bps", 1.0 / 8},  {"Kbps", 1e3 / 8},   {"Mbps", 1e6 / 8},     {"Gbps", 1e9 / 8},
      {"Tbps", 1e12 / 8},
      {"b/s", 1.0 / 8},  {"Kb/s", 1e3 / 8},   {"Mb/s", 1e6 / 8},     {"Gb/s", 1e9 / 8},
      {"Tb/s", 1e12 / 8},
  };
  for (const Unit& u : kUnits) {
    if (u.name != unit) continue;
    const double value = ToDouble(d, 0) * u.bytes_per_s;
    if (!(value >= kMinBandwidthBytesPerS && value <= kMaxBandwidthBytesPerS)) {
      return Status::InvalidInput(prefix + "bandwidth " + Quote(text) + " is out of range; " +
                                  "bandwidths are from 1KB/s to 1EB/s, or inf");
    }
    *bytes_per_s = value;
    return Status();
  }
  return invalid;
}

Status ParseFlopRate(std::string_view what, std::string_view text, double* flops_per_s) {
  const std::string help =
      "expected a positive FLOP rate such as 989TFLOP/s or 2.25PFLOPS (a bare number is FLOP/s)";
  const Status invalid = Status::InvalidInput(std::string(what) + ": invalid FLOP rate " +
                                              Quote(text) + "; " + help);
  Decimal d;
  std::string_view unit;
  if (text.empty() || text[0] == '-' || !ReadDecimal(text, &d, &unit)) return invalid;
  int64_t exponent = 0;
  if (!unit.empty()) {
    static constexpr std::pair<char, int> kPrefixes[] = {{'K', 3},  {'M', 6},  {'G', 9},
                                                         {'T', 12}, {'P', 15}, {'E', 18}};
    for (const auto& [letter, power] : kPrefixes) {
      if (unit[0] == letter) {
        exponent = power;
        unit.remove_prefix(1);
        break;
      }
    }
    if (unit != "FLOP/s" && unit != "FLOPS") return invalid;
  }
  const double value = ToDouble(d, exponent);
  if (!(value >= kMinFlopRate && value <= kMaxFlopRate)) {
    return Status::InvalidInput(std::string(what) + ": FLOP rate " + Quote(text) +
                                " is out of range; FLOP rates are from 1MFLOP/s to 1e21 FLOP/s");
  }
  *flops_per_s = value;
  return Status();
}

Status ParseCount(std::string_view what, std::string_view text,
                  const std::vector<std::string_view>& suffixes, int64_t* count,
                  std::string_view* suffix) {
  std::string listed;
  for (std::string_view name : suffixes) listed += (listed.empty() ? "" : ", ") + std::string(name);
  const std::string help =
      "expected a whole number, optionally with a prefix K, M, B or G, T, P (powers of 1000) or "
      "Ki, Mi, Gi, Ti, Pi (powers of 1024)" +
      (listed.empty() ? std::string() : " and then " + listed) + ", e.g. 2Mi" +
      (suffixes.empty() ? std::string() : std::string(suffixes[0]));
  const std::string prefix = std::string(what) + ": ";
  const Status invalid =
      Status::InvalidInput(prefix + "invalid count " + Quote(text) + "; " + help);
  Decimal d;
  std::string_view unit;
  if (text.empty() || text[0] == '-' || !ReadDecimal(text, &d, &unit)) return invalid;
  *suffix = std::string_view();
  for (std::string_view name : suffixes) {
    if (unit.size() >= name.size() && unit.substr(unit.size() - name.size()) == name &&
        name.size() > suffix->size()) {
      *suffix = name;
    }
  }
  unit.remove_suffix(suffix->size());
  struct Prefix {
    std::string_view name;
    int64_t scale;
  };
  static constexpr Prefix kPrefixes[] = {
      {"", 1},
      {"K", 1000},
      {"M", 1000 * 1000},
      {"B", 1000LL * 1000 * 1000},
      {"G", 1000LL * 1000 * 1000},
      {"T", 1000LL * 1000 * 1000 * 1000},
      {"P", 1000LL * 1000 * 1000 * 1000 * 1000},
      {"Ki", 1LL << 10},
      {"Mi", 1LL << 20},
      {"Gi", 1LL << 30},
      {"Ti", 1LL << 40},
      {"Pi", 1LL << 50},
  };
  for (const Prefix& p : kPrefixes) {
    if (p.name != unit) continue;
    int64_t value = 0;
    if (ExactScaled(d, p.scale, &value) != Exact::kOk || value > kMaxCount) {
      return Status::InvalidInput(prefix + Quote(text) +
                                  " is not a whole number from 0 to 1e18; " + help);
    }
    *count = value;
    return Status();
  }
  return invalid;
}

Status ParseDurationList(std::string_view what, std::string_view text,
                         std::vector<double>* seconds) {
  return ParseList<double>(what, text, &ParseDuration, seconds);
}

Status ParseSizeList(std::string_view what, std::string_view text, std::vector<int64_t>* bytes) {
  return ParseList<int64_t>(what, text, &ParseSize, bytes);
}

std::string HumanDuration(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a >= 86400 * 10) return FormatShort(seconds / 86400, "days");
  if (a >= 3600 * 10) return FormatShort(seconds / 3600, "h");
  if (a >= 1) return FormatShort(seconds, "s");
  if (a >= 1e-3) return FormatShort(seconds * 1e3, "ms");
  if (a >= 1e-6) return FormatShort(seconds * 1e6, "us");
  return FormatShort(seconds * 1e9, "ns");
}

std::string HumanBytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a >= 1099511627776.0) return FormatShort(bytes / 1099511627776.0, "TiB");
  if (a >= 1073741824.0) return FormatShort(bytes / 1073741824.0, "GiB");
  if (a >= 1048576.0) return FormatShort(bytes / 1048576.0, "MiB");
  if (a >= 1024.0) return FormatShort(bytes / 1024.0, "KiB");
  return FormatShort(bytes, "B");
}

std::string HumanCount(double count) {
  const double a = std::fabs(count);
  if (a >= 1e12) return FormatShort(count / 1e12, "T");
  if (a >= 1e9) return FormatShort(count / 1e9, "B");
  if (a >= 1e6) return FormatShort(count / 1e6, "M");
  if (a >= 1e3) return FormatShort(count / 1e3, "K");
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", count);
  return buffer;
}

std::string HumanPercent(double fraction) {
  if (std::fabs(fraction) < 1e-6) fraction = 0;
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g%%", 100 * fraction);
  return buffer;
}

std::string HumanFlops(double flops) {
  const double a = std::fabs(flops);
  if (a >= 1e18) return FormatShort(flops / 1e18, "EFLOP");
  if (a >= 1e15) return FormatShort(flops / 1e15, "PFLOP");
  if (a >= 1e12) return FormatShort(flops / 1e12, "TFLOP");
  if (a >= 1e9) return FormatShort(flops / 1e9, "GFLOP");
  return FormatShort(flops, "FLOP");
}

}  // namespace ppsim
