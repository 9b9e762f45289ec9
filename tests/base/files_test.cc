#include "base/files.h"

#include <gtest/gtest.h>

#include <string>

namespace ppsim {
namespace {

// `text` as a little- or big-endian UTF-16 file with its byte-order mark (ASCII and one
// two-unit character, U+1F600).
std::string Utf16(const std::string& ascii, bool big_endian) {
  std::string bytes = big_endian ? "\xFE\xFF" : "\xFF\xFE";
  auto unit = [&](unsigned u) {
    const char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
    bytes += big_endian ? std::string{hi, lo} : std::string{lo, hi};
  };
  for (char c : ascii) unit(static_cast<unsigned char>(c));
  unit(0xD83D);
  unit(0xDE00);
  return bytes;
}

TEST(DecodeText, ReadsUtf8WithAMarkAndUtf16AsUtf8) {
  const std::string expected = "pp: 4\n\xF0\x9F\x98\x80";
  for (std::string text : {std::string("\xEF\xBB\xBFpp: 4\n\xF0\x9F\x98\x80"),
                           Utf16("pp: 4\n", false), Utf16("pp: 4\n", true)}) {
    ASSERT_TRUE(DecodeText("e.yaml", &text).ok());
    EXPECT_EQ(text, expected);
  }
  std::string plain = "pp: 4\n";
  ASSERT_TRUE(DecodeText("e.yaml", &plain).ok());
  EXPECT_EQ(plain, "pp: 4\n");
}

TEST(DecodeText, RefusesWhatIsNotUtf8OrUtf16WithAMark) {
  const std::string save = "; save it as UTF-8";
  std::string utf32("\xFF\xFE\0\0p\0\0\0", 8);
  EXPECT_EQ(DecodeText("e.yaml", &utf32).message(), "e.yaml: the file is UTF-32" + save);
  std::string no_mark("p\0p\0", 4);
  EXPECT_EQ(DecodeText("e.yaml", &no_mark).message(),
            "e.yaml: the file has NUL bytes where text starts; it looks like UTF-16 without a "
            "byte-order mark" +
                save);
  std::string lone_surrogate = Utf16("a", false).substr(0, 6);  // the high surrogate alone
  EXPECT_EQ(DecodeText("e.yaml", &lone_surrogate).message(),
            "e.yaml: the file is UTF-16 that does not decode" + save);
  std::string odd = "\xFF\xFEp";
  EXPECT_EQ(DecodeText("e.yaml", &odd).message(),
            "e.yaml: the file is UTF-16 that does not decode" + save);
}

}  // namespace
}  // namespace ppsim
