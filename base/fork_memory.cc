#include "base/fork_memory.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1
#endif

namespace ppsim {
namespace {

// Each block starts with a header of 16 bytes (its size class), so that a block stays aligned to
// 16 bytes (the alignment operator new promises) and an unsized delete finds its class.
constexpr size_t kHeaderBytes = 16;
// Sizes up to 128 bytes in steps of 16, then four classes for each doubling, up to 256 KiB.
constexpr size_t kLargestBytes = size_t{256} << 10;
constexpr int kClasses = 52;
// The region reserved (address space only: nothing is touched until used, and a job that needs
// more allocates the rest from malloc).
constexpr size_t kReserveBytes = size_t{16} << 30;
constexpr size_t kHugePageBytes = size_t{2} << 20;
// Mappings larger than this are left alone: a heap or an arena is smaller, and the huge sparse
// reservations some processes hold (AddressSanitizer's shadow, terabytes) would take millions of
// residency queries.
constexpr uintptr_t kLargestCollapsedBytes = uintptr_t{4} << 30;

int ClassOf(size_t bytes) {
  if (bytes <= 128) return bytes == 0 ? 0 : static_cast<int>((bytes + 15) / 16) - 1;
  const int e = 63 - __builtin_clzll(bytes - 1);  // 2^e < bytes <= 2^(e+1), e >= 7
  const int k = static_cast<int>((bytes - 1 - (size_t{1} << e)) >> (e - 2));  // 0..3
  return 8 + (e - 7) * 4 + k;
}

size_t ClassBytes(int c) {
  if (c < 8) return static_cast<size_t>(c + 1) * 16;
  const int e = 7 + (c - 8) / 4;
  const int k = (c - 8) % 4 + 1;
  return (size_t{1} << e) + (static_cast<size_t>(k) << (e - 2));
}

struct FreeBlock {
  FreeBlock* next;
};

// One per process; only the thread that owns it (t_owner) reads or writes it.
struct JobHeap {
  pid_t pid = 0;  // the process that reserved it
  // The job heaps of the processes this one was forked from, left as they are.
  static constexpr int kInherited = 4;
  const char* inherited[kInherited][2] = {};
  int inherited_count = 0;
  char* begin = nullptr;
  char* next = nullptr;
  char* end = nullptr;
  FreeBlock* free[kClasses] = {};

  bool Holds(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= begin && c < end;
  }

  bool Inherited(const void* p) const {
    const char* c = static_cast<const char*>(p);
    for (int i = 0; i < inherited_count; ++i) {
      if (c >= inherited[i][0] && c < inherited[i][1]) return true;
    }
    return false;
  }

  void* Take(size_t bytes) {
    if (bytes > kLargestBytes) return nullptr;
    const int c = ClassOf(bytes);
    if (FreeBlock* block = free[c]) {
      free[c] = block->next;
      return block;
    }
    const size_t block_bytes = kHeaderBytes + ClassBytes(c);
    if (static_cast<size_t>(end - next) < block_bytes) return nullptr;
    char* block = next;
    next += block_bytes;
    std::memcpy(block, &c, sizeof(c));
    return block + kHeaderBytes;
  }

