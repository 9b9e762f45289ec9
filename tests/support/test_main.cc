// The main of every test program: each test gets a folder of its own as ::testing::TempDir().
//
// CTest runs each test case as its own process, two at a time (-j2), and a clean clone's CI may run
// beside a developer's suite: tests that wrote fixed names into one shared /tmp/ raced each other
// (two sweep tests both wrote full.csv). GoogleTest takes TempDir() from TEST_TMPDIR at every call, so
// setting it per test gives every test, and every helper that writes there, a private folder:
// <TEST_TMPDIR or TMPDIR or /tmp>/ppsim-<pid>/ (CTest runs one test per process), emptied before
// each test, removed when it passes and kept for a look when it fails. The name stays short: tests
// compare messages that quote paths, and messages cut what they quote after 60 characters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

class TestFolders : public ::testing::EmptyTestEventListener {
 public:
  explicit TestFolders(std::string base) : base_(std::move(base)) {}

  void OnTestStart(const ::testing::TestInfo&) override {
    folder_ = base_ + "ppsim-" + std::to_string(getpid()) + "/";
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    setenv("TEST_TMPDIR", folder_.c_str(), 1);
  }

  void OnTestEnd(const ::testing::TestInfo& test) override {
    setenv("TEST_TMPDIR", base_.c_str(), 1);
    if (!test.result()->Failed()) {
      std::error_code ignored;
      std::filesystem::remove_all(folder_, ignored);
    }
  }

 private:
  std::string base_;
  std::string folder_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string base = ::testing::TempDir();  // before any test changes TEST_TMPDIR
  ::testing::UnitTest::GetInstance()->listeners().Append(new TestFolders(base));
  return RUN_ALL_TESTS();
}
