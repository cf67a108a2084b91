// distance_floor.hh: builds a point cloud's distance floor grid (the layout and the bound it gives
// are in capt/nearest_view.hh, the use in capt/nearest_tree.hh). Private to cpp/src/capt/.
#pragma once
#include <cstdint>

#include "simdplan/capt/nearest_tree.hh"

namespace simdplan::capt {

struct DistanceFloor {
  AlignedArray<uint8_t> cells;  // cell values, then 3 zero bytes (the SIMD gathers read 4 bytes)
  int32_t n[3] = {0, 0, 0};
  float lo[3] = {0, 0, 0};
  float inv = 0, step = 0, slack = 0;
  double cell = 0;  // cell side, metres (1 / inv)
};

// The grid of m >= 1 finite points (xyz, m x 3 float32 row-major) with AABB [lo, hi], in at most
// max_cells cells (cells.size() == 0: no grid, for clouds too wide for float32 cell arithmetic).
DistanceFloor build_distance_floor(const float* xyz, int64_t m, const float lo[3], const float hi[3],
                                   int64_t max_cells);

}  // namespace simdplan::capt
