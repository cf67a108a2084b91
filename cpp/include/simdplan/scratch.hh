// simdplan/scratch.hh: the 64-byte aligned start of a caller-owned scratch buffer for the kernels.
//
// Kernels take scratch from their callers (they never allocate); callers size a std::vector<float>
// with 16 floats to spare and hand the kernels its first 64-byte aligned float. ISA-neutral
// translation units only (it is not in the per-ISA namespace; see simdplan/config.hh).
#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace simdplan {

inline float* aligned_scratch(std::vector<float>& v) {
  auto addr = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<float*>((addr + 63) & ~uintptr_t(63));
}

// An allocator whose resize leaves new elements default-initialised (for floats and ints: not
// written), for growing row buffers every element of which is written before it is read.
// PERF: certified Link's per-plan buffers (sample rows, clearance blocks) grew by value-initialising
// resizes; grown without zeroing, certified plan + simplification of six easy ur5 problems ran 2.5%
// fewer instructions (callgrind, AVX2).
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(args)...);
  }
};

template <class T>
using GrowBuffer = std::vector<T, NoInitAllocator<T>>;

}  // namespace simdplan
