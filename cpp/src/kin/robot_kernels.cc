// robot_kernels.cc: which kernels a robot runs, and attaching a kernel library generated for it.
//
// A generated library (python/simdplan/specialize) is code from a file: it is attached only after
// its ABI, ISA and key match, and after its answers equal the generic kernel's on a sample of
// configurations and edges in an environment of spheres around the robot. Anything else leaves the
// robot on its current kernels and throws, naming the reason.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch.hh"
#include "kin/robot_model.hh"
#include "simdplan/geom/records.hh"
#include "simdplan/scratch.hh"

namespace simdplan {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw std::runtime_error("specialized kernel " + path + " refused: " + why);
}

// Configurations drawn for the comparison: the first half uniform in the limits, the rest near the
// middle (where self-collision pairs are close but mostly free). Deterministic, so a refusal repeats.
std::vector<float> sample_rows(const RobotModel& robot, int64_t n, uint64_t seed) {
  const std::vector<float> lo = robot.float_limits(false), hi = robot.float_limits(true);
  const int32_t dof = robot.dof();
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> q(size_t(n) * std::max(dof, 1));
  for (int64_t r = 0; r < n; ++r)
    for (int32_t j = 0; j < dof; ++j) {
      const float t = r < n / 2 ? u(gen) : 0.35f + 0.3f * u(gen);
      q[r * dof + j] = std::clamp(lo[j] + t * (hi[j] - lo[j]), lo[j], hi[j]);
    }
  return q;
}

// Spheres scattered around the robot's reach (its sphere centres at the sampled configurations),
// so environment tests run on every group, some hitting and some not.
Environment probe_environment(const RobotModel& robot, const KernelTable& generic, const std::vector<float>& q,
                              int64_t n, std::vector<float>& scratch) {
  const RobotView& rb = robot.view();
  std::vector<float> world(size_t(n) * rb.n_spheres * 4);
  scratch.resize(size_t(generic.scratch_floats(&rb)) + 16);
  generic.fk_spheres(&rb, q.data(), n, world.data(), aligned_scratch(scratch));
  std::array<std::vector<float>, kRecordKinds> records;
  std::mt19937_64 gen(7);
  const int64_t total = n * rb.n_spheres;
  for (int k = 0; k < 24 && total > 0; ++k) {
    const float* c = world.data() + 4 * (int64_t(gen() % uint64_t(total)));
    std::uniform_real_distribution<float> off(-0.15f, 0.15f), rad(0.02f, 0.08f);
    records[kObsSphere].insert(records[kObsSphere].end(), {c[0] + off(gen), c[1] + off(gen), c[2] + off(gen), rad(gen)});
  }
  return Environment(std::move(records));
}

// Compares the specialized entries with the generic ones; returns what differs, empty when nothing.
std::string compare(const RobotModel& robot, const KernelTable& generic, const KernelTable& special) {
  const RobotView& rb = robot.view();
  const int32_t dof = std::max(robot.dof(), 1);
  constexpr int64_t kRows = 512;
  const std::vector<float> q = sample_rows(robot, kRows, 12345);
  std::vector<float> buf;
  const Environment probe = probe_environment(robot, generic, q, kRows, buf);
  const Environment empty{std::array<std::vector<float>, kRecordKinds>{}};
  buf.resize(size_t(generic.scratch_floats(&rb)) + 16);
  float* s = aligned_scratch(buf);
  for (const Environment* env : {&empty, &probe}) {
    for (float padding : {0.0f, 0.01f}) {
      std::vector<uint8_t> a(kRows, 1), b(kRows, 1);
      CheckState sa, sb;
      generic.check(&rb, &env->view(), q.data(), kRows, padding, false, a.data(), s, &sa);
      special.check(&rb, &env->view(), q.data(), kRows, padding, false, b.data(), s, &sb);
      for (int64_t r = 0; r < kRows; ++r)
        if (a[r] != b[r]) return "Clear differs from the generic kernel's at configuration " + std::to_string(r);
      // edges between consecutive rows, 20-40 samples each: both Link kernels
      for (int64_t r = 0; r + 1 < 64; ++r) {
        const float* e0 = q.data() + r * dof;
        const float* e1 = e0 + dof;
        const int64_t steps = 20 + r % 21;
        for (bool wide : {false, true}) {
          CheckState ga, gb;
          const bool x = generic.motion_kernel(wide)(&rb, &env->view(), e0, e1, steps, 0, steps, padding, s, &ga);
          const bool y = special.motion_kernel(wide)(&rb, &env->view(), e0, e1, steps, 0, steps, padding, s, &gb);
          if (x != y) return std::string(wide ? "wide " : "") + "Link differs from the generic kernel's on edge " +
                             std::to_string(r);
        }
      }
    }
  }
  return "";
}

}  // namespace

const KernelTable& RobotModel::kernels() const {
  const KernelTable& generic = active();
  const KernelTable* s = special_.load(std::memory_order_acquire);
  return (s != nullptr && std::strcmp(s->name, generic.name) == 0) ? *s : generic;
}

const char* RobotModel::kernel_kind() const { return &kernels() == &active() ? "generic" : "specialized"; }

void RobotModel::attach_kernels(const std::string& path, const std::string& key) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    refuse(path, std::string("cannot load it: ") + (err ? err : "unknown error"));
  }
  // NOTE: from here on the library stays loaded even when refused: dlclose of a library whose static
  // constructors ran is not always safe, and a refusal is rare (a stale or damaged cache file).
  using Entry = const SpecializedKernels* (*)(const SpecializedSupport*);
  auto entry = reinterpret_cast<Entry>(dlsym(lib, "simdplan_specialized_kernels"));
  if (entry == nullptr) refuse(path, "it exports no simdplan_specialized_kernels");
  // the library is built for one ISA, named in its table: ask with that ISA's support (the
  // generic table of the active ISA first; a mismatch is refused below)
  const SpecializedKernels* sk = entry(active().support);
  if (sk == nullptr || sk->abi != kSpecializedAbi)
    refuse(path, "ABI " + std::to_string(sk ? sk->abi : 0) + ", this simdplan needs " + std::to_string(kSpecializedAbi));
  if (sk->key == nullptr || key != sk->key) refuse(path, "it was built for another robot, ISA or simdplan version");
  if (sk->check == nullptr || sk->check_motion == nullptr || sk->check_motion_wide == nullptr)
    refuse(path, "an entry point is missing");
  if (sk->isa == nullptr || std::strcmp(sk->isa, active().name) != 0)
    refuse(path, std::string("it was built for ISA ") + (sk->isa ? sk->isa : "?") + ", the core runs " + active().name);
  const KernelTable* generic = &active();
  auto* table = new KernelTable(*generic);
  table->check = sk->check;
  table->check_motion = sk->check_motion;
  table->check_motion_wide = sk->check_motion_wide;
  const std::string diff = compare(*this, *generic, *table);
  if (!diff.empty()) {
    delete table;
    refuse(path, diff);
  }
  loaded_.store(table, std::memory_order_release);
  special_.store(table, std::memory_order_release);
}

}  // namespace simdplan
