// simdplan/collision/environment_view.hh: the obstacle set as flat float arrays (ISA-neutral POD).
//
// World frame, metres. One array per shape kind, one fixed-size record per obstacle; the layouts
// are documented beside each shape-pair test in simdplan/geom/. Filled by the Python
// simdplan.collision.Environment builder, which validates every number before it gets here.
// Each kind also has a world AABB per obstacle (6 floats: min x y z, max x y z; rounded outward,
// +-inf for planes that are not axis-aligned), a cheap conservative pre-filter.
#pragma once
#include <cstdint>

namespace simdplan {

constexpr int kSphereFloats = 4;    // x y z r
constexpr int kCapsuleFloats = 8;   // x y z ax ay az half_length radius
constexpr int kCylinderFloats = 8;  // x y z ax ay az half_length radius
constexpr int kBoxFloats = 16;      // x y z ux(3) uy(3) uz(3) hx hy hz pad
constexpr int kPlaneFloats = 4;     // nx ny nz d

constexpr int kAabbFloats = 6;

struct EnvironmentView {
  int32_t n_spheres;
  const float* spheres;
  const float* sphere_aabbs;
  int32_t n_capsules;
  const float* capsules;
  const float* capsule_aabbs;
  int32_t n_cylinders;
  const float* cylinders;
  const float* cylinder_aabbs;
  int32_t n_boxes;
  const float* boxes;
  const float* box_aabbs;
  int32_t n_planes;
  const float* planes;
  const float* plane_aabbs;
};

}  // namespace simdplan