  void Give(void* p) {
    int c = 0;
    std::memcpy(&c, static_cast<char*>(p) - kHeaderBytes, sizeof(c));
    FreeBlock* block = static_cast<FreeBlock*>(p);
    block->next = free[c];
    free[c] = block;
  }
};

JobHeap g_heap;
thread_local bool t_owner = false;

#if !defined(__SANITIZE_ADDRESS__)

void* MallocOrThrow(size_t bytes) {
  if (bytes == 0) bytes = 1;
  while (true) {
    if (void* p = std::malloc(bytes)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* Allocate(size_t bytes) {
  if (t_owner) {
    if (void* p = g_heap.Take(bytes)) return p;
  }
  return MallocOrThrow(bytes);
}

void* AllocateNoThrow(size_t bytes) noexcept {
  try {
    return Allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}

void Deallocate(void* p) noexcept {
  if (p == nullptr) return;
  if (g_heap.Holds(p)) {
    // Another thread's delete of a job-heap block leaves it: the free lists are the owner's.
    if (t_owner) g_heap.Give(p);
    return;
  }
  // A block of the job heap this process inherited stays as it is (shared with its parent).
  if (g_heap.Inherited(p)) return;
  std::free(p);
}

#endif

// Collapses the 2 MiB pages of [begin, end) of which at least half is in memory (a sparse range
// would otherwise be filled), contiguous ones in one call.
void CollapseRange(uintptr_t begin, uintptr_t end) {
  begin = (begin + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  end &= ~(uintptr_t{kHugePageBytes} - 1);
  constexpr size_t kPages = kHugePageBytes / 4096;
  unsigned char resident[kPages];
  uintptr_t run = 0;  // the start of the current run of ranges to collapse; 0: none
  for (uintptr_t at = begin; at <= end; at += kHugePageBytes) {
    bool dense = false;
    if (at < end && ::mincore(reinterpret_cast<void*>(at), kHugePageBytes, resident) == 0) {
      size_t in_memory = 0;
      for (unsigned char r : resident) in_memory += r & 1;
      dense = in_memory * 2 >= kPages;
    }
    if (dense && run == 0) run = at;
    if (!dense && run != 0) {
      ::madvise(reinterpret_cast<void*>(run), at - run, MADV_COLLAPSE);
      run = 0;
    }
  }
}

}  // namespace

void CollapseForForking() {
#if defined(__SANITIZE_ADDRESS__)
  return;  // the sanitizer's own allocator and shadow: nothing to gain
#endif
  // /proc/self/maps, read without allocating: "begin-end perms offset dev inode   path".
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buffer[1 << 16];
  size_t held = 0;
  while (true) {
    const ssize_t n = ::read(fd, buffer + held, sizeof(buffer) - held);
    if (n <= 0) break;
    held += static_cast<size_t>(n);
    size_t start = 0;
    while (const void* newline = std::memchr(buffer + start, '\n', held - start)) {
      const size_t stop = static_cast<size_t>(static_cast<const char*>(newline) - buffer);
      const std::string_view line(buffer + start, stop - start);
      start = stop + 1;
      unsigned long begin = 0, end = 0, offset = 0, inode = 0;
      char perms[5] = {};
      // The fields needed come first; a long path may be cut.
      char text[256];
      const size_t length = std::min(line.size(), sizeof(text) - 1);
      std::memcpy(text, line.data(), length);
      text[length] = '\0';
      char path[32] = {};
      const int fields = std::sscanf(text, "%lx-%lx %4s %lx %*s %lu %31s", &begin, &end, perms,
                                     &offset, &inode, path);
      const bool anonymous = inode == 0 && (fields == 5 || std::string_view(path) == "[heap]");
      if (anonymous && std::string_view(perms) == "rw-p" && end - begin <= kLargestCollapsedBytes &&
          !g_heap.Holds(reinterpret_cast<const void*>(begin))) {
        CollapseRange(begin, end);
      }
    }
    std::memmove(buffer, buffer + start, held - start);
    held -= start;
    if (held == sizeof(buffer)) break;  // a line longer than the buffer: stop
  }
  ::close(fd);
}

// A forked process allocates from malloc until it calls UseJobHeap itself.
void LeaveJobHeap() { t_owner = false; }

// Whether the system charges address space reserved for writing against a commit limit
// (vm.overcommit_memory = 2): there the reserved region would count whole, so no job heap.
bool StrictOvercommit() {
  const int fd = ::open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char mode = '0';
  const bool read = ::read(fd, &mode, 1) == 1;
  ::close(fd);
  return read && mode == '2';
}

void UseJobHeap() {
#if !defined(__SANITIZE_ADDRESS__)
  // Checked once per process tree: a forked process inherits the answer.
  static const bool strict = StrictOvercommit();
  static bool atfork = false;
  if (strict) return;
  if (!atfork) atfork = ::pthread_atfork(nullptr, nullptr, LeaveJobHeap) == 0;
  const pid_t pid = ::getpid();
  if (g_heap.begin == nullptr || g_heap.pid != pid) {
    if (g_heap.begin != nullptr) {
      if (g_heap.inherited_count == JobHeap::kInherited) return;
      g_heap.inherited[g_heap.inherited_count][0] = g_heap.begin;
      g_heap.inherited[g_heap.inherited_count][1] = g_heap.end;
      ++g_heap.inherited_count;
    }
    void* region = ::mmap(nullptr, kReserveBytes + kHugePageBytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) {
      g_heap.begin = g_heap.next = g_heap.end = nullptr;
      return;
    }
    const uintptr_t at = (reinterpret_cast<uintptr_t>(region) + kHugePageBytes - 1) &
                         ~(uintptr_t{kHugePageBytes} - 1);
    char* begin = reinterpret_cast<char*>(at);
    // Advice only: without transparent huge pages the region is faulted 4 KiB at a time.
    ::madvise(begin, kReserveBytes, MADV_HUGEPAGE);
    g_heap.pid = pid;
    g_heap.begin = begin;
    g_heap.next = begin;
    g_heap.end = begin + kReserveBytes;
    std::memset(g_heap.free, 0, sizeof(g_heap.free));
  }
  t_owner = true;
#endif
}

bool UsingJobHeap() { return t_owner; }

bool InJobHeap(const void* p) { return g_heap.Holds(p); }

}  // namespace ppsim

#if !defined(__SANITIZE_ADDRESS__)

// The replaceable allocation functions ([new.delete.single], [new.delete.array]); the
// over-aligned ones stay the library's (they never reach the job heap).
void* operator new(size_t bytes) { return ppsim::Allocate(bytes); }
void* operator new[](size_t bytes) { return ppsim::Allocate(bytes); }
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  return ppsim::AllocateNoThrow(bytes);
}
void* operator new[](size_t bytes, const std::nothrow_t&) noexcept {
  return ppsim::AllocateNoThrow(bytes);
}
void operator delete(void* p) noexcept { ppsim::Deallocate(p); }
void operator delete[](void* p) noexcept { ppsim::Deallocate(p); }
void operator delete(void* p, size_t) noexcept { ppsim::Deallocate(p); }
void operator delete[](void* p, size_t) noexcept { ppsim::Deallocate(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { ppsim::Deallocate(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { ppsim::Deallocate(p); }

#endif
