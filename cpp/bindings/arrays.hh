// arrays.hh: every ndarray check of the bindings in one place.
//
// Inputs are float64 NumPy arrays of any strides (the Python facades convert other dtypes first);
// they are read through their strides, never assumed contiguous. Outputs are fresh NumPy arrays
// owned by a capsule.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kin/strided.hh"

namespace simdplan::bind {

namespace nb = nanobind;
using InArray = nb::ndarray<const double, nb::device::cpu>;
using FloatIn = nb::ndarray<const float, nb::device::cpu>;

// True if lo <= x[i] <= hi for every i < n (so no NaN): the branch-free test of contiguous float32
// inputs, four at a time; callers word the error in a second loop only when it fails. Still a
// separate pass over the inputs: where the query itself costs a few ns per row (CAPT), the kernels
// check what they load instead (capt/capt_kernels.hh).
inline bool all_within(const float* x, int64_t n, float lo, float hi) {
  typedef float F4 __attribute__((vector_size(16)));
  typedef int32_t I4 __attribute__((vector_size(16)));
  I4 acc = I4{} - 1;
  const F4 l = F4{} + lo, h = F4{} + hi;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    F4 v;
    std::memcpy(&v, x + i, sizeof v);
    acc &= (v >= l) & (v <= h);
  }
  bool ok = (acc[0] & acc[1] & acc[2] & acc[3]) != 0;
  for (; i < n; ++i) ok &= (x[i] >= lo) & (x[i] <= hi);
  return ok;
}

// True if every float of x[0..n) is finite.
inline bool all_finite(const float* x, int64_t n) {
  return all_within(x, n, -std::numeric_limits<float>::max(), std::numeric_limits<float>::max());
}

// A (dof,) joint vector, as a 1 x dof Strided.
inline Strided as_vector(const InArray& a, int64_t dof, const char* name) {
  if (a.ndim() != 1 || int64_t(a.shape(0)) != dof)
    throw std::invalid_argument(std::string(name) + " must have shape (" + std::to_string(dof) + ",), got " +
                                (a.ndim() == 1 ? "(" + std::to_string(a.shape(0)) + ",)" : std::to_string(a.ndim()) + " dimensions"));
  return {a.data(), 1, dof, 0, a.ndim() ? int64_t(a.stride(0)) : 1};
}

// An (n, dof) batch of joint vectors.
inline Strided as_batch(const InArray& a, int64_t dof, const char* name) {
  if (a.ndim() != 2 || int64_t(a.shape(1)) != dof)
    throw std::invalid_argument(std::string(name) + " must have shape (n, " + std::to_string(dof) + ")");
  return {a.data(), int64_t(a.shape(0)), dof, int64_t(a.stride(0)), int64_t(a.stride(1))};
}

// Copies a float32 array of any shape and strides into a flat vector (C order).
inline std::vector<float> to_vector(const FloatIn& a) {
  std::vector<float> out;
  size_t n = 1;
  for (size_t d = 0; d < a.ndim(); ++d) n *= a.shape(d);
  out.reserve(n);
  std::vector<size_t> idx(a.ndim(), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < a.ndim(); ++d) off += int64_t(idx[d]) * a.stride(d);
    out.push_back(a.data()[off]);
    for (size_t d = a.ndim(); d-- > 0;) {
      if (++idx[d] < a.shape(d)) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Copies a 1-D array of any element type and stride (ints, doubles, bytes) into a vector.
template <class T>
std::vector<T> to_vector_1d(const nb::ndarray<const T, nb::ndim<1>, nb::device::cpu>& a) {
  std::vector<T> out(a.shape(0));
  for (size_t i = 0; i < a.shape(0); ++i) out[i] = a.data()[i * a.stride(0)];
  return out;
}

template <class T, size_t N>
nb::ndarray<nb::numpy, T> new_array(const size_t (&shape)[N], T** data) {
  size_t n = 1;
  for (size_t s : shape) n *= s;
  T* buf = new T[n > 0 ? n : 1]();
  nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  *data = buf;
  return nb::ndarray<nb::numpy, T>(buf, N, shape, owner);
}

}  // namespace simdplan::bind
