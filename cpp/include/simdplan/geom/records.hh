// simdplan/geom/records.hh: the flat float32 record of each obstacle kind with a closed-form test
// (ISA-neutral PODs). World frame, metres.
//
// Environments store these records in float arrays, one per kind (collision/environment_view.hh),
// which the kernels read through these types (record_as). The static_asserts pin each layout: the
// Python builder writes the same floats in the same order (simdplan.collision.environment
// Obstacle.record) and reads each record's size from the core (_core.obstacle_record_floats), so a
// layout change shows up here, in the tests and nowhere else.
#pragma once
#include <type_traits>

namespace simdplan::geom {

// The obstacle is the ball |p - center| <= radius.
struct Sphere {
  float center[3];
  float radius;
};

// The points within `radius` of the segment center +- half_length * axis (axis a unit vector).
struct Capsule {
  float center[3];
  float axis[3];
  float half_length;
  float radius;
};

// Solid cylinder with flat caps: radial distance from the axis <= radius, |axial| <= half_length.
struct Cylinder {
  float center[3];
  float axis[3];
  float half_length;
  float radius;
};

// Oriented box: axes[k] is the box's local k axis as a unit world vector (the columns of its
// rotation); |(p - center) . axes[k]| <= half[k]. One pad float keeps the record 16 floats.
struct Box {
  float center[3];
  float axes[3][3];
  float half[3];
  float pad;
};

// Half-space {p : normal . p <= offset}; the unit normal points into free space.
struct Plane {
  float normal[3];
  float offset;
};

template <class Record>
inline constexpr int kRecordFloats = int(sizeof(Record) / sizeof(float));

// The kernels view float arrays as these records: that is sound only for standard-layout structs
// of floats without padding.
template <class Record>
constexpr bool is_float_record() {
  return std::is_standard_layout_v<Record> && std::is_trivially_copyable_v<Record> &&
         alignof(Record) == alignof(float) && sizeof(Record) % sizeof(float) == 0;
}
static_assert(is_float_record<Sphere>() && kRecordFloats<Sphere> == 4, "sphere record: x y z r");
static_assert(is_float_record<Capsule>() && kRecordFloats<Capsule> == 8, "capsule record: x y z ax ay az hl r");
static_assert(is_float_record<Cylinder>() && kRecordFloats<Cylinder> == 8, "cylinder record: x y z ax ay az hl r");
static_assert(is_float_record<Box>() && kRecordFloats<Box> == 16, "box record: x y z axes(3x3) hx hy hz pad");
static_assert(is_float_record<Plane>() && kRecordFloats<Plane> == 4, "plane record: nx ny nz d");

// The record at `floats` (the first float of a record of that type in an environment's array).
template <class Record>
const Record& record_as(const float* floats) {
  return *reinterpret_cast<const Record*>(floats);
}

}  // namespace simdplan::geom
