// Stand-in for orlp/pdqsort (offline build of VAMP): forwards to Boost.Sort's pdqsort (Debian libboost-dev),
// the same algorithm by the same author, so VAMP's sorts cost what they would with the original.
#pragma once
#include <boost/sort/pdqsort/pdqsort.hpp>

template <class Iter, class Compare>
inline void pdqsort(Iter begin, Iter end, Compare comp) { boost::sort::pdqsort(begin, end, comp); }

template <class Iter>
inline void pdqsort(Iter begin, Iter end) { boost::sort::pdqsort(begin, end); }

template <class Iter, class Compare>
inline void pdqsort_branchless(Iter begin, Iter end, Compare comp) { boost::sort::pdqsort_branchless(begin, end, comp); }

template <class Iter>
inline void pdqsort_branchless(Iter begin, Iter end) { boost::sort::pdqsort_branchless(begin, end); }
