// An allocator that backs large arrays with 2 MiB pages where the kernel
// allows it (transparent huge pages in "madvise" mode, Debian's default).
//
// The index reads its page records, due-time queue and host table at random.
// With 4 KiB pages the TLB covers a few MiB, so once a shard holds ~10^5
// pages nearly every such read also walks the page tables; at 10^7 pages the
// records alone are 400 MB. 2 MiB pages let the TLB cover them.
//
// Arrays under 2 MiB come from the ordinary heap. Larger ones are mapped
// from a 2 MiB boundary and marked MADV_HUGEPAGE. The mapping ends at the
// array's last 4 KiB page, so the part past its last whole 2 MiB stays on
// small pages and nothing is allocated beyond the array (the index keeps
// within 64 bytes a page); where the kernel has no huge page to give, the
// rest stays on small pages too.
#ifndef RECRAWL_SHARD_INDEX_HUGE_PAGE_ALLOCATOR_H_
#define RECRAWL_SHARD_INDEX_HUGE_PAGE_ALLOCATOR_H_

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace recrawl {
namespace shard {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
inline constexpr size_t kSmallPageBytes = size_t{4} << 10;

// `bytes` rounded up to whole 4 KiB pages: what a mapping of it takes.
inline size_t MappedBytes(size_t bytes) {
  return (bytes + kSmallPageBytes - 1) & ~(kSmallPageBytes - 1);
}

// Maps `bytes` (a multiple of kSmallPageBytes) at a 2 MiB boundary.
inline void* MapHugePages(size_t bytes) {
  const size_t padded = bytes + kHugePageBytes;
  void* raw = mmap(nullptr, padded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  // Give back the unaligned head and the tail beyond `bytes`.
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = aligned + bytes;
  if (start + padded > end) munmap(reinterpret_cast<void*>(end), start + padded - end);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, bytes, MADV_HUGEPAGE);  // advice: failure leaves small pages
  return p;
}

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) return std::allocator<T>().allocate(n);
    return static_cast<T*>(MapHugePages(MappedBytes(bytes)));
  }

  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) {
      std::allocator<T>().deallocate(p, n);
    } else {
      munmap(p, MappedBytes(bytes));
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }
};

template <typename T>
using HugePageVector = std::vector<T, HugePageAllocator<T>>;

// What a HugePageVector holds in memory. A small array is on the heap,
// all of its capacity. A large one is mapped, and a page of the mapping
// takes memory only once written: its elements (std::vector writes each one
// it constructs), rounded up to the 2 MiB page the last of them is on;
// capacity beyond them is address space only.
template <typename T>
size_t AllocatedBytes(const HugePageVector<T>& v) {
  const size_t bytes = v.capacity() * sizeof(T);
  if (bytes < kHugePageBytes) return bytes;
  const size_t used = v.size() * sizeof(T);
  return std::min(MappedBytes(bytes), (used + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
}

// Address space a mapped array has beyond its elements: where it will
// write next.
struct MemoryRange {
  char* begin = nullptr;
  size_t bytes = 0;
};

// The capacity of `v` beyond its elements, or an empty range for a small
// array (on the heap, whose memory it already has).
template <typename T>
MemoryRange SpareCapacity(HugePageVector<T>& v) {
  const size_t bytes = v.capacity() * sizeof(T);
  if (bytes < kHugePageBytes) return {};
  const size_t used = v.size() * sizeof(T);
  return {reinterpret_cast<char*>(v.data()) + used, MappedBytes(bytes) - used};
}

// The whole 4 KiB pages of `range`.
inline MemoryRange WholePages(MemoryRange range) {
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(range.begin) + kSmallPageBytes - 1) & ~(kSmallPageBytes - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(range.begin) + range.bytes) & ~(kSmallPageBytes - 1);
  if (end <= begin) return {};
  return {reinterpret_cast<char*>(begin), end - begin};
}

// Backs the whole pages of `range` with (zeroed) memory now, so that the
// array's first writes there do not fault (MADV_POPULATE_WRITE, Linux 5.14
// on). The kernel's zeroing of new memory is most of what first writes
// cost on a VM; done here on another thread, it is off the writer's path.
// False where the kernel cannot (the writes then fault as before). The
// range must be of a live mapping (SpareCapacity of an array that neither
// grows nor goes before this returns); it may be written meanwhile.
inline bool Populate(MemoryRange range) {
#ifdef MADV_POPULATE_WRITE
  const MemoryRange pages = WholePages(range);
  if (pages.bytes == 0) return true;
  return madvise(pages.begin, pages.bytes, MADV_POPULATE_WRITE) == 0;
#else
  return false;
#endif
}

// Gives back the memory of the whole pages of `range`, which must hold no
// elements (SpareCapacity): they take none until written again, and read
// as zeros.
inline void Release(MemoryRange range) {
  const MemoryRange pages = WholePages(range);
  if (pages.bytes > 0) madvise(pages.begin, pages.bytes, MADV_DONTNEED);
}

// Populates `ranges` a `1 / steps`-th of each in turn, in the order arrays
// filled side by side (a page per URL in each) are written, so that the
// writer finds memory ahead in all of them. Stops at the first part the
// kernel does not populate, and returns false then.
inline bool PopulateInTurn(const std::vector<MemoryRange>& ranges, int steps) {
  for (int k = 0; k < steps; ++k) {
    for (const MemoryRange& r : ranges) {
      const size_t begin = r.bytes * k / steps;
      const size_t end = r.bytes * (k + 1) / steps;
      if (!Populate({r.begin + begin, end - begin})) return false;
    }
  }
  return true;
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_HUGE_PAGE_ALLOCATOR_H_
