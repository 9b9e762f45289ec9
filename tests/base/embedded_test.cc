// ppsim_embed (cmake/Embed.cmake) and its lookup: tests/CMakeLists.txt embeds tests/data/embedded/
// into this test, bytes the generator must carry through untouched.
#include "base/embedded.h"

#include <gtest/gtest.h>

#include <string>

namespace ppsim {

EmbeddedFiles EmbeddedTestFiles();  // generated from tests/CMakeLists.txt

namespace {

TEST(EmbeddedFiles, HoldEveryByteInTheListOrder) {
  const EmbeddedFiles files = EmbeddedTestFiles();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].name, "data/embedded/every-byte.bin");
  EXPECT_EQ(files[1].name, "data/embedded/empty.txt");
  EXPECT_EQ(files[2].name, "data/embedded/quotes.txt");
  // Every byte value once, 0 to 255, NUL and a raw string's )" among them.
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  EXPECT_EQ(files[0].bytes, every_byte);
  EXPECT_EQ(files[1].bytes, "");
  EXPECT_EQ(files[2].bytes, "\"a\\x41\" )\" ?\?= \\\n");
}

TEST(EmbeddedFiles, FindByNameAndStem) {
  const EmbeddedFiles files = EmbeddedTestFiles();
  EXPECT_EQ(FindEmbeddedFile(files, "data/embedded/empty.txt"), &files[1]);
  EXPECT_EQ(FindEmbeddedFile(files, "empty.txt"), nullptr);
  EXPECT_EQ(EmbeddedFileStem(files[0]), "every-byte");
  EXPECT_EQ(EmbeddedFileStem({"presets/gpt3-1.5b.textproto", ""}), "gpt3-1.5b");
  EXPECT_EQ(EmbeddedFileStem({"timeline.js", ""}), "timeline");
  EXPECT_EQ(EmbeddedFileStem({"README", ""}), "README");
}

}  // namespace
}  // namespace ppsim
