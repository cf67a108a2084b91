// dispatch.hh: ISA discovery, the active kernel table, and each family's table for it (see dispatch.cc).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "simdplan/collision/kernels.hh"
#include "simdplan/isa.hh"

namespace simdplan {

std::vector<std::string> compiled_isas();   // built into this module
std::vector<std::string> available_isas();  // built and runnable on this CPU, worst to best
const KernelTable* find_isa(const std::string& name);  // throws std::invalid_argument
void set_isa(const std::string& name);
const KernelTable& active();

// A family's table of one ISA build, nullptr where that build is not compiled in. Only the
// ISA-neutral sources (compiled with SIMDPLAN_HAVE_*) may use it: elsewhere it would claim the
// AVX builds are missing.
template <class Table>
const Table* compiled_table(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
#if defined(SIMDPLAN_HAVE_AVX512)
      return isa_table<Table, Isa::kAvx512>();
#else
      return nullptr;
#endif
    case Isa::kAvx2:
#if defined(SIMDPLAN_HAVE_AVX2)
      return isa_table<Table, Isa::kAvx2>();
#else
      return nullptr;
#endif
    case Isa::kScalar:
      break;
  }
  return isa_table<Table, Isa::kScalar>();
}

// The family's table of the ISA that active() names, so set_isa() switches every family at once.
// NOTE: an ISA without its own build of the family gets the scalar table: slower, never different.
template <class Table>
const Table& active_table() {
  const std::string_view name = active().name;
  const Isa isa = name == "avx512" ? Isa::kAvx512 : name == "avx2" ? Isa::kAvx2 : Isa::kScalar;
  const Table* table = compiled_table<Table>(isa);
  return table ? *table : *isa_table<Table, Isa::kScalar>();
}

}  // namespace simdplan
