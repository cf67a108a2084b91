// simdplan/gjk/hull_view.hh: a built convex hull as flat arrays (ISA-neutral POD).
//
// Built once by simdplan::gjk::Hull (gjk/hull.hh, cpp/src/gjk/hull.cc) from the hull's vertices, their
// adjacency and the boundary triangles; read by the per-ISA support and GJK templates
// (gjk/support.hh, gjk/gjk.hh) through this view, never copied per query. All coordinates are in
// the hull's own (local) frame, metres; a query brings its pose.
//
// Layout:
//   x, y, z     the n vertices as structure of arrays (float32), padded to n_padded (a multiple
//               of kHullPad) with copies of vertex 0, so whole vectors can be loaded at any block.
//   adj_begin, adj   plain adjacency, CSR: the neighbours of v are adj[adj_begin[v] .. adj_begin[v+1]).
//   lines       the packed layout (Greer, "Memory Optimization for Convex Hull Support Point
//               Queries", arXiv:2509.03753): one 64-byte, 64-byte aligned HullLine per vertex,
//               line v = vertex v, holding its xyz (float32, the same values as x/y/z) and 26
//               uint16 slots: slot 0 is a header, r = bits 0-4 real neighbours, a = bits 5-9
//               artificial neighbours, bit 15 = linked; slots 1..r name the real neighbours
//               (every edge of the vertex), slots r+1..r+a the artificial ones: farther vertices,
//               supports of directions tilted from the vertex normal (hull.cc), which let a climb
//               jump. A vertex with more than 25 neighbours continues in further lines, linked
//               by slot 25 (lines n .. n_lines-1; they repeat the owner's xyz; only the last line
//               of a vertex carries artificial edges). Extra edges never break hill climbing: a
//               superset of the edge graph keeps every non-maximal vertex joined to a better one.
//               A climb near its goal (GJK's warm starts) reads the real slots only.
//               lines == nullptr when the packed layout was not built: slots address lines with
//               16 bits, so it needs n_lines <= 65535 (about 65k vertices); bigger hulls use the
//               plain layout. The array holds one spare line after the last (whole-vector loads).
//   extreme     the vertices of smallest and largest x, y, z: the six warm starts of hill climbing.
//   face_plane  n_faces x 4 doubles: outward unit normal nx, ny, nz and offset h of every boundary
//               triangle (inside: n . p <= h); for the depth of a query inside the hull.
//   plane_soa   the same rounded to float32 as structure of arrays (gjk/gjk.hh's point depth scans
//               them W at a time and re-evaluates in double only the triangles that may be least).
//   edge        n_edges x 4 int32: the two vertices and the two triangles of every boundary edge;
//               for the depth of a segment that crosses the hull.
//
// Support values are computed as (x * dx + y * dy) + z * dz in float32, unfused and in this order,
// by every method and ISA (the kernels are compiled with -ffp-contract=off), so they equal NumPy's
// float32 (v[:, 0] * d[0] + v[:, 1] * d[1]) + v[:, 2] * d[2] bit for bit.
#pragma once
#include <cstdint>

namespace simdplan {

constexpr int32_t kHullPad = 32;           // two of the widest vectors, in floats
constexpr int32_t kHullLineSlots = 26;     // (64 - 12) / 2: a header and 25 neighbour slots
constexpr uint16_t kHullLineLinked = 0x8000;
constexpr int kHullLineArtShift = 5;
constexpr int32_t kHullMaxLines = 0xFFFF;  // lines 0 .. 65534 (and the spare) fit uint16 slots
// Artificial edges per vertex by default (at most the spare slots), on hulls of at least
// kHullArtificialFrom vertices (smaller ones get none by default). PERF: see cpp/src/gjk/hull.cc.
constexpr int32_t kHullDefaultArtificial = 8;
constexpr int32_t kHullArtificialFrom = 2000;

// Support method; kSupportAuto is resolved by the kernels per ISA and hull size (gjk_kernels.hh).
enum SupportMethod : int32_t { kSupportAuto = -1, kSupportBrute = 0, kSupportPlain = 1, kSupportPacked = 2 };

struct alignas(64) HullLine {
  float x, y, z;
  uint16_t slot[kHullLineSlots];
};
static_assert(sizeof(HullLine) == 64, "one vertex and its neighbours fill exactly one cache line");

struct HullView {
  int32_t n;                 // vertices
  int32_t n_padded;          // length of x, y, z (multiple of kHullPad)
  const float* x;
  const float* y;
  const float* z;
  const int32_t* adj_begin;  // n + 1
  const int32_t* adj;        // adj_begin[n] neighbour indices
  const HullLine* lines;     // n_lines packed lines, or nullptr
  int32_t n_lines;
  int32_t extreme[6];        // argmin x, argmax x, argmin y, argmax y, argmin z, argmax z
  float abs_max[3];          // largest |x|, |y|, |z| over the vertices (rounding bounds)
  int32_t n_faces;
  const double* face_plane;  // n_faces x 4
  const float* plane_soa;    // the same planes in float32, 4 arrays (nx, ny, nz, h) of n_faces_padded
                             // (pad: n = 0, h = +inf), for a vector pre-pass of the depth
  int32_t n_faces_padded;    // multiple of kHullPad
  int32_t n_edges;
  const int32_t* edge;       // n_edges x 4: v0, v1, face0, face1
  double centroid[3];        // mean of the vertices (strictly inside a non-flat hull)
  double scale;              // largest |coordinate| of a vertex (tolerances scale with it)
  double reflex_defect;      // largest distance of a triangle's far corner outside its neighbour's plane
};

}  // namespace simdplan
