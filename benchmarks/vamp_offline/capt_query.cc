// capt_query.cc: VAMP's own CAPT (vamp/collision/capt.hh), built and queried on given points and
// spheres, so that benchmarks/bench_capt.py can put its query times beside simdplan's in one run.
// VAMP's Python interface exposes no per-sphere CAPT query; this program calls its C++ API directly.
//
// Built by bench_capt.py against the headers that benchmarks/vamp_offline/build.sh installs with
// VAMP, with VAMP's release flags and the ISA level build.sh gives VAMP (bench_capt.VAMP_CXX_FLAGS),
// when that build and a C++ compiler are present.
//
//   capt_query POINTS QUERIES R_MIN R_MAX R_POINT REPEATS ANSWERS
// POINTS: n x 3 float32 (x y z), QUERIES: m x 4 float32 (x y z r), both raw little endian.
// Prints one line of JSON: build time (ms), and per repeat the ns per sphere of
//   one   CAPT::collides(center, r), one sphere per call;
//   simd  CAPT::collides_simd(centers, radii) on consecutive groups of FVectorT::num_scalars spheres,
//         which answers whether ANY sphere of the group collides and stops at the first that does
//         (simdplan's lane queries answer every lane);
// and writes the `one` answers (m bytes, 1 = collides) to ANSWERS. VAMP counts touching as a
// collision (distance <= r + r_point); simdplan does not (strict <).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <vamp/collision/capt.hh>

namespace {

std::vector<float> read_floats(const char* path) {
  std::vector<float> v;
  FILE* f = std::fopen(path, "rb");
  if (!f) {
    std::fprintf(stderr, "capt_query: cannot open %s\n", path);
    std::exit(2);
  }
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  v.resize(size_t(bytes) / sizeof(float));
  if (std::fread(v.data(), sizeof(float), v.size(), f) != v.size()) {
    std::fprintf(stderr, "capt_query: short read of %s\n", path);
    std::exit(2);
  }
  std::fclose(f);
  return v;
}

double ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: capt_query POINTS QUERIES R_MIN R_MAX R_POINT REPEATS ANSWERS\n");
    return 2;
  }
  using vamp::collision::CAPT;
  const std::vector<float> p = read_floats(argv[1]), q = read_floats(argv[2]);
  const float r_min = std::strtof(argv[3], nullptr), r_max = std::strtof(argv[4], nullptr);
  const float r_point = std::strtof(argv[5], nullptr);
  const int repeats = std::atoi(argv[6]);
  std::vector<vamp::collision::Point> points(p.size() / 3);
  for (size_t i = 0; i < points.size(); ++i) points[i] = {p[3 * i], p[3 * i + 1], p[3 * i + 2]};

  const auto t_build = std::chrono::steady_clock::now();
  const CAPT tree(points, r_min, r_max, r_point);
  const double build_ms = ns_since(t_build) / 1e6;

  constexpr size_t W = CAPT::FVectorT::num_scalars;
  const size_t m = q.size() / 4, groups = m / W;
  std::vector<uint8_t> answer(m);
  // structure of arrays, in groups of W, for collides_simd
  std::vector<float> soa(4 * groups * W);
  for (size_t g = 0; g < groups; ++g)
    for (size_t k = 0; k < W; ++k)
      for (size_t a = 0; a < 4; ++a) soa[(4 * g + a) * W + k] = q[4 * (g * W + k) + a];

  std::vector<double> one_ns, simd_ns;
  size_t one_hits = 0, simd_hits = 0;
  for (int rep = 0; rep < repeats; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    size_t hits = 0;
    for (size_t i = 0; i < m; ++i) {
      const bool hit = tree.collides({q[4 * i], q[4 * i + 1], q[4 * i + 2]}, q[4 * i + 3]);
      answer[i] = hit;
      hits += hit;
    }
    one_ns.push_back(ns_since(t0) / double(m));
    one_hits = hits;

    t0 = std::chrono::steady_clock::now();
    hits = 0;
    for (size_t g = 0; g < groups; ++g) {
      const float* s = soa.data() + 4 * g * W;
      const std::array<CAPT::FVectorT, 3> c = {CAPT::FVectorT(s, false), CAPT::FVectorT(s + W, false),
                                               CAPT::FVectorT(s + 2 * W, false)};
      hits += tree.collides_simd(c, CAPT::FVectorT(s + 3 * W, false));
    }
    if (groups) simd_ns.push_back(ns_since(t0) / double(groups * W));
    simd_hits = hits;
  }

  FILE* f = std::fopen(argv[7], "wb");
  if (!f || std::fwrite(answer.data(), 1, m, f) != m) {
    std::fprintf(stderr, "capt_query: cannot write %s\n", argv[7]);
    return 2;
  }
  std::fclose(f);
  auto list = [](const std::vector<double>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::printf("{\"build_ms\": %.6f, \"one_ns\": %s, \"simd_ns\": %s, \"lanes\": %zu, \"one_hits\": %zu, "
              "\"simd_groups_hit\": %zu, \"spheres\": %zu}\n",
              build_ms, list(one_ns).c_str(), list(simd_ns).c_str(), W, one_hits, simd_hits, m);
  return 0;
}
