// strided.hh: a read-only view of float64 joint values with NumPy strides, so the bindings can pass
// any (n, dof) array to the core without a copy and without seeing the rest of the core.
#pragma once
#include <cstdint>

namespace simdplan {

struct Strided {
  const double* data;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // in elements
};

}  // namespace simdplan
