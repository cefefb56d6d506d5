#!/usr/bin/env python3
"""Attributes perf samples of one function to its loops (used by scripts/profile).

A loop is a backward jump in the disassembly: [jump target, jump]. Each sample goes to the innermost loop that
contains its address; samples outside every loop count as "straight-line". The table lists, per loop, its
address range, share of the function's samples, its size in instructions and its most common vector opcodes,
which is usually enough to tell which la op it came from (a 6x64 FMA block, an exp polynomial, a row dot).

usage: profile-loops.py BINARY SYMBOL PERF_DATA
"""
import collections
import re
import subprocess
import sys


def disassemble(binary, symbol):
    text = subprocess.run(["llvm-objdump-22", "-d", "--no-show-raw-insn", f"--disassemble-symbols={symbol}", binary],
                          check=True, capture_output=True, text=True).stdout
    instructions = []
    for line in text.splitlines():
        match = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if match:
            instructions.append((int(match.group(1), 16), match.group(2), match.group(3)))
    return instructions


def loops_of(instructions):
    loops = []
    for address, opcode, operands in instructions:
        if opcode.startswith("j"):
            target = re.match(r"(?:0x)?([0-9a-f]+)", operands)
            if target and int(target.group(1), 16) <= address:
                loops.append((int(target.group(1), 16), address))
    return loops


def samples_of(perf_data, symbol):
    text = subprocess.run(["perf", "script", "-i", perf_data, "-F", "ip,sym", "--no-demangle"],
                          check=True, capture_output=True, text=True).stdout
    addresses = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == symbol:
            addresses.append(int(parts[0], 16))
    return addresses


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, symbol, perf_data = sys.argv[1:]
    instructions = disassemble(binary, symbol)
    if not instructions:
        sys.exit(f"profile-loops: no instructions for {symbol} in {binary}")
    loops = loops_of(instructions)
    samples = samples_of(perf_data, symbol)
    if not samples:
        sys.exit(f"profile-loops: no samples in {symbol}")
    counts = collections.Counter()
    for address in samples:
        inside = [loop for loop in loops if loop[0] <= address <= loop[1]]
        counts[min(inside, key=lambda loop: loop[1] - loop[0]) if inside else None] += 1
    print(f"{len(samples)} samples in {symbol}; innermost loops by share:")
    print(f"{'share':>6}  {'range':<17} {'insns':>5}  vector opcodes (most common)")
    for loop, count in counts.most_common():
        if loop is None:
            print(f"{100 * count / len(samples):5.1f}%  straight-line code")
            continue
        body = [i for i in instructions if loop[0] <= i[0] <= loop[1]]
        opcodes = collections.Counter(op for _, op, _ in body if op.startswith("v"))
        common = " ".join(f"{op}x{n}" for op, n in opcodes.most_common(5))
        print(f"{100 * count / len(samples):5.1f}%  {loop[0]:x}-{loop[1]:x} {len(body):>5}  {common}")


if __name__ == "__main__":
    main()
