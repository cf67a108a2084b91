// dispatch.cc: which ISA builds exist, which the CPU can run, and the one in use.
//
// The choice is made once (at import, from SIMDPLAN_ISA or the best the CPU supports) and can be
// changed by set_isa() for tests and side-by-side benchmarks. Kernels are reached only through
// the active table, so one call into the core runs one ISA from start to end.
#include "dispatch.hh"

#include <atomic>
#include <stdexcept>
#include <string>

namespace simdplan {

namespace {

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

std::atomic<const KernelTable*> g_active{nullptr};

}  // namespace

std::vector<std::string> compiled_isas() {
  std::vector<std::string> out{"scalar"};
  if (compiled_table<KernelTable>(Isa::kAvx2)) out.push_back("avx2");
  if (compiled_table<KernelTable>(Isa::kAvx512)) out.push_back("avx512");
  return out;
}

std::vector<std::string> available_isas() {
  std::vector<std::string> out{"scalar"};
  if (compiled_table<KernelTable>(Isa::kAvx2) && cpu_has_avx2()) out.push_back("avx2");
  if (compiled_table<KernelTable>(Isa::kAvx512) && cpu_has_avx512()) out.push_back("avx512");
  return out;
}

const KernelTable* find_isa(const std::string& name) {
  if (name == "scalar") return compiled_table<KernelTable>(Isa::kScalar);
  if (name == "avx2") {
    if (!compiled_table<KernelTable>(Isa::kAvx2)) throw std::invalid_argument("ISA 'avx2' was not compiled into this build of simdplan");
    if (!cpu_has_avx2()) throw std::invalid_argument("ISA 'avx2' is not supported by this CPU (needs AVX2 and FMA)");
    return compiled_table<KernelTable>(Isa::kAvx2);
  }
  if (name == "avx512") {
    if (!compiled_table<KernelTable>(Isa::kAvx512)) throw std::invalid_argument("ISA 'avx512' was not compiled into this build of simdplan");
    if (!cpu_has_avx512())
      throw std::invalid_argument("ISA 'avx512' is not supported by this CPU (needs AVX-512 F, DQ, VL and BW)");
    return compiled_table<KernelTable>(Isa::kAvx512);
  }
  throw std::invalid_argument("unknown ISA '" + name + "': expected one of scalar, avx2, avx512");
}

void set_isa(const std::string& name) { g_active.store(find_isa(name)); }

const KernelTable& active() {
  const KernelTable* t = g_active.load(std::memory_order_relaxed);
  if (!t) {
    t = find_isa(available_isas().back());
    g_active.store(t);
  }
  return *t;
}

}  // namespace simdplan
