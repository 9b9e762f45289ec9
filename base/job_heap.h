// A job's process allocates from a heap of its own: the C++ allocations (operator new and delete)
// of the thread that calls UseJobHeap, from then on, come from one fresh region of memory laid
// out in huge pages where the system allows them (transparent huge pages, "madvise" or
// "always"), instead of the heap the process inherited from the one that forked it.
//
// Why: a sweep's or a search's point runs in a process forked from a warm worker (batch/
// process_pool.h), lives a few milliseconds and exits. Its allocations from the inherited heap
// each touch a fresh 4 KiB page or a copy-on-write one, and a page fault here costs about 2 µs:
// a third of a small point's time went to faults, the heap's bookkeeping and tearing the pages
// down. A region of its own, faulted 2 MiB at a time and handed out in size classes with no
// merging, costs a fraction of that, and the process's exit frees it at once.
//
// The heap never returns memory to the system (the process is short-lived; freed blocks are
// reused for their size class), blocks of more than 256 KiB and over-aligned ones come from
// malloc as before, and allocations of other threads are untouched (memory of the job heap freed
// by another thread is left alone). When the region cannot be reserved, nothing changes. Built
// with AddressSanitizer, UseJobHeap does nothing, so that the sanitizer sees every allocation.
#ifndef PPSIM_BASE_JOB_HEAP_H_
#define PPSIM_BASE_JOB_HEAP_H_

namespace ppsim {

// From now on, this thread's operator new allocates from the job heap (reserved on the first
// call). Call it in a job's process right after the fork, before the job allocates; never in a
// process that keeps running (the heap does not give memory back).
void UseJobHeap();

// Whether this thread allocates from the job heap.
bool UsingJobHeap();

// Whether p points into the job heap's region (false before UseJobHeap).
bool InJobHeap(const void* p);

}  // namespace ppsim

#endif  // PPSIM_BASE_JOB_HEAP_H_
