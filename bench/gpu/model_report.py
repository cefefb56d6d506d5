#!/usr/bin/env python3
"""The CUDA backend's performance evidence without a GPU (issue 21, DESIGN.md "GPU code on machines without a
GPU", layer 3): every library entry runs on the GPU emulator (`lac run --target cuda-emu --json`) at one shape,
and this script tabulates what the emulator counted.

For each entry and data type:
  blocks       the grid, against an H100's 132 SMs (fewer blocks than SMs leaves SMs idle); for a chunk-parallel
               call (three launches, runtime/lib/GpuSequencePieces.h) the widest launch's, which model@grid
               then applies to all three: the prefix launch between them has one block per slice and about 1%
               of the traffic at the default shape;
  traffic      global bytes loaded + stored, as counted, and as a ratio to the minimum (every input read once,
               every output written once). The emulator has no caches: each load counts, so the ratio is what
               the kernel asks of the memory system, an upper bound on DRAM traffic;
  mma / fma    tensor-core FLOPs (2·16·8·16 per mma.sync) and FP32 FMA FLOPs (2 per FMA);
  model        a MODELLED H100 SXM time, not a measurement:
                 max(traffic / 3.35 TB/s, mma FLOPs / 989 TFLOP/s, FMA FLOPs / 67 TFLOP/s).
               989 TFLOP/s is the dense f16/bf16 peak of wgmma; mma.sync, which these kernels use, reaches
               less, so the tensor term is optimistic. `model@grid` scales the peaks by min(1, blocks / 132):
               the share of the SMs the grid occupies.
  ideal        the same model at the minimum traffic and the counted FLOPs on all 132 SMs: the kernel's floor.

usage: model_report.py --lac LAC --kernels DIR [--shape B,H,N,D] [--dtypes f16,f32] [--entries a,b]
                       [--json OUT.json] [--timeout SECONDS] [--option NAME=VALUE ...]

Prints a Markdown table (docs/BENCHMARKS.md has the one from the last run and the command).
"""
import argparse
import json
import subprocess
import sys
import time

H100_SMS = 132
H100_BANDWIDTH = 3.35e12  # bytes/s, HBM3, H100 SXM
H100_TENSOR_F16 = 989e12  # FLOP/s, dense f16/bf16 (wgmma)
H100_FP32 = 67e12  # FLOP/s, FP32 FMA (non-tensor)


def entries(b, h, n, d):
    """(file, entry, lac arguments) for each library entry at [B, H, N, D] (or [B·H, N, D] for the 3-D ones)."""
    bhnd = ["--random", f"{b},{h},{n},{d}"]
    bnd = ["--random", f"{b * h},{n},{d}"]
    bias = ["--shape", f"%w={n}x{n}"]
    state = ["--shape", f"%h0={b}x{h}x{d}x{d}"]
    return [
        ("linear_attention.mlir", "linear_attention", bhnd),
        ("linear_attention.mlir", "linear_attention_causal", bhnd),
        ("flow_attention.mlir", "flow_attention", bhnd),
        ("flow_attention.mlir", "flow_attention_causal", bhnd),
        ("aft.mlir", "aft_causal", bnd),
        ("aft.mlir", "aft_simple", bnd),
        ("aft.mlir", "aft_full", bnd + bias),
        ("aft.mlir", "aft_full_causal", bnd + bias),
        ("aft.mlir", "aft_local", bnd + bias),
        ("flash.mlir", "gau", bnd),
        ("flash.mlir", "flash", bnd),
        ("flash.mlir", "flash_causal", bnd),
        ("retention.mlir", "retention", bhnd),
        ("retention.mlir", "simple_gla", bhnd),
        ("retention.mlir", "gla", bhnd),
        ("retention.mlir", "retention_with_state", bhnd + state),
        ("retention.mlir", "simple_gla_with_state", bhnd + state),
        ("retention.mlir", "gla_with_state", bhnd + state),
    ]


def model_seconds(traffic, mma_flops, fma_flops, sm_share):
    return max(traffic / (H100_BANDWIDTH * sm_share), mma_flops / (H100_TENSOR_F16 * sm_share),
               fma_flops / (H100_FP32 * sm_share))


