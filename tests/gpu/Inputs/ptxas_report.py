#!/usr/bin/env python3
"""Every library entry through the CUDA target for each data type and architecture: PTX from `lac`, ptxas -v,
and cuobjdump -sass. Prints one line per kernel,

    <entry> <dtype> <arch> mma=<n> spill=<bytes> stack=<bytes> registers=<n> shared=<bytes> hmma=<n> ffma=<n>
        ldgsts=<n> ldsm=<n> lds=<n>

which tests/gpu/cuda-ptx-*.test check and docs/BENCHMARKS.md tabulates (mma: the contractions la-gpu-contract-to-mma put
on tensor cores, counted in the `--emit=gpu` stage by count_contractions; spill: ptxas's spill
stores; shared: ptxas's smem plus the dynamic shared buffer (la-gpu-dynamic-shared-memory), which ptxas does
not count; hmma and ffma: tensor-core and FP32 fused multiply-add instructions in the SASS; ldgsts: cp.async copies
from global to shared memory in the SASS, la-gpu-prefetch-staged-copies; ldsm: ldmatrix loads of tensor-core
fragments, la-gpu-lower-mma-fragments; lds: every other load from shared memory). The PTX's .target must be exactly the
architecture asked for; a kernel whose PTX ptxas rejects stops the report with ptxas's message.

With --pieces, the kernels a causal call in pieces runs instead (runtime/lib/GpuSequencePieces.h): each causal
entry's `state` and `resume` variants at a piece's shape (128 positions; FLASH's 256, whole blocks, derived
with --aligned-to 256), as `<entry>.<variant>` lines. Causal Flow's pieces run a state variant per level;
the one of every level stands for them here.

usage: ptxas_report.py --lac LAC --ptxas PTXAS --cuobjdump CUOBJDUMP --kernels DIR --work DIR
                       [--dtypes f32,f16,bf16] [--archs sm_80,sm_90] [--entries a,b] [--pieces] [LAC OPTION ...]
"""
import argparse
import os
import re
import subprocess
import sys

# (file, entry, shape options): the shapes of tests/gpu/cuda-emu-library.test, ragged (N = 37, D = 48).
ENTRIES = [
    ("linear_attention.mlir", "linear_attention", ["--shape", "2x3x37x48"]),
    ("linear_attention.mlir", "linear_attention_causal", ["--shape", "2x3x37x48"]),
    ("flow_attention.mlir", "flow_attention", ["--shape", "2x3x37x48"]),
    ("flow_attention.mlir", "flow_attention_causal", ["--shape", "2x3x37x48"]),
    ("aft.mlir", "aft_causal", ["--shape", "6x37x48"]),
    ("aft.mlir", "aft_simple", ["--shape", "6x37x48"]),
    ("aft.mlir", "aft_full", ["--shape", "6x37x48", "--shape", "%w=37x37"]),
    ("aft.mlir", "aft_full_causal", ["--shape", "6x37x48", "--shape", "%w=37x37"]),
    ("aft.mlir", "aft_local", ["--shape", "6x37x48", "--shape", "%w=37x37"]),
    ("flash.mlir", "gau", ["--shape", "6x37x48"]),
    ("flash.mlir", "flash", ["--shape", "6x37x48"]),
    ("flash.mlir", "flash_causal", ["--shape", "6x37x48"]),
    ("retention.mlir", "retention", ["--shape", "2x3x37x48"]),
    ("retention.mlir", "simple_gla", ["--shape", "2x3x37x48"]),
    ("retention.mlir", "gla", ["--shape", "2x3x37x48"]),
    ("retention.mlir", "retention_with_state", ["--shape", "2x3x37x48", "--shape", "%h0=2x3x48x48"]),
    ("retention.mlir", "simple_gla_with_state", ["--shape", "2x3x37x48", "--shape", "%h0=2x3x48x48"]),
    ("retention.mlir", "gla_with_state", ["--shape", "2x3x37x48", "--shape", "%h0=2x3x48x48"]),
]

