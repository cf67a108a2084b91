// dispatch.hh: ISA discovery and the active kernel table (see dispatch.cc).
#pragma once
#include <string>
#include <vector>

#include "simdplan/kernels.hh"

namespace simdplan {

std::vector<std::string> compiled_isas();   // built into this module
std::vector<std::string> available_isas();  // built and runnable on this CPU, worst to best
const KernelTable* find_isa(const std::string& name);  // throws std::invalid_argument
void set_isa(const std::string& name);
const KernelTable& active();

}  // namespace simdplan
