#!/usr/bin/env python3
"""Times every library kernel on a real GPU: our CUDA target (`lac run --target cuda`), PyTorch eager (the
formulas of bench/torch_baseline.py on the device) and flash-linear-attention (`pip install
flash-linear-attention`, for the entries it has), side by side, at the same shapes and data type. Writes
`results.json` and, with matplotlib, `results.png` (milliseconds per entry and implementation) to --out.

Every time is a device time between CUDA events, median of --repeat runs after a warm-up: ours from
`lac run --repeat --json` (`kernel_median_ms`: the launch alone, no copies), PyTorch's and fla's from
torch.cuda.Event around the call. An implementation that fails (an fla whose API moved, an out-of-memory)
gets its error in the JSON instead of a time.

On a machine without a GPU or without the NVIDIA driver (every machine of this project so far) it says so and
exits 0: the GPU evidence there is bench/gpu/model_report.py's model, never a time.

usage: run.py --lac LAC --kernels DIR [--n 1024,4096] [--dtypes f16,bf16,f32] [--repeat 20] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Entries with [B, H, N, D] inputs; the other library entries take torch_baseline.LIBRARY's shapes.
BHND = {"linear_attention": "linear_attention.mlir", "linear_attention_causal": "linear_attention.mlir",
        "flow_attention": "flow_attention.mlir", "flow_attention_causal": "flow_attention.mlir"}
LIBRARY_FILES = {"aft": "aft.mlir", "flash": "flash.mlir", "decay": "retention.mlir"}
B, H, D = 2, 8, 64


def lac_run(lac, arguments):
    return subprocess.run([lac, "run", *arguments, "--cache-dir", "none"], capture_output=True, text=True)


def device_present(lac, kernels):
    """(True, "") with a usable device, else (False, why)."""
    probe = lac_run(lac, [f"{kernels}/linear_attention.mlir", "--entry", "linear_attention", "--random",
                          "1,1,16,16", "--target", "cuda"])
    if probe.returncode == 0:
        return True, ""
    message = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "exit " + str(probe.returncode)
    if "cannot be loaded" in message or "no CUDA device" in message:
        return False, message
    sys.exit("the cuda target fails on this machine: " + message)


def cases(torch, baseline, n):
    """(entry, .mlir file, CPU input tensors in signature order) for every library entry at sequence length n."""
    generator = torch.Generator().manual_seed(0)
    for entry, file in BHND.items():
        yield entry, file, [torch.randn(B, H, n, D, generator=generator) for _ in range(3)]
    for entry, (_, family, dims, names, max_n) in baseline.LIBRARY.items():
        if entry == "aft_conv" or (max_n is not None and n > max_n):
            continue
        arguments = baseline.library_inputs(torch, entry, n, dims, generator)
        yield entry, LIBRARY_FILES[family], arguments[: len(names.split())]


def time_ours(lac, kernels, entry, file, inputs, dtype, repeat):
    shapes = [arg for i, x in enumerate(inputs) for arg in ("--shape", f"{i}=" + "x".join(map(str, x.shape)))]
    result = lac_run(lac, [f"{kernels}/{file}", "--entry", entry, "--random", "1,1,1,1", *shapes, "--dtype", dtype,
                           "--target", "cuda", "--repeat", str(repeat), "--json"])
    if result.returncode != 0:
        return {"error": result.stderr.strip()}
    report = json.loads(result.stdout)
    return {"ms": report["kernel_median_ms"], "host_to_host_ms": report["median_ms"], "grid": report["gpu"]["grid"]}


def time_on_device(torch, function, repeat):
    function()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        function()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return {"ms": statistics.median(times)}


def fla_call(fla_ops, torch, entry, inputs):
    """The fla kernel for `entry` on [B, T, H, D] tensors, or None when fla has none."""
    to_bthd = [x.transpose(1, 2).contiguous() for x in inputs]
    if entry == "linear_attention_causal":
        q, k, v = to_bthd
        q, k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
        return lambda: fla_ops.linear_attn.chunk_linear_attn(q, k, v, normalize=True)
    if entry == "retention":
        return lambda: fla_ops.retention.chunk_retention(*to_bthd)
    if entry == "simple_gla":
        return lambda: fla_ops.simple_gla.chunk_simple_gla(*to_bthd)
    if entry == "gla":
        return lambda: fla_ops.gla.chunk_gla(*to_bthd)
    return None


def measure(torch, baseline, fla_ops, args, entry, file, cpu_inputs, dtype, n):
    row = {"entry": entry, "N": n, "dtype": dtype, "shapes": [list(x.shape) for x in cpu_inputs]}
    print(f"{entry} N={n} {dtype} ...", file=sys.stderr, flush=True)
    row["ours"] = time_ours(args.lac, args.kernels, entry, file, cpu_inputs, dtype, args.repeat)
    torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    inputs = [x.to("cuda", torch_dtype) for x in cpu_inputs]
    function = getattr(baseline, entry)
    extra = [baseline.band_mask(torch, n).cuda()] if entry == "aft_local" else []
    try:
        row["torch"] = time_on_device(torch, lambda: function(torch, *inputs, *extra), args.repeat)
    except Exception as error:  # an out-of-memory or an op without a kernel for this dtype
        row["torch"] = {"error": repr(error)}
    if fla_ops is not None:
        try:
            call = fla_call(fla_ops, torch, entry, inputs)
            if call is not None:
                row["fla"] = time_on_device(torch, call, args.repeat)
        except Exception as error:
            row["fla"] = {"error": repr(error)}
    return row


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels = [f"{r['entry']}\nN={r['N']} {r['dtype']}" for r in rows]
    figure, axes = plt.subplots(figsize=(max(8, len(rows) * 0.6), 5))
    for offset, (who, colour) in enumerate((("ours", "tab:blue"), ("torch", "tab:orange"), ("fla", "tab:green"))):
        xs = [i + (offset - 1) * 0.27 for i, r in enumerate(rows) if "ms" in r.get(who, {})]
        ys = [r[who]["ms"] for r in rows if "ms" in r.get(who, {})]
        axes.bar(xs, ys, width=0.27, label=who, color=colour)
    axes.set_xticks(range(len(rows)), labels, rotation=90, fontsize=7)
    axes.set_yscale("log")
    axes.set_ylabel("device time, ms (median)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lac", required=True)
    parser.add_argument("--kernels", required=True)
    parser.add_argument("--n", default="1024,4096", help="sequence lengths")
    parser.add_argument("--dtypes", default="f16,bf16,f32")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", default="bench-gpu")
    args = parser.parse_args()

    present, why = device_present(args.lac, args.kernels)
    if not present:
        print(f"no CUDA device here: {why}\nnothing measured (bench/gpu/model_report.py gives the modelled figures)")
        return 0
    import torch
    import torch_baseline as baseline
    if not torch.cuda.is_available():
        sys.exit("lac sees a CUDA device but this PyTorch does not: install a CUDA build of torch")
    try:
        import fla.ops as fla_ops
    except ImportError:
        fla_ops = None
        print("flash-linear-attention is not installed: its column stays empty", file=sys.stderr)

    rows = []
    for n in (int(x) for x in args.n.split(",")):
        for entry, file, cpu_inputs in cases(torch, baseline, n):
            for dtype in args.dtypes.split(","):
                rows.append(measure(torch, baseline, fla_ops, args, entry, file, cpu_inputs, dtype, n))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as out:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, out, indent=1)
    plotted = plot(rows, os.path.join(args.out, "results.png"))
    print(f"wrote {args.out}/results.json" + (f" and {args.out}/results.png" if plotted else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
