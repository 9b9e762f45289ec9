// The expected words are what dash 0.5 (Debian's /bin/sh) gives for the same text:
//   sh -c 'for w in "$@"; do printf "[%s]" "$w"; done' x TEXT
#include "base/shell_words.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsim {
namespace {

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  const Status status = SplitShellWords(text, &words);
  EXPECT_TRUE(status.ok()) << status.message();
  return words;
}

std::string Error(std::string_view text) {
  std::vector<std::string> words = {"stale"};
  const Status status = SplitShellWords(text, &words);
  EXPECT_TRUE(words.empty());
  return status.message();
}

using Strings = std::vector<std::string>;

TEST(ShellWordsTest, BlanksSeparateWords) {
  EXPECT_EQ(Words("--tp 8  --pp\t4\n--model llama3-8b"),
            (Strings{"--tp", "8", "--pp", "4", "--model", "llama3-8b"}));
  EXPECT_EQ(Words(""), Strings{});
  EXPECT_EQ(Words(" \t\n "), Strings{});
}

TEST(ShellWordsTest, Quotes) {
  EXPECT_EQ(Words("--schedule 'a b' \"c d\""), (Strings{"--schedule", "a b", "c d"}));
  EXPECT_EQ(Words("'$x \\n' \"a\\\"b\\\\c\\d\""), (Strings{"$x \\n", "a\"b\\c\\d"}));
  EXPECT_EQ(Words("a'b'\"c\"d"), (Strings{"abcd"}));
  EXPECT_EQ(Words("'' \"\" x"), (Strings{"", "", "x"}));
  EXPECT_EQ(Words("--set=gpu.name='H100 SXM'"), (Strings{"--set=gpu.name=H100 SXM"}));
}

TEST(ShellWordsTest, BackslashesAndContinuations) {
  EXPECT_EQ(Words("a\\ b c\\'d"), (Strings{"a b", "c'd"}));
  EXPECT_EQ(Words("--tp 8 \\\n  --pp 4"), (Strings{"--tp", "8", "--pp", "4"}));
  EXPECT_EQ(Words("ab\\\ncd"), (Strings{"abcd"}));
  EXPECT_EQ(Words("\"ab\\\ncd\""), (Strings{"abcd"}));
}

TEST(ShellWordsTest, CommentsAndGlobs) {
  EXPECT_EQ(Words("--tp 8 # eight\n--pp 4"), (Strings{"--tp", "8", "--pp", "4"}));
  EXPECT_EQ(Words("a#b *.yaml ?[x]"), (Strings{"a#b", "*.yaml", "?[x]"}));
}

TEST(ShellWordsTest, RefusesWhatAShellWouldChange) {
  EXPECT_EQ(Error("--tp 'eight"),
            "unterminated single quote opened at character 6; close it with '");
  EXPECT_EQ(Error("a \"b"), "unterminated double quote opened at character 3; close it with \"");
  EXPECT_EQ(Error("abc\\"),
            "character 4: a backslash ends the string; escape a character after it, or remove it");
  EXPECT_EQ(Error("--data $DATA"),
            "character 8: '$' would be expanded by a shell; write the value itself (or "
            "single-quote it to mean the character)");
  EXPECT_EQ(Error("\"`date`\""),
            "character 2: '`' would be expanded by a shell; write the value itself (or "
            "single-quote it to mean the character)");
  EXPECT_EQ(Error("--tp 8; rm"),
            "character 7: ';' is a shell operator; quote it to mean the character");
  EXPECT_EQ(Error("a>b"), "character 2: '>' is a shell operator; quote it to mean the character");
}

}  // namespace
}  // namespace ppsim
