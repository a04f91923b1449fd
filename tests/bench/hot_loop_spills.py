#!/usr/bin/env python3
"""The innermost multiply loops of compiled kernels, and the general-purpose registers they keep
on the stack (docs/DEVELOPING.md, "Reading the kernels' code").

For each function of an object file whose name matches PATTERN, the smallest loop (a backward
conditional branch) that holds a multiply-add instruction, and the scalar loads and stores to
the stack inside it. A pointer or counter that the compiler keeps on the stack in such a loop is
stored and reloaded every iteration, a chain through memory that can cost more than the
vector work: GCC 12 did so in the AVX2 Q4_0 and Q5_0 tiles (Q4_0's tile 11-14% slower for it).

    python3 tests/bench/hot_loop_spills.py build/ggml-lite/CMakeFiles/ggml-lite.dir/x86/packed_avx2.cpp.o packed_tile
"""
import argparse
import re
import subprocess

# The multiply-adds whose loops are the hot ones: AVX2/AVX-512 integer and float.
MULTIPLY = ("vpmadd", "vpdp", "vfmadd", "vdpbf16")
INSTRUCTION = re.compile(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)")
STACK_GPR = re.compile(r"\(%rsp\)|\(%rbp\)")


def functions(obj, pattern):
    symbols = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tT" and re.search(pattern, fields[2]):
            yield fields[2]


def instructions(obj, symbol):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj, "--disassemble=" + symbol],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = INSTRUCTION.match(line)
        if m:
            yield int(m.group(1), 16), m.group(2), m.group(3)


def innermost_multiply_loop(code):
    loops = []
    for address, op, args in code:
        target = re.match(r"([0-9a-f]+) <", args)
        if op.startswith("j") and op != "jmp" and target and int(target.group(1), 16) < address:
            loops.append((int(target.group(1), 16), address))
    for begin, end in sorted(loops, key=lambda loop: loop[1] - loop[0]):
        body = [i for i in code if begin <= i[0] <= end]
        if any(op.startswith(MULTIPLY) for _, op, _ in body):
            return body
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("object")
    parser.add_argument("pattern", help="a regular expression on the (mangled) function names")
    args = parser.parse_args()
    loops = flagged = 0
    for symbol in functions(args.object, args.pattern):
        body = innermost_multiply_loop(list(instructions(args.object, symbol)))
        if body is None:
            continue
        loops += 1
        spills = [f"{op} {a}" for _, op, a in body
                  if op.startswith("mov") and STACK_GPR.search(a) and "mm" not in a]
        if not spills:
            continue
        flagged += 1
        name = subprocess.run(["c++filt", symbol], capture_output=True, text=True).stdout.strip()
        name = re.sub(r"ggml_lite::|\(anonymous namespace\)::|xsimd::", "", name)
        print(f"{name}: {len(spills)} of the loop's {len(body)} instructions")
        for spill in spills:
            print(f"    {spill}")
    print(f"{loops} multiply loops, {flagged} with general-purpose registers on the stack")

if __name__ == "__main__":
    main()
