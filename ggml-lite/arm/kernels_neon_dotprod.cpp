// NEON with the dot-product extension: the integer kernels of kernels_neon.cpp compiled with
// +dotprod, so each 4-byte group becomes one sdot (vdotq_s32).
#define LILA_NEON_DOTPROD_TU 1
#include "kernels_neon.cpp"  // NOLINT(bugprone-suspicious-include): compiled again on purpose
