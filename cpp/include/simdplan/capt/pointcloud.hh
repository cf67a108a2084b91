// simdplan/capt/pointcloud.hh: point-cloud tools behind simdplan.collision.pointcloud (ISA-neutral).
//
// Points are n x 3 float64 row-major, metres. Distances are compared squared and evaluated exactly
// as d2 = (dx*dx + dy*dy) + dz*dz in float64 with no fused multiply-add (the file is compiled with
// -ffp-contract=off), so the results equal a NumPy brute force written the same way, bit for bit.
// Include only from ISA-neutral translation units (see simdplan/config.hh).
#pragma once
#include <cstdint>
#include <vector>

namespace simdplan::pointcloud {

// All index pairs (i < j) with d2(i, j) < tol * tol, flattened [i0, j0, i1, j1, ...] and sorted
// lexicographically. Uniform grid of cells at least tol wide; each cell is compared with itself and
// its 13 following neighbours. tol > 0 and finite; points finite (the caller checks).
std::vector<int64_t> close_pairs(const double* xyz, int64_t n, double tol);

struct Crop {
  bool use_box = false;
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // kept iff lo <= p <= hi on every axis
  bool use_range = false;
  double origin[3] = {0, 0, 0};
  double max_range = 0;  // kept iff d2(p, origin) <= max_range^2
};

// Indices (increasing) of the points kept by cropping and then greedy thinning in input order: a
// point is kept iff no point kept before it has d2 < min_dist^2. Hence no two kept points have
// d2 < min_dist^2, and every cropped-in point that was thinned away has a kept point with
// d2 < min_dist^2. min_dist = 0 keeps every cropped-in point.
// With max_abs non-null, thin first checks the points (one pass, shared with the bounds when not
// cropping): if a coordinate is not finite or |coordinate| > *max_abs it returns {} at once and
// sets *max_abs to -1; else *max_abs is left as it was.
std::vector<int64_t> thin(const double* xyz, int64_t n, double min_dist, const Crop& crop, double* max_abs = nullptr);

}  // namespace simdplan::pointcloud
