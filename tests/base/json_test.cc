// JSON as ppsim lays it out: valid whatever the values hold, in the two documented forms.
#include "base/json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>

#include "base/numbers.h"

namespace ppsim {
namespace {

using Json = nlohmann::ordered_json;

TEST(FormatJson, CompactPutsASpaceAfterEachCommaAndColon) {
  Json j;
  j["rank"] = 0;
  j["busy_s"] = JsonNumber(24);
  j["ranks"] = Json::array({1, 2});
  j["inner"]["a"] = true;
  EXPECT_EQ(FormatJsonCompact(j), R"({"rank": 0, "busy_s": 24, "ranks": [1, 2], "inner": {"a": true}})");
  EXPECT_EQ(FormatJsonCompact(Json::array()), "[]");
  EXPECT_EQ(FormatJsonCompact(Json::object()), "{}");
}

TEST(FormatJson, PrettyExpandsTheObjectAndArraysOfContainers) {
  Json j;
  j["name"] = "x";
  j["list"] = Json::array({1, 2});
  j["rows"] = Json::array({Json{{"a", 1}}, Json{{"a", 2}}});
  j["orders"] = Json::array({Json::array({"0F0"}), Json::array()});
  j["none"] = Json::array();
  EXPECT_EQ(FormatJsonPretty(j),
            "{\n"
            "  \"name\": \"x\",\n"
            "  \"list\": [1, 2],\n"
            "  \"rows\": [\n    {\"a\": 1},\n    {\"a\": 2}\n  ],\n"
            "  \"orders\": [\n    [\"0F0\"],\n    []\n  ],\n"
            "  \"none\": []\n"
            "}");
}

TEST(FormatJson, AnyTextStaysValidJson) {
  const std::string hostile = "a \"quoted\" name\nwith\\backslash, a tab\t, \x01 and \xff bytes";
  Json j;
  j[hostile] = hostile;
  j["list"] = Json::array({hostile});
  for (const std::string& text : {FormatJsonCompact(j), FormatJsonPretty(j)}) {
    const Json back = Json::parse(text);
    // Bytes that are not UTF-8 become U+FFFD; everything else comes back as it was.
    const std::string expected = "a \"quoted\" name\nwith\\backslash, a tab\t, \x01 and \xEF\xBF\xBD bytes";
    EXPECT_EQ(back["list"][0], expected) << text;
    EXPECT_EQ(back.begin().key(), expected);
  }
}

TEST(FormatNumber, WholeNumbersAsIntegersOthersShortestRoundTrip) {
  EXPECT_EQ(FormatNumber(33), "33");
  EXPECT_EQ(FormatNumber(-0.0), "0");
  EXPECT_EQ(FormatNumber(450e9), "450000000000");
  EXPECT_EQ(FormatNumber(0.0125), "0.0125");
  EXPECT_EQ(FormatNumber(0.0005), "0.0005");
  EXPECT_EQ(FormatNumber(1e-7), "1e-07");
  // 2^53 and above are not all doubles exactly: the library's exponent form.
  EXPECT_EQ(FormatNumber(9007199254740992.0), "9.007199254740992e+15");
  EXPECT_EQ(FormatNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_TRUE(JsonNumber(std::numeric_limits<double>::infinity()).is_null());
  for (double v : {0.1, 1.0 / 3, 6.02214076e23, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(std::strtod(FormatNumber(v).c_str(), nullptr), v) << FormatNumber(v);
  }
}

TEST(ParseNumbers, WholeAndFiniteAreStrict) {
  int64_t whole = 0;
  EXPECT_TRUE(ParseWhole("-12", &whole));
  EXPECT_EQ(whole, -12);
  for (const char* bad : {"", "1.0", "1e3", " 1", "1 ", "+1", "9223372036854775808", "x"}) {
    EXPECT_FALSE(ParseWhole(bad, &whole)) << bad;
  }
  double finite = 0;
  EXPECT_TRUE(ParseFinite("-2e-3", &finite));
  EXPECT_EQ(finite, -2e-3);
  for (const char* bad : {"", "inf", "nan", "1e999", "1.5x", "0x10"}) {
    EXPECT_FALSE(ParseFinite(bad, &finite)) << bad;
  }
}

}  // namespace
}  // namespace ppsim
