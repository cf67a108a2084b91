// Local shim for kavrakilab/nigh (offline build).
// NOTE: this is an EXACT BRUTE-FORCE (linear scan) nearest-neighbour structure,
// not a KD-tree. Results equal nigh's up to ties in distance.
#pragma once
#include "nigh_forward.hpp"
#include "lp_space.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace unc::robotics::nigh
{
    template <
        typename T,
        typename Space,
        typename KeyFn,
        typename Concurrency,
        std::size_t batchSize,
        typename Allocator>
    class Nigh<T, Space, KeyFn, Concurrency, KDTreeBatch<batchSize>, Allocator>
    {
    public:
        using Type = T;
        using Key = typename Space::Type;
        using Distance = typename Space::Distance;

    private:
        std::vector<T, Allocator> data_;
        Space space_;
        KeyFn keyFn_;

        template <typename K>
        Distance dist(const T &t, const K &q) const
        {
            return Space::distance(keyFn_(t), q);
        }

    public:
        explicit Nigh(const Space &space = Space(), const KeyFn &keyFn = KeyFn(), Allocator alloc = Allocator())
          : data_(alloc), space_(space), keyFn_(keyFn)
        {
        }

        Nigh(const Nigh &) = delete;
        Nigh(Nigh &&) = default;

        std::size_t size() const { return data_.size(); }

        void clear() { data_.clear(); }

        void insert(const T &value) { data_.push_back(value); }

        const Space &metricSpace() const { return space_; }

        template <typename K>
        std::optional<std::pair<T, Distance>> nearest(const K &q) const
        {
            std::size_t best = data_.size();
            Distance bestDist = std::numeric_limits<Distance>::infinity();
            for (std::size_t i = 0; i < data_.size(); ++i)
            {
                const Distance d = dist(data_[i], q);
                if (d < bestDist)  // strict: first minimum wins on ties
                {
                    bestDist = d;
                    best = i;
                }
            }
            if (best == data_.size())
            {
                return {};
            }
            return std::pair<T, Distance>(data_[best], bestDist);
        }

        template <typename K>
        std::optional<T> nearest(const K &q, Distance *distOut) const
        {
            auto r = nearest(q);
            if (distOut)
            {
                *distOut = r ? r->second : std::numeric_limits<Distance>::quiet_NaN();
            }
            if (r)
            {
                return r->first;
            }
            return {};
        }

        // k nearest within maxRadius (inclusive, like nigh), sorted by increasing distance.
        // Element type is std::pair<T, Distance> (what VAMP passes).
        template <typename ResultAllocator, typename K>
        void nearest(
            std::vector<std::pair<T, Distance>, ResultAllocator> &nbh,
            const K &q,
            std::size_t k,
            Distance maxRadius = std::numeric_limits<Distance>::infinity()) const
        {
            nbh.clear();
            if (k == 0)
            {
                return;
            }
            std::vector<std::pair<Distance, std::size_t>> cand;
            cand.reserve(data_.size());
            for (std::size_t i = 0; i < data_.size(); ++i)
            {
                const Distance d = dist(data_[i], q);
                if (d <= maxRadius)
                {
                    cand.emplace_back(d, i);
                }
            }
            // ties broken by insertion order (lexicographic on (distance, index))
            if (cand.size() > k)
            {
                std::partial_sort(cand.begin(), cand.begin() + k, cand.end());
                cand.resize(k);
            }
            else
            {
                std::sort(cand.begin(), cand.end());
            }
            nbh.reserve(cand.size());
            for (const auto &[d, i] : cand)
            {
                nbh.emplace_back(data_[i], d);
            }
        }

        template <typename Fn>
        void visit(const Fn &fn) const
        {
            std::for_each(data_.begin(), data_.end(), fn);
        }

        std::vector<T> list() const { return std::vector<T>(data_.begin(), data_.end()); }
    };
}  // namespace unc::robotics::nigh
