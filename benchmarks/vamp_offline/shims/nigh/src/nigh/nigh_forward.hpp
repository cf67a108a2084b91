// Local shim for kavrakilab/nigh (offline build). Only the API used by VAMP.
#pragma once
#include <cstddef>
#include <memory>

namespace unc::robotics::nigh
{
    // concurrency tags
    struct NoThreadSafety {};
    struct ConcurrentRead {};
    struct Concurrent {};

    // strategy tags
    template <std::size_t batchSize = 8>
    struct KDTreeBatch {};
    struct Linear {};

    template <
        typename T,
        typename Space,
        typename KeyFn,
        typename Concurrency,
        typename Strategy,
        typename Allocator = std::allocator<T>>
    class Nigh;
}  // namespace unc::robotics::nigh
