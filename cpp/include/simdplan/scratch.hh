// simdplan/scratch.hh: the 64-byte aligned start of a caller-owned scratch buffer for the kernels.
//
// Kernels take scratch from their callers (they never allocate); callers size a std::vector<float>
// with 16 floats to spare and hand the kernels its first 64-byte aligned float. ISA-neutral
// translation units only (it is not in the per-ISA namespace; see simdplan/config.hh).
#pragma once
#include <cstdint>
#include <vector>

namespace simdplan {

inline float* aligned_scratch(std::vector<float>& v) {
  auto addr = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<float*>((addr + 63) & ~uintptr_t(63));
}

}  // namespace simdplan