def measure(lac, kernels, file, entry, arguments, dtype, timeout, options=()):
    command = [lac, "run", f"{kernels}/{file}", "--entry", entry, *arguments, "--dtype", dtype, "--target",
               "cuda-emu", "--json", "--cache-dir", "none", *(f"--{option}" for option in options)]
    start = time.monotonic()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"entry": entry, "dtype": dtype, "error": f"the emulator took over {timeout} s"}
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["exit code " + str(result.returncode)])[-1]
        return {"entry": entry, "dtype": dtype, "error": message}
    gpu = json.loads(result.stdout)["gpu"]
    counters = gpu["counters"]
    blocks = gpu["grid"][0] * gpu["grid"][1] * gpu["grid"][2]
    traffic = counters["global_bytes_loaded"] + counters["global_bytes_stored"]
    mma_flops = counters["mma_flops"]
    fma_flops = 2 * counters["fma"]
    share = min(1.0, blocks / H100_SMS)
    return {
        "entry": entry, "dtype": dtype, "blocks": blocks, "block_threads": gpu["block"],
        "traffic_bytes": traffic, "min_traffic_bytes": gpu["min_global_bytes"],
        "traffic_ratio": gpu["traffic_ratio"], "mma_flops": mma_flops, "fma_flops": fma_flops,
        "model_ms": 1e3 * model_seconds(traffic, mma_flops, fma_flops, 1.0),
        "model_at_grid_ms": 1e3 * model_seconds(traffic, mma_flops, fma_flops, share),
        "ideal_ms": 1e3 * model_seconds(gpu["min_global_bytes"], mma_flops, fma_flops, 1.0),
        "emulator_s": time.monotonic() - start,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lac", required=True)
    parser.add_argument("--kernels", required=True)
    parser.add_argument("--shape", default="2,8,4096,64", help="B,H,N,D (D = Dv)")
    parser.add_argument("--dtypes", default="f16,f32")
    parser.add_argument("--entries", default="")
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per emulator run")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a compiler option for every run (lac --NAME=VALUE), e.g. sequence-piece-length=1048576 "
                             "for one block per batch×head slice")
    args = parser.parse_args()
    b, h, n, d = (int(x) for x in args.shape.split(","))
    wanted = set(filter(None, args.entries.split(",")))
    rows = []
    print(f"Modelled H100 SXM times (a model from counted traffic and FLOPs, not a measurement), "
          f"B={b} H={h} N={n} D=Dv={d}:\n")
    print("| entry | dtype | blocks (of 132 SMs) | traffic MB | minimum MB | ratio | mma GFLOP | FMA GFLOP "
          "| model ms | model@grid ms | ideal ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for file, entry, arguments in entries(b, h, n, d):
        if wanted and entry not in wanted:
            continue
        for dtype in args.dtypes.split(","):
            print(f"{entry} {dtype} ...", file=sys.stderr, flush=True)
            row = measure(args.lac, args.kernels, file, entry, arguments, dtype, args.timeout, args.option)
            rows.append(row)
            if "error" in row:
                # The runtime's message names the file and entry; the table keeps what went wrong.
                reason = row["error"].split("GPU emulator: ")[-1]
                print(f"| {entry} | {dtype} | not run: {reason[:110]}{'...' if len(reason) > 110 else ''} |||||||||")
                continue
            print(f"| {entry} | {dtype} | {row['blocks']} | {row['traffic_bytes'] / 1e6:.0f} | "
                  f"{row['min_traffic_bytes'] / 1e6:.1f} | {row['traffic_ratio']:.1f}x | {row['mma_flops'] / 1e9:.2f} | "
                  f"{row['fma_flops'] / 1e9:.2f} | {row['model_ms']:.3f} | {row['model_at_grid_ms']:.3f} | "
                  f"{row['ideal_ms']:.4f} |", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"shape": {"B": b, "H": h, "N": n, "D": d}, "sms": H100_SMS, "bandwidth": H100_BANDWIDTH,
                       "tensor_peak": H100_TENSOR_F16, "fp32_peak": H100_FP32, "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
