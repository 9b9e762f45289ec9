#include "models/profile.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "models/stage_costs.h"

namespace ppsim {
namespace {

Profile Csv(const std::string& text) {
  Profile p;
  const Status status = ParseProfileCsv(text, "p.csv", &p);
  EXPECT_TRUE(status.ok()) << status.message();
  return p;
}

std::string CsvError(const std::string& text) {
  Profile p;
  return ParseProfileCsv(text, "p.csv", &p).message();
}

TEST(ParseProfileCsv, ReadsColumnsWithTheirUnits) {
  const Profile p =
      Csv("stage,f_ms,i_us,w_s,activation_MiB,activation_w_bytes,message_KB,params_GiB\n"
          "0,1.2,1100,0.0009,1536,1000,32,1\n"
          "1,2.5,2000,0.001,1024,500,32,2\n");
  EXPECT_EQ(p.num_rows, 2);
  EXPECT_EQ(p.values.forward_s, (std::vector<double>{0.0012, 0.0025}));
  EXPECT_EQ(p.values.backward_input_s, (std::vector<double>{0.0011, 0.002}));
  EXPECT_EQ(p.values.backward_weight_s, (std::vector<double>{0.0009, 0.001}));
  EXPECT_EQ(p.values.activation_bytes, (std::vector<int64_t>{1536LL << 20, 1024LL << 20}));
  EXPECT_EQ(p.values.activation_w_bytes, (std::vector<int64_t>{1000, 500}));
  EXPECT_EQ(p.values.message_bytes, (std::vector<int64_t>{32000, 32000}));
  EXPECT_EQ(p.values.param_bytes, (std::vector<int64_t>{1LL << 30, 2LL << 30}));
  EXPECT_TRUE(p.values.backward_s.empty());
}

TEST(ParseProfileCsv, ReportsEveryProblemWhereItIs) {
  EXPECT_EQ(CsvError("f_ms,b_min,act_MiB\n1,2,3\n"),
            "p.csv:1:6: unknown column 'b_min'; valid: stage, or f, i, w, b, overlap with _ns, "
            "_us, _ms or _s, or activation, activation_w, message, params, grads, optimizer with "
            "_B, _bytes, _KB, _MB, _GB, _TB, _KiB, _MiB, _GiB or _TiB\n"
            "p.csv:1:12: unknown column 'act_MiB'; valid: stage, or f, i, w, b, overlap with _ns, "
            "_us, _ms or _s, or activation, activation_w, message, params, grads, optimizer with "
            "_B, _bytes, _KB, _MB, _GB, _TB, _KiB, _MiB, _GiB or _TiB");
  EXPECT_EQ(CsvError("stage,f_ms,b_ms\n0,1,2\n2,-1,\n"),
            "p.csv:3:1: stage '2'; rows must be stages 0, 1, 2, ... in order (expected 1)\n"
            "p.csv:3:3: f_ms: negative duration '-1ms'; durations must be >= 0\n"
            "p.csv:3:6: empty cell; every row needs a value in every column");
  EXPECT_EQ(CsvError("f_ms,b_ms\n1,2,3\n"),
            "p.csv:2:1: 3 cells for 2 columns; every row has one value per column");
  EXPECT_EQ(CsvError("f_ms,f_us\n1,2\n"),
            "p.csv:1:6: column 'f_us' repeats f; give each quantity once");
  EXPECT_EQ(CsvError(""), "p.csv: empty profile; expected a header row and stage rows");
}

TEST(OverrideStageCosts, FlagsOverrideSingleFieldsOfTheProfile) {
  const Profile p =
      Csv("f_ms,i_ms,w_ms,activation_B,activation_w_B,params_B,grads_B\n"
          "1,2,3,100,40,7,9\n");
  CostValues flags;
  flags.backward_weight_s = {0.005};
  flags.activation_bytes = {200};
  StageCosts c;
  ASSERT_TRUE(OverrideStageCosts(flags, &p, 3, FlagLocator(), &c).ok());
  EXPECT_EQ(c.forward_s, (std::vector<double>{0.001, 0.001, 0.001}));          // one row for all
  EXPECT_EQ(c.backward_weight_s, (std::vector<double>{0.005, 0.005, 0.005}));  // the flag
  EXPECT_EQ(c.backward_s, (std::vector<double>{0.002 + 0.005, 0.002 + 0.005, 0.002 + 0.005}));
  EXPECT_EQ(c.activation_bytes, (std::vector<int64_t>{200, 200, 200}));
  EXPECT_EQ(c.activation_w_bytes, (std::vector<int64_t>{40, 40, 40}));
  EXPECT_EQ(c.static_bytes, (std::vector<int64_t>{16, 16, 16}));
}

TEST(OverrideStageCosts, ProfileRowsMustMatchTheStages) {
  const Profile p = Csv("f_ms,b_ms\n1,2\n1,2\n1,2\n");
  StageCosts c;
  EXPECT_EQ(OverrideStageCosts(CostValues(), &p, 4, FlagLocator(), &c).message(),
            "p.csv: 3 stages in the profile for 4 virtual stages; give one per virtual stage or "
            "one for all");
  const Profile no_backward = Csv("f_ms\n1\n");
  EXPECT_EQ(OverrideStageCosts(CostValues(), &no_backward, 4, FlagLocator(), &c).message(),
            "--b: required; give the full backward time (--b) or its two parts (--i and --w) (or "
            "in p.csv)");
}

}  // namespace
}  // namespace ppsim

