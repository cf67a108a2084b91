#include "simdxorshift128plus.h"

static uint64_t shim_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void avx_xorshift128plus_init(uint64_t key1, uint64_t key2, avx_xorshift128plus_key_t *key)
{
    uint64_t s0[4], s1[4];
    uint64_t x = key1 ^ (key2 * 0xD1B54A32D192ED03ULL);
    for (int i = 0; i < 4; ++i)
    {
        s0[i] = shim_splitmix64(&x);
        s1[i] = shim_splitmix64(&x);
        if ((s0[i] | s1[i]) == 0)
        {
            s1[i] = 1;
        }
    }
    key->part1 = _mm256_loadu_si256((const __m256i *)s0);
    key->part2 = _mm256_loadu_si256((const __m256i *)s1);
}

__m256i avx_xorshift128plus(avx_xorshift128plus_key_t *key)
{
    uint64_t s0[4], s1[4], out[4];
    _mm256_storeu_si256((__m256i *)s0, key->part1);
    _mm256_storeu_si256((__m256i *)s1, key->part2);
    for (int i = 0; i < 4; ++i)
    {
        uint64_t a = s0[i];
        const uint64_t b = s1[i];
        s0[i] = b;
        a ^= a << 23;
        s1[i] = a ^ b ^ (a >> 17) ^ (b >> 26);
        out[i] = s1[i] + b;
    }
    key->part1 = _mm256_loadu_si256((const __m256i *)s0);
    key->part2 = _mm256_loadu_si256((const __m256i *)s1);
    return _mm256_loadu_si256((const __m256i *)out);
}
