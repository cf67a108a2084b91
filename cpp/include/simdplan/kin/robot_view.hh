// simdplan/kin/robot_view.hh: the compiled robot as flat arrays (ISA-neutral POD, no code).
//
// The Python side (simdplan.robots) turns a URDF into this "kinematic program":
// - bodies in topological order (parent before child). A body is a set of links joined rigidly;
//   its frame is the child frame of the movable joint that starts it, rotated so that the joint
//   axis is local +z. Body 0 is the root (its origin is the robot's base pose in the world).
//   T_body = T_parent * origin * Jz(value), value = scale * q[dof] + offset (mimic joints use
//   scale/offset), Jz a rotation about z (revolute) or a translation along z (prismatic).
// - groups: the spheres of one URDF link, in body order, each with a bounding sphere in the
//   body frame. Environment checks test the bound first (a body with several groups: its own bound
//   before theirs); self-collision pairs are group pairs.
// - spheres: centre (body frame) and radius, metres; 4 floats each, grouped by group.
// - pairs: group pairs (a < b) checked for self-collision, sorted by b; pair_begin[g] ..
//   pair_begin[g+1] are the pairs whose later group is g. Pairs a few joints apart may carry the
//   list of their sphere pairs that can touch at all (certified over the joint limits).
// - sphere_soa: the same spheres as four arrays (x, y, z, r), each n_spheres + 16 floats long
//   (zero-padded), for kernels that put spheres, not configurations, in the lanes.
// Origins are row-major 3 x 4 [R | t] (12 floats). All lengths in metres, angles in radians.
#pragma once
#include <cstdint>

namespace simdplan {

constexpr int32_t kSoaPad = 16;  // widest vector, so a full-width load past the last sphere stays in bounds

enum BodyKind : int32_t { kBodyFixed = 0, kBodyRevolute = 1, kBodyPrismatic = 2 };

// body_axes[b]: kAxesGeneral when the rotation of body b's origin is general; kAxesPermutation when
// it is a signed permutation (every column j holds one entry, exactly +-1, in row k_j; URDF frames
// turned by multiples of 90 degrees, the common case), described by body_perm and body_sign.
// fk_body then copies parent columns instead of multiplying by the rotation: bit-identical results.
constexpr int32_t kAxesGeneral = -1;
constexpr int32_t kAxesPermutation = 0;

// A generated kernel's frame computation (collision/lane_scratch.hh, LaneScratch::frames_of): the
// LaneScratch of the caller's vector type and a body; ISA-neutral so kernel tables can carry it.
using FramesOf = void (*)(const void* lane_scratch, int32_t body);

struct RobotView {
  int32_t dof;
  int32_t n_bodies;
  const int32_t* body_parent;  // -1 for the root
  const int32_t* body_kind;    // BodyKind
  const int32_t* body_dof;     // index into q, -1 for fixed bodies
  const float* body_scale;
  const float* body_offset;
  const float* body_origin;  // 12 per body
  const int32_t* body_axes;  // per body: kAxesGeneral or kAxesPermutation (above)
  // a signed-permutation origin, 4 per body: body_perm the rows k_0, k_1, k_2 and the translation
  // bits (bit r: row r not zero), body_sign the signs of columns 0, 1, 2 (+-1) and an unused 1
  const int32_t* body_perm;
  const float* body_sign;
  int32_t n_groups;
  int32_t n_static_groups;  // groups 0 .. n_static_groups - 1 are body 0's: no joint moves them
  const int32_t* group_body;
  const int32_t* group_begin;  // sphere index range [begin, end)
  const int32_t* group_end;
  const float* group_bound;  // 4 per group: centre (body frame), radius
  // Per body: a bounding sphere (body frame centre, radius) of its groups' bounds when the body
  // carries two or more groups, radius 0 otherwise; its groups are body_group_begin[b] ..
  // body_group_end[b] - 1. The environment test may meet this bound first, while doing so pays
  // (collision/validity.hh, body_test_pays); pair blocks use it too.
  const float* body_bound;
  const int32_t* body_group_begin;
  const int32_t* body_group_end;
  int32_t n_spheres;
  const float* spheres;  // 4 per sphere: centre (body frame), radius
  const float* sphere_soa;  // 4 x (n_spheres + kSoaPad): x..., y..., z..., r...
  int32_t n_pairs;
  const int32_t* pairs;       // 2 per pair
  const int32_t* pair_begin;  // n_groups + 1 entries
  // Certified sphere pairs (robots/self_collision.py): for pair p, sphere_pairs[2k], [2k+1] for k in
  // pair_ranges[2p] .. pair_ranges[2p+1] are the only sphere pairs of its groups that can come within
  // 2 * list_max_padding of touching inside the joint limits; pair_ranges[2p] == -1: not certified.
  const int32_t* pair_ranges;
  const int32_t* sphere_pairs;
  float list_max_padding;
  // The pairs again, in blocks of pairs between the same two bodies: block k holds pairs
  // pair_order[pair_block_begin[k] .. pair_block_begin[k + 1] - 1]. pair_block_side[2k], [2k + 1]
  // name a sphere around every group of each side of the block: g >= 0 the bound of group g, -1 - b
  // the bound of body b. The self-collision test meets a block's two spheres before its pairs.
  int32_t n_pair_blocks;
  const int32_t* pair_block_begin;  // n_pair_blocks + 1 entries
  const int32_t* pair_order;        // n_pairs entries
  const int32_t* pair_block_side;   // 2 per block
  // Motion bounds (robots/motion_bound.py, collision/certified_link.hh), n_bodies columns each:
  // sphere_reach[i * n_bodies + b] bounds the distance of sphere i's centre from the joint axis of
  // body b over every configuration (1 for a prismatic body, 0 where b does not move sphere i), so
  // a joint-space step moves the centre along a path no longer than sum_b |scale_b dq_b| reach.
  // group_reach: the maximum over a group's spheres; pair_reach[p]: the sum of both groups'
  // reaches over the bodies that move them relative to each other (those below their common
  // ancestor), which bounds how fast the pair's distance can change.
  const float* sphere_reach;
  const float* group_reach;
  const float* pair_reach;
  // pair_list_reach[p]: the same sum over only the certified sphere pairs of pair p (pair_ranges),
  // the relative speed that matters while padding <= list_max_padding; pair_reach where p has no list.
  const float* pair_list_reach;
  // Per pair block, n_bodies columns: the largest pair_reach (block_reach) and pair_list_reach
  // (block_list_reach) of its pairs, one bound for the whole block (collision/discrete_link.hh, edge_far).
  const float* block_reach;
  const float* block_list_reach;
  // 1: discrete Link skips, in an edge's later chunks of samples, the tests its first chunk proved
  // far (collision/discrete_link.hh, edge_far); 0 (no fast paths): every chunk runs every test
  int32_t far_skip;
};

}  // namespace simdplan