namespace ppsim {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

TEST(ReadProfile, YamlGivesTheSameProfileAsCsv) {
  const std::string yaml = WriteTemp("p.yaml",
                                     "stages:\n"
                                     "  - {f_s: 0.001, b_s: 0.002, activation_bytes: 100}\n"
                                     "  - {f_s: 0.002, b_s: 0.004, activation_bytes: 200}\n");
  Profile from_yaml;
  ASSERT_TRUE(ReadProfile(yaml, &from_yaml).ok());
  const Profile from_csv = Csv("f_ms,b_ms,activation_B\n1,2,100\n2,4,200\n");
  EXPECT_EQ(from_yaml.num_rows, 2);
  EXPECT_EQ(from_yaml.values.forward_s, from_csv.values.forward_s);
  EXPECT_EQ(from_yaml.values.backward_s, from_csv.values.backward_s);
  EXPECT_EQ(from_yaml.values.activation_bytes, from_csv.values.activation_bytes);
}

// Quantities as text with units, in every configuration format: 1.5ms = 0.0015 s, 1.5KiB = 1536.
TEST(ReadProfile, UnitStringsGiveTheSameProfile) {
  const std::string text = WriteTemp("u.textproto",
                                     "stages { f: \"1.5ms\" b_s: 0.002 activation: \"1.5KiB\" }\n"
                                     "stages { f_s: 0.002 b: \"4ms\" activation_bytes: 200 }\n");
  const std::string yaml = WriteTemp("u.yaml",
                                     "stages:\n"
                                     "  - {f: 1.5ms, b: 2ms, activation: 1.5KiB}\n"
                                     "  - {f: 2ms, b_s: 0.004, activation: 200B}\n");
  const Profile from_csv = Csv("f_ms,b_ms,activation_B\n1.5,2,1536\n2,4,200\n");
  for (const std::string& path : {text, yaml}) {
    Profile p;
    const Status status = ReadProfile(path, &p);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(p.values.forward_s, from_csv.values.forward_s) << path;
    EXPECT_EQ(p.values.backward_s, from_csv.values.backward_s) << path;
    EXPECT_EQ(p.values.activation_bytes, from_csv.values.activation_bytes) << path;
  }
  const std::string both = WriteTemp("both.textproto", "stages { f_s: 1 f: \"1ms\" }\n");
  Profile p;
  EXPECT_EQ(ReadProfile(both, &p).message(),
            both + ":1:20: stages[0].f: given with f_s; give the quantity once");
}

TEST(ReadProfile, ProtoValuesAreCheckedWhereTheyStand) {
  const std::string path = WriteTemp("bad.textproto",
                                     "stages { f_s: 0.001 b_s: -2 }\n"
                                     "stages { b_s: 0.002 }\n");
  Profile p;
  EXPECT_EQ(ReadProfile(path, &p).message(),
            path +
                ":2:8: stages[1]: no f_s, but other stages give it; give it for every stage or "
                "none\n" +
                path +
                ":1:26: stages[0].b_s: -2 is negative or not finite; times are >= 0 "
                "seconds");
}

}  // namespace
}  // namespace ppsim
