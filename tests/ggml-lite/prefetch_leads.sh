#!/bin/sh
# Every function of the AVX-512 packed kernels' objects (packed*avx512*) that prefetches into L1
# (prefetcht0) also prefetches them into L2 (prefetcht1): no AVX-512 pass leads into L1 alone
# (simd_x86-inl.h: pass_lead). So does every one-token pass of the AVX2 block kernels
# (packed_avx2's packed_decode and packed_gemv2: cpu.h, avx2_block_l2), whose prefill tiles lead
# into L1 only. The check is on the binary because the compiler had dropped the
# L2 lead without a word: GCC 12 split prefetch_block's L2 half off by partial inlining, counted
# the part const (a prefetch has no side effect to it) and deleted its calls as dead code.
#
#     sh tests/ggml-lite/prefetch_leads.sh OBJECT...
if ! command -v objdump >/dev/null; then
    echo "objdump not found: install binutils (make deps)"
    exit 1
fi
status=0
checked=0
for object in "$@"; do
    case "$object" in
    *packed*avx512*) only="" ;;
    *packed_avx2.cpp*) only="packed_decode<|packed_gemv2<" ;;
    *) continue ;;
    esac
    result=$(objdump -d --no-show-raw-insn -C "$object" | awk -v only="$only" '
        function done_function() {
            if (only != "" && name !~ only) return
            if (name != "" && t0 > 0 && t1 == 0) print "MISSING " name
            if (name != "" && t0 > 0 && t1 > 0) leads++
        }
        /^[0-9a-f]+ <.*>:$/ { done_function(); name = $0; t0 = 0; t1 = 0; next }
        /prefetcht0/ { t0++ }
        /prefetcht1/ { t1++ }
        END { done_function(); print "LEADS " leads + 0 }')
    missing=$(printf '%s\n' "$result" | grep '^MISSING' | sed 's/^MISSING //')
    if [ -n "$missing" ]; then
        echo "$object: functions that prefetch into L1 and not into L2:"
        printf '%s\n' "$missing" | cut -c1-200
        status=1
    fi
    leads=$(printf '%s\n' "$result" | sed -n 's/^LEADS //p')
    checked=$((checked + leads))
done
# A check that finds nothing to check proves nothing: the objects must hold the leads.
if [ "$checked" -eq 0 ]; then
    echo "no function with both leads in: $*"
    status=1
fi
echo "$checked functions lead into L1 and L2"
exit $status
