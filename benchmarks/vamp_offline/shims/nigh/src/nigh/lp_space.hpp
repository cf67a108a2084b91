// Local shim for kavrakilab/nigh (offline build). Only the API used by VAMP.
#pragma once
#include <cstddef>

namespace unc::robotics::nigh::metric
{
    template <int p>
    struct LP {};

    using L1 = LP<1>;
    using L2 = LP<2>;

    // Primary template; VAMP provides the specialization it needs
    // (Space<NNFloatArray<dim>, LP<2>>) with Type, Metric, Distance, distance(), ...
    template <typename Type, typename Metric, typename = void>
    struct Space;
}  // namespace unc::robotics::nigh::metric
