/* Scalar xorshift128+ (unused by VAMP; present because Dependencies.cmake lists this file). */
#include <stdint.h>
uint64_t shim_xorshift128plus(uint64_t s[2])
{
    uint64_t a = s[0];
    const uint64_t b = s[1];
    s[0] = b;
    a ^= a << 23;
    s[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
    return s[1] + b;
}
