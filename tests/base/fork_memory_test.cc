// Memory laid out for forking (base/fork_memory.h): each test runs in a child process, as a job
// does, and sends back what it saw ("" when every check held).
#include "base/fork_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/subprocess.h"

namespace ppsim {
namespace {

// Runs `check` in a child process and returns what it returned ("" means every check held).
std::string InChild(const std::function<std::string()>& check) {
  std::string output;
  const Status status = RunInChild("job heap test", check, &output);
  return status.ok() ? output : status.message();
}

TEST(JobHeap, OffUntilUsedAndOnlyInTheThreadThatUsesIt) {
  EXPECT_FALSE(UsingJobHeap());
  EXPECT_EQ(InChild([] {
              std::unique_ptr<int> before(new int(1));
              UseJobHeap();
#if defined(__SANITIZE_ADDRESS__)
              // AddressSanitizer sees every allocation: the job heap stays off.
              return std::string(UsingJobHeap() ? "on under ASan" : "");
#else
              if (!UsingJobHeap()) return std::string("not on");
              if (InJobHeap(before.get())) return std::string("an earlier block is in it");
              std::unique_ptr<int> after(new int(2));
              if (!InJobHeap(after.get())) return std::string("a later block is not in it");
              bool other_thread_in_heap = true;
              std::thread([&] {
                std::unique_ptr<int> p(new int(3));
                other_thread_in_heap = UsingJobHeap() || InJobHeap(p.get());
              }).join();
              return std::string(other_thread_in_heap ? "another thread uses it" : "");
#endif
            }),
            "");
}

#if !defined(__SANITIZE_ADDRESS__)

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Every size from 1 byte to 256 KiB gets a block of its own, aligned to 16 bytes, that holds
// what is written into it; larger ones come from malloc.
TEST(JobHeap, BlocksAreAlignedSeparateAndHoldTheirBytes) {
  EXPECT_EQ(InChild([] {
              UseJobHeap();
              std::vector<std::pair<char*, size_t>> blocks;
              for (size_t bytes = 1; bytes <= (size_t{256} << 10); bytes += bytes / 7 + 1) {
                char* p = new char[bytes];
                if (!Aligned16(p)) return "not aligned: " + std::to_string(bytes);
                if (!InJobHeap(p)) return "not in the heap: " + std::to_string(bytes);
                std::memset(p, static_cast<int>(blocks.size() % 251), bytes);
                blocks.emplace_back(p, bytes);
              }
              for (size_t i = 0; i < blocks.size(); ++i) {
                const auto [p, bytes] = blocks[i];
                for (size_t b = 0; b < bytes; ++b) {
                  if (p[b] != static_cast<char>(i % 251)) {
                    return "overwritten: block of " + std::to_string(bytes);
                  }
                }
                delete[] p;
              }
              std::unique_ptr<char[]> large(new char[(size_t{256} << 10) + 1]);
              return std::string(InJobHeap(large.get()) ? "a large block is in the heap" : "");
            }),
            "");
}

// A freed block is the next one handed out for its size class (16 bytes up to 128, then four
// classes per doubling: 129..160 bytes share one); a block of another class is not.
TEST(JobHeap, FreedBlocksAreReusedWithinTheirSizeClass) {
  EXPECT_EQ(
      InChild([] {
        UseJobHeap();
        char* a = new char[100];
        delete[] a;
        char* b = new char[112];  // 97..112: the same class
        if (b != a) return std::string("100 and 112 bytes: not reused");
        char* c = new char[113];  // 113..128: the next class
        if (c == a) return std::string("113 bytes reused a 112-byte block");
        void* d = ::operator new(130);
        ::operator delete(d, 130);  // sized delete
        char* e = new char[160];
        if (static_cast<void*>(e) != d) return std::string("130 and 160 bytes: not reused");
        char* f = new char[161];
        return std::string(static_cast<void*>(f) == d ? "161 bytes reused a 160-byte block" : "");
      }),
      "");
}

// A block of the job heap deleted by another thread is left alone (not put on the owner's free
// lists, which only the owner touches): the next block of its size is a new one.
TEST(JobHeap, AnotherThreadsDeleteLeavesTheBlock) {
  EXPECT_EQ(InChild([] {
              UseJobHeap();
              int* p = new int(7);
              std::thread([p] { delete p; }).join();
              int* q = new int(8);
              return std::string(q == p ? "the owner reused a block another thread freed" : "");
            }),
            "");
}

// A process forked from one that allocates from a job heap gets a fresh heap of its own: its
// blocks are not in the inherited one, it reads the inherited blocks as they were, and deleting
// them leaves them (they are its parent's).
TEST(JobHeap, AForkedProcessGetsAFreshHeap) {
  EXPECT_EQ(InChild([] {
              UseJobHeap();
              std::vector<int>* inherited = new std::vector<int>(1000, 7);
              std::string output;
              const Status status = RunInChild(
                  "grandchild",
                  [inherited] {
                    if (UsingJobHeap()) return std::string("on before UseJobHeap");
                    UseJobHeap();
                    int* fresh = new int(1);
                    if (InJobHeap(inherited)) return std::string("the inherited heap is its own");
                    if (!InJobHeap(fresh)) return std::string("a new block is not in its heap");
                    for (int v : *inherited) {
                      if (v != 7) return std::string("an inherited block changed");
                    }
                    delete inherited;
                    return std::string("");
                  },
                  &output);
              if (!status.ok()) return status.message();
              if (!output.empty()) return output;
              return std::string(inherited->size() == 1000 && (*inherited)[999] == 7
                                     ? ""
                                     : "the parent's block changed");
            }),
            "");
}

#endif

// Laying the memory out in huge pages keeps every byte, in this process and in the processes it
// forks afterwards (whether the system could collapse anything or not).
TEST(CollapseForForking, KeepsTheBytes) {
  EXPECT_EQ(InChild([] {
              std::vector<uint32_t> block((size_t{16} << 20) / 4);
              for (size_t i = 0; i < block.size(); ++i) {
                block[i] = static_cast<uint32_t>(i * 2654435761u);
              }
              CollapseForForking();
              auto same = [&block] {
                for (size_t i = 0; i < block.size(); ++i) {
                  if (block[i] != static_cast<uint32_t>(i * 2654435761u)) return false;
                }
                return true;
              };
              if (!same()) return std::string("changed in this process");
              std::string output;
              const Status status = RunInChild(
                  "after the collapse", [&same] { return std::string(same() ? "" : "changed"); },
                  &output);
              return status.ok() ? output : status.message();
            }),
            "");
}

}  // namespace
}  // namespace ppsim
