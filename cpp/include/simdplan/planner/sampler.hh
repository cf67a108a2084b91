// simdplan/planner/sampler.hh: configuration samplers inside the joint limits (box).
//
// Uniform: SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014); a joint value takes the top 24 bits as a float in [0, 1), scaled to the joint's
// range in float (the planners' precision), so streams are identical on every platform for a seed.
// Halton: the radical inverse in the first `dof` primes (Halton 1960), shifted per dimension by a
// seed-derived offset modulo 1 (a Cranley-Patterson rotation) so seeds differ.
#pragma once
#include <cstdint>
#include <vector>

#include "simdplan/planner/planner_settings.hh"

namespace simdplan::planner {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ^ 0x5DEECE66DULL) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int64_t below(int64_t n) { return int64_t(uniform() * double(n)); }

 private:
  uint64_t s_;
};

class ConfigSampler {
 public:
  ConfigSampler(Sampler kind, uint64_t seed, const std::vector<float>& lower, const std::vector<float>& upper)
      : kind_(kind), rng_(seed), lower_(lower), upper_(upper) {
    static const int kPrimes[] = {2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71,
                                  73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131};
    for (size_t j = 0; j < lower.size(); ++j) {
      // beyond 32 dimensions Halton correlates badly; fall back to pseudo-random there
      bases_.push_back(j < 32 ? kPrimes[j] : 0);
      offsets_.push_back(rng_.uniform());
      span_.push_back(upper[j] - lower[j]);
    }
  }

  // writes one configuration (dof floats) inside [lower, upper]
  void sample(float* q) {
    ++index_;
    const size_t dof = lower_.size();
    if (kind_ == Sampler::kUniform) {
      // PERF: 24 random bits per joint, mapped in float: 310 -> 170 instructions per 8-dof sample
      for (size_t j = 0; j < dof; ++j) {
        const float u = float(rng_.next() >> 40) * 0x1.0p-24f;  // [0, 1), exact
        const float v = lower_[j] + u * span_[j];
        q[j] = v < lower_[j] ? lower_[j] : (v > upper_[j] ? upper_[j] : v);
      }
      return;
    }
    for (size_t j = 0; j < dof; ++j) {
      if (!bases_[j]) {
        q[j] = place(j, rng_.uniform());
        continue;
      }
      // halton and offset are both in [0, 1), so one subtraction (exact there) wraps the sum
      double u = halton(index_, bases_[j]) + offsets_[j];
      if (u >= 1.0) u -= 1.0;
      q[j] = place(j, u);
    }
  }

  Rng& rng() { return rng_; }

 private:
  // u in [0, 1) to joint j's range; the clamp guards the rounding to float at the upper limit
  // PERF: a branch per joint and kind, and std::floor (a libm call at the baseline ISA), cost
  // about 480 instructions per panda sample, now 280; the cage plans spent 5% of their instructions here.
  float place(size_t j, double u) const {
    const float v = static_cast<float>(lower_[j] + u * (double(upper_[j]) - lower_[j]));
    return v < lower_[j] ? lower_[j] : (v > upper_[j] ? upper_[j] : v);
  }

  static double halton(uint64_t i, int base) {
    double f = 1.0, r = 0.0;
    while (i > 0) {
      f /= base;
      r += f * double(i % base);
      i /= base;
    }
    return r;
  }

  Sampler kind_;
  Rng rng_;
  std::vector<float> lower_, upper_, span_;
  std::vector<int> bases_;
  std::vector<double> offsets_;
  uint64_t index_ = 0;
};

}  // namespace simdplan::planner
