#include "config/units.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsim {
namespace {

double Duration(const std::string& text) {
  double s = -1;
  Status status = ParseDuration("--f", text, &s);
  EXPECT_TRUE(status.ok()) << status.message();
  return s;
}

int64_t Size(const std::string& text) {
  int64_t b = -1;
  Status status = ParseSize("--activation", text, &b);
  EXPECT_TRUE(status.ok()) << status.message();
  return b;
}

double Bandwidth(const std::string& text) {
  double b = -1;
  Status status = ParseBandwidth("--p2p-bandwidth", text, &b);
  EXPECT_TRUE(status.ok()) << status.message();
  return b;
}

TEST(ParseDuration, ReadsUnitsAsTheCorrectlyRoundedSeconds) {
  EXPECT_EQ(Duration("2"), 2.0);
  EXPECT_EQ(Duration("0.5s"), 0.5);
  EXPECT_EQ(Duration("1.2ms"), 0.0012);
  EXPECT_EQ(Duration("5us"), 5e-6);
  EXPECT_EQ(Duration("3ns"), 3e-9);
  EXPECT_EQ(Duration("1e-3"), 0.001);
  EXPECT_EQ(Duration("2.5e3us"), 0.0025);
  EXPECT_EQ(Duration("0"), 0.0);
  EXPECT_EQ(Duration(".5ms"), 0.0005);
}

TEST(ParseDuration, RejectsNegativeAndMalformedValues) {
  double s;
  EXPECT_EQ(ParseDuration("--f", "-1ms", &s).message(),
            "--f: negative duration '-1ms'; durations must be >= 0");
  EXPECT_EQ(ParseDuration("--b", "1.2xs", &s).message(),
            "--b: invalid duration '1.2xs'; expected a non-negative number with unit ns, us, ms "
            "or s (a bare number is seconds), e.g. 1.2ms");
  for (const char* text : {"", "ms", "abc", "1 ms", "1ms ", "1.2.3", "nan", "inf", "1e", "1MS"}) {
    EXPECT_FALSE(ParseDuration("--f", text, &s).ok()) << text;
  }
  EXPECT_EQ(ParseDuration("--f", "1e999", &s).message(),
            "--f: duration '1e999' is out of range; durations are 0 or from 1ps to 1e9s");
  EXPECT_EQ(ParseDuration("--f", "1e308s", &s).message(),
            "--f: duration '1e308s' is out of range; durations are 0 or from 1ps to 1e9s");
  EXPECT_EQ(ParseDuration("--f", "1e-320", &s).message(),
            "--f: duration '1e-320' is out of range; durations are 0 or from 1ps to 1e9s");
  EXPECT_TRUE(ParseDuration("--f", "1e9s", &s).ok());
  EXPECT_FALSE(ParseDuration("--f", "0.0001ns", &s).ok());
  EXPECT_TRUE(ParseDuration("--f", "0.001ns", &s).ok());
}

TEST(ParseSize, ReadsDecimalAndBinaryUnitsExactly) {
  EXPECT_EQ(Size("4096"), 4096);
  EXPECT_EQ(Size("100B"), 100);
  EXPECT_EQ(Size("64KB"), 64000);
  EXPECT_EQ(Size("1.5GB"), 1500000000);
  EXPECT_EQ(Size("1.1GB"), 1100000000);
  EXPECT_EQ(Size("512MiB"), 536870912);
  EXPECT_EQ(Size("1.5GiB"), 1610612736);
  EXPECT_EQ(Size("2TiB"), 2199023255552);
  EXPECT_EQ(Size("1e3KB"), 1000000);
  EXPECT_EQ(Size("0.5KiB"), 512);
}

TEST(ParseSize, RejectsFractionalBytesUnknownUnitsAndNegatives) {
  int64_t b;
  EXPECT_EQ(ParseSize("--activation", "0.3KiB", &b).message(),
            "--activation: size '0.3KiB' is not a whole number of bytes; expected a non-negative "
            "whole number of bytes with unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (a bare number "
            "is bytes), e.g. 512MiB");
  EXPECT_EQ(ParseSize("--message-bytes", "12XB", &b).message(),
            "--message-bytes: invalid size '12XB'; expected a non-negative whole number of bytes "
            "with unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (a bare number is bytes), e.g. "
            "512MiB");
  EXPECT_EQ(ParseSize("--activation", "-1GB", &b).message(),
            "--activation: negative size '-1GB'; sizes must be >= 0");
  EXPECT_EQ(ParseSize("--activation", "9e18KB", &b).message(),
            "--activation: size '9e18KB' is too large; sizes are at most 2^63 - 1 bytes");
  EXPECT_EQ(ParseSize("--activation", "2PiB", &b).message(),
            "--activation: invalid size '2PiB'; expected a non-negative whole number of bytes "
            "with unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (a bare number is bytes), e.g. "
            "512MiB");
  EXPECT_EQ(ParseSize("--activation", "1025TiB", &b).message(),
            "--activation: size '1025TiB' is out of range; sizes are at most 1PiB (2^50 bytes)");
}

TEST(ParseBandwidth, ReadsBytesAndBitsPerSecond) {
  EXPECT_EQ(Bandwidth("450GB/s"), 450e9);
  EXPECT_EQ(Bandwidth("400Gbps"), 50e9);
  EXPECT_EQ(Bandwidth("1GiB/s"), 1073741824.0);
  EXPECT_EQ(Bandwidth("1e12"), 1e12);
  EXPECT_TRUE(std::isinf(Bandwidth("inf")));
  double b;
  EXPECT_EQ(ParseBandwidth("--p2p-bandwidth", "0GB/s", &b).message(),
            "--p2p-bandwidth: bandwidth '0GB/s' is out of range; bandwidths are from 1KB/s to "
            "1EB/s, or inf");
  EXPECT_EQ(ParseBandwidth("--p2p-bandwidth", "1e-300B/s", &b).message(),
            "--p2p-bandwidth: bandwidth '1e-300B/s' is out of range; bandwidths are from 1KB/s to "
            "1EB/s, or inf");
  EXPECT_EQ(Bandwidth("400Gb/s"), 50e9);
  EXPECT_FALSE(ParseBandwidth("--p2p-bandwidth", "450GB", &b).ok());
}

TEST(ParseDurationList, ReadsEveryCommaSeparatedValue) {
  std::vector<double> v;
  ASSERT_TRUE(ParseDurationList("--f", "1ms", &v).ok());
  EXPECT_EQ(v, (std::vector<double>{0.001}));
  ASSERT_TRUE(ParseDurationList("--f", "1,1,2,1", &v).ok());
  EXPECT_EQ(v, (std::vector<double>{1, 1, 2, 1}));
  EXPECT_EQ(ParseDurationList("--f", "1,,3", &v).message(),
            "--f: invalid duration ''; expected a non-negative number with unit ns, us, ms or s "
            "(a bare number is seconds), e.g. 1.2ms");
  EXPECT_TRUE(v.empty());
}

TEST(ParseCount, ReadsPrefixesAndSuffixesExactly) {
  int64_t n = 0;
  std::string_view suffix;
  const std::vector<std::string_view> tokens = {"tok", "tokens"};
  ASSERT_TRUE(ParseCount("--n", "512", tokens, &n, &suffix).ok());
  EXPECT_EQ(n, 512);
  EXPECT_EQ(suffix, "");
  ASSERT_TRUE(ParseCount("--n", "2Mitok", tokens, &n, &suffix).ok());
  EXPECT_EQ(n, 2 << 20);
  EXPECT_EQ(suffix, "tok");
  ASSERT_TRUE(ParseCount("--n", "1.5Ttokens", tokens, &n, &suffix).ok());
  EXPECT_EQ(n, 1'500'000'000'000);
  EXPECT_EQ(suffix, "tokens");
  ASSERT_TRUE(ParseCount("--n", "300B", tokens, &n, &suffix).ok());
  EXPECT_EQ(n, 300'000'000'000);
  ASSERT_TRUE(ParseCount("--n", "1e18", tokens, &n, &suffix).ok());
  EXPECT_EQ(n, 1'000'000'000'000'000'000);
  // 888 Pi = 888 x 2^50 < 1e18.
  ASSERT_TRUE(ParseCount("--n", "888Pi", tokens, &n, &suffix).ok());
  EXPECT_EQ(n, int64_t{888} << 50);
}

TEST(ParseCount, RefusesWhatIsNotAWholeCountUpTo1e18) {
  int64_t n = 0;
  std::string_view suffix;
  const std::string help =
      "expected a whole number, optionally with a prefix K, M, B or G, T, P (powers of 1000) or "
      "Ki, Mi, Gi, Ti, Pi (powers of 1024) and then tok, e.g. 2Mitok";
  EXPECT_EQ(ParseCount("--n", "1000000000000000001", {"tok"}, &n, &suffix).message(),
            "--n: '1000000000000000001' is not a whole number from 0 to 1e18; " + help);
  EXPECT_EQ(ParseCount("--n", "889Pi", {"tok"}, &n, &suffix).message(),
            "--n: '889Pi' is not a whole number from 0 to 1e18; " + help);
  // 24 digits times 2^50 would pass 2^127: refused, not wrapped.
  EXPECT_EQ(ParseCount("--n", "302231454903657293676545Pi", {"tok"}, &n, &suffix).message(),
            "--n: '302231454903657293676545Pi' is not a whole number from 0 to 1e18; " + help);
  EXPECT_EQ(ParseCount("--n", "1.5", {"tok"}, &n, &suffix).message(),
            "--n: '1.5' is not a whole number from 0 to 1e18; " + help);
  EXPECT_EQ(ParseCount("--n", "-1", {"tok"}, &n, &suffix).message(),
            "--n: invalid count '-1'; " + help);
  EXPECT_EQ(ParseCount("--n", "2Xtok", {"tok"}, &n, &suffix).message(),
            "--n: invalid count '2Xtok'; " + help);
}

}  // namespace
}  // namespace ppsim
