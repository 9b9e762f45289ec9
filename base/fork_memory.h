// Memory laid out for a process that forks many short-lived jobs (batch/process_pool.h: a
// sweep's points, a search's candidates), each of which lives a few milliseconds and exits.
//
// Why: a fork copies an entry for each 4 KiB page of the parent's private memory, the exit tears
// them down again, and each page the job touches afterwards costs a fault (about 2 µs here). On a
// sweep of small points that was half of the machine's time: the job processes inherit the
// sweep's checked runs (tens of MiB) and allocated into the inherited heap, where every block
// handed out is a copy-on-write or a fresh page. Two measures:
//
// - CollapseForForking: before the first fork, the process's anonymous memory (its heap and
//   malloc's arenas) is laid out in 2 MiB pages (Linux 6.1's MADV_COLLAPSE), so that a fork and an
//   exit handle one entry for 2 MiB instead of 512 (mappings of at most 4 GiB).
// - UseJobHeap: a forked process's C++ allocations (operator new and delete, in the thread that
//   calls it) come from a fresh region of its own, faulted 2 MiB at a time where the system
//   allows transparent huge pages ("madvise" or "always"), handed out in size classes with no
//   merging; the inherited memory stays untouched (and its huge pages whole).
//
// The job heap never returns memory to the system (freed blocks are reused for their size class;
// a run's peak memory is about a quarter higher than with malloc), blocks of more than 256 KiB
// and over-aligned ones come from malloc as before, and other threads' allocations are untouched
// (a job-heap block freed by another thread is left alone). Both are advice: where the system
// cannot, nothing changes; where reserved memory counts against a commit limit
// (vm.overcommit_memory = 2), there is no job heap. Built with AddressSanitizer, both do nothing:
// the sanitizer sees every allocation, and its own allocator and shadow have nothing to gain.
#ifndef PPSIM_BASE_FORK_MEMORY_H_
#define PPSIM_BASE_FORK_MEMORY_H_

namespace ppsim {

// Lays this process's private anonymous memory out in 2 MiB pages where it can (each 2 MiB range
// at least half in memory). Costs a copy of that memory (a sweep's 22 MiB: 18 ms here): call it
// once before forking many processes, when no other thread runs.
void CollapseForForking();

// From now on, this thread's operator new allocates from this process's job heap (reserved on the
// first call in each process: a process forked from one that used a job heap gets a fresh one,
// and never writes into the one it inherited). Call it right after a fork, before allocating.
void UseJobHeap();

// Whether this thread allocates from the job heap.
bool UsingJobHeap();

// Whether p points into this process's job heap (false before UseJobHeap).
bool InJobHeap(const void* p);

}  // namespace ppsim

#endif  // PPSIM_BASE_FORK_MEMORY_H_
