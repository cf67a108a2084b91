// simdplan/vec/vec.hh: picks the vector type `Vec` for the ISA this translation unit is built for.
#pragma once
#include "simdplan/config.hh"

#if defined(SIMDPLAN_ISA_AVX512)
#include "simdplan/vec/avx512.hh"
namespace simdplan::SIMDPLAN_NS { using Vec = VecAvx512; }
#elif defined(SIMDPLAN_ISA_AVX2)
#include "simdplan/vec/avx2.hh"
namespace simdplan::SIMDPLAN_NS { using Vec = VecAvx2; }
#else
#include "simdplan/vec/scalar.hh"
namespace simdplan::SIMDPLAN_NS { using Vec = VecScalar; }
#endif
