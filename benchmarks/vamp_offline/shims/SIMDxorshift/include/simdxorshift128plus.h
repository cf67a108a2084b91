/* Local minimal implementation of the SIMDxorshift API used by VAMP (offline build).
 * Own implementation of xorshift128+ (4 independent 64-bit lanes in a __m256i),
 * scalar loop over lanes. Not bit-compatible with lemire/SIMDxorshift. */
#ifndef SIMDXORSHIFT128PLUS_SHIM_H
#define SIMDXORSHIFT128PLUS_SHIM_H

#ifdef __cplusplus
extern "C++" {
#endif
#include <immintrin.h>
#include <stdint.h>
#ifdef __cplusplus
}
extern "C" {
#endif

typedef struct avx_xorshift128plus_key_s
{
    __m256i part1;
    __m256i part2;
} avx_xorshift128plus_key_t;

void avx_xorshift128plus_init(uint64_t key1, uint64_t key2, avx_xorshift128plus_key_t *key);
__m256i avx_xorshift128plus(avx_xorshift128plus_key_t *key);

#ifdef __cplusplus
}
#endif
#endif
