// simdplan/bvh/bvh_view.hh: a built AABB tree and a triangle mesh over it, as flat arrays (ISA-neutral PODs).
//
// Built once by simdplan::bvh::Bvh / bvh::TriMesh (bvh/bvh.hh, src/bvh/bvh.cc), read by the per-ISA
// query templates (bvh/bvh_query.hh) through these views, never copied per query. World frame,
// metres, float32.
//
// BvhView, n elements (n >= 0):
//   node   2n - 1 BvhNode (none for n = 0) in depth-first preorder: node 0 is the root, an inner
//          node's left child is the next node and its right child follows the left subtree
//          (a subtree over m elements is 2m - 1 consecutive nodes). Every leaf holds one element.
//          A node's box is the exact union (float min / max) of its elements' boxes.
//   order  n int32: slot -> element. Leaves are numbered 0..n-1 left to right ("slots"); a leaf
//          stores its slot, order[slot] is the element's index in the build input. Per-element
//          payloads (the triangle records below) are stored in slot order, so leaves that are
//          neighbours in the tree are neighbours in memory.
//
// Node layout: array of structures, 32 bytes per node (lo xyz, left, hi xyz, right), two nodes per
// 64-byte line. NOTE: AoS, not SoA: a binary tree is walked one node (or one pair of siblings) at a
// time, and AoS brings a node's six bounds and its child index in one line; with the preorder
// numbering the left child is the next 32 bytes, usually in the same or the next line. SoA pays
// off only when one test reads many nodes at once (a wide BVH), which a binary tree never does.
//
// TriMeshView: a BvhView over the triangles' AABBs plus one kTriStride-float record per triangle in
// slot order (layout in geom/sphere_triangle.hh), and the absolute slack that keeps box tests
// conservative with respect to the float32 triangle test (bvh/bvh_query.hh explains the bound).
#pragma once
#include <cstdint>

namespace simdplan {

struct alignas(32) BvhNode {
  float lo[3];
  int32_t left;   // inner: index of the left child (always this node + 1); leaf: -1
  float hi[3];
  int32_t right;  // inner: index of the right child; leaf: the element's slot
};
static_assert(sizeof(BvhNode) == 32, "two nodes per cache line");

struct BvhView {
  int32_t nodes;          // 2 * elements - 1; 0 for an empty tree
  int32_t elements;       // n
  const BvhNode* node;    // nodes, preorder, 64-byte aligned
  const int32_t* order;   // elements: slot -> input element index
};

// floats per triangle record (geom/sphere_triangle.hh); 128 bytes, two cache lines
constexpr int32_t kTriStride = 32;

struct TriMeshView {
  BvhView bvh;            // over the triangles' AABBs; elements = triangles
  const float* tri;       // bvh.elements * kTriStride floats, slot order, 64-byte aligned
  float slack;            // metres: box tests inflate the query radius by this (see bvh_query.hh)
  int32_t reserved;       // 0
};

}  // namespace simdplan