# (file, entry, lac options) of each causal entry's piece, ragged in D as above; its states' shapes follow.
PIECES = [
    ("linear_attention.mlir", "linear_attention_causal", ["--shape", "2x3x128x48"]),
    ("flow_attention.mlir", "flow_attention_causal", ["--shape", "2x3x128x48"]),
    ("aft.mlir", "aft_causal", ["--shape", "6x128x48"]),
    ("flash.mlir", "flash_causal", ["--shape", "6x256x48", "--aligned-to", "256"]),
    ("retention.mlir", "retention", ["--shape", "2x3x128x48"]),
    ("retention.mlir", "simple_gla", ["--shape", "2x3x128x48"]),
    ("retention.mlir", "gla", ["--shape", "2x3x128x48"]),
]


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def dynamic_shared_bytes(gpu):
    """Bytes of the block's dynamic shared memory, which ptxas -v does not count: a `--emit=gpu` stage's
    workgroup buffer beyond the 48 KiB a kernel may declare statically (la-gpu-dynamic-shared-memory)."""
    sizes = [int(n) for n in re.findall(r"workgroup\(%\w+ : memref<(\d+)xi8", gpu)]
    return sum(n for n in sizes if n > 48 * 1024)


def count_contractions(gpu):
    """The contractions on tensor cores in a `--emit=gpu` stage: each is a k loop (an scf.for carrying the
    accumulators; a thread loop may run several one after the other into the same accumulators) whose
    mma.sync, one per tile of a warp, all take the same A fragment."""
    count, previous_a = 0, None
    for line in gpu.splitlines():
        if re.search(r"scf\.for %\w+ = .* iter_args", line):
            previous_a = None
        mma = re.search(r"nvgpu\.mma\.sync\((%[\w.]+),", line)
        if mma:
            count += mma.group(1) != previous_a
            previous_a = mma.group(1)
    return count


def first_int(pattern, text):
    match = re.search(pattern, text)
    return int(match.group(1)) if match else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for tool in ("lac", "ptxas", "cuobjdump", "kernels", "work"):
        parser.add_argument("--" + tool, required=True)
    parser.add_argument("--dtypes", default="f32,f16,bf16")
    parser.add_argument("--archs", default="sm_80,sm_90")
    parser.add_argument("--entries", default="")
    parser.add_argument("--pieces", action="store_true")
    args, lac_options = parser.parse_known_args()
    wanted = set(filter(None, args.entries.split(",")))
    os.makedirs(args.work, exist_ok=True)
    kernels = [(file, entry, None, shape) for file, entry, shape in ENTRIES]
    if args.pieces:
        kernels = [(file, entry, variant, shape) for file, entry, shape in PIECES for variant in ("state", "resume")]
    for file, entry, variant, shape in kernels:
        if wanted and entry not in wanted:
            continue
        name = f"{entry}.{variant}" if variant else entry
        for dtype in args.dtypes.split(","):
            for arch in args.archs.split(","):
                stem = os.path.join(args.work, f"{name}.{dtype}.{arch}")
                compile = [args.lac, "compile", os.path.join(args.kernels, file), "--entry", entry, *shape,
                           "--dtype", dtype, "--target", "cuda", "--arch", arch, *lac_options]
                if variant:
                    compile += ["--variant", variant]
                run(compile + ["--emit=ptx", "-o", stem + ".ptx"])
                gpu = run(compile + ["--emit=gpu"])
                with open(stem + ".ptx") as ptx:
                    targets = re.findall(r"^\.target (\S+)$", ptx.read(), re.M)
                if targets != [arch]:
                    sys.exit(f"{stem}.ptx: .target {targets}, expected exactly [{arch}]")
                report = run([args.ptxas, "-v", "-arch=" + arch, stem + ".ptx", "-o", stem + ".cubin"])
                sass = run([args.cuobjdump, "-sass", stem + ".cubin"])
                figures = {
                    "mma": count_contractions(gpu),
                    "spill": first_int(r"(\d+) bytes spill stores", report),
                    "stack": first_int(r"(\d+) bytes stack frame", report),
                    "registers": first_int(r"Used (\d+) registers", report),
                    "shared": first_int(r"(\d+) bytes smem", report) + dynamic_shared_bytes(gpu),
                    "hmma": len(re.findall(r"\bHMMA\.", sass)),
                    "ffma": len(re.findall(r"\bFFMA\b", sass)),
                    "ldgsts": len(re.findall(r"\bLDGSTS\.", sass)),
                    "ldsm": len(re.findall(r"\bLDSM\.", sass)),
                    "lds": len(re.findall(r"\bLDS\b", sass)),
                }
                print(f"{name} {dtype} {arch} " + " ".join(f"{k}={v}" for k, v in figures.items()), flush=True)


if __name__ == "__main__":
    main()
