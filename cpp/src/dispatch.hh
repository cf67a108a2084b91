// dispatch.hh: ISA discovery and the active kernel table (see dispatch.cc).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "simdplan/kernels.hh"

namespace simdplan {

std::vector<std::string> compiled_isas();   // built into this module
std::vector<std::string> available_isas();  // built and runnable on this CPU, worst to best
const KernelTable* find_isa(const std::string& name);  // throws std::invalid_argument
void set_isa(const std::string& name);
const KernelTable& active();

// The table of the active ISA among one family's builds (nullptr where a build is not compiled in).
// NOTE: an ISA without its own build of the family gets the scalar table: slower, never different.
template <class Table>
const Table& pick_active(const Table* scalar, const Table* avx2, const Table* avx512) {
  const std::string_view name = active().name;
  if (name == "avx512" && avx512) return *avx512;
  if (name == "avx2" && avx2) return *avx2;
  return *scalar;
}

}  // namespace simdplan
