#include "base/job_heap.h"

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

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
  char* begin = nullptr;
  char* next = nullptr;
  char* end = nullptr;
  FreeBlock* free[kClasses] = {};

  bool Holds(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= begin && c < end;
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
  std::free(p);
}

#endif

}  // namespace

void UseJobHeap() {
#if !defined(__SANITIZE_ADDRESS__)
  if (g_heap.begin == nullptr) {
    void* region = ::mmap(nullptr, kReserveBytes + kHugePageBytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return;
    const uintptr_t at = (reinterpret_cast<uintptr_t>(region) + kHugePageBytes - 1) &
                         ~(uintptr_t{kHugePageBytes} - 1);
    char* begin = reinterpret_cast<char*>(at);
    // Advice only: without transparent huge pages the region is faulted 4 KiB at a time.
    ::madvise(begin, kReserveBytes, MADV_HUGEPAGE);
    g_heap.begin = begin;
    g_heap.next = begin;
    g_heap.end = begin + kReserveBytes;
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
