#!/usr/bin/env python3
# ===- plot.py - Plots la-bench's JSON: time vs N per kernel, log-log ---------------------------------=== #
#
# usage: python3 bench/plot.py results.json [out.png]
#        python3 bench/plot.py --vs-torch results.json [out.png]
#
# One panel per kernel: the generated kernel's median time (with its min as a thin band), the unfused
# reference, PyTorch eager and the roofline bound, against N on log-log axes. Baselines that were skipped
# or not run are left out of that panel. One figure per family group (flow/linear attention, aft, flash,
# decay): written to out.png when the JSON holds one group, else to out-<group>.png for each. Needs
# matplotlib (`pip install matplotlib`).
#
# --vs-torch instead draws one figure of speed-ups: for every kernel and N, PyTorch eager's and torch.compile's
# median over the generated kernel's (above 1: the generated kernel is faster), on a log axis.
#
# ===----------------------------------------------------------------------------------------------=== #
import json
import os
import sys

# la-bench's families; JSON written before the library kernels has no "family" field (flow/linear only).
GROUPS = [("flow-linear", ("flow", "linear")), ("aft", ("aft",)), ("flash", ("flash",)), ("decay", ("decay",))]


def family(row):
    if "family" in row:
        return row["family"]
    return "flow" if row["kernel"].startswith("flow") else "linear"


def series(rows, key):
    """(N, value) pairs of the rows where `key` has a figure."""
    points = [(row["N"], row[key]) for row in rows if row.get(key) is not None]
    return [n for n, _ in points], [v for _, v in points]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print("usage: plot.py results.json [out.png]", file=sys.stderr)
        return 2
    vs_torch = argv[1] == "--vs-torch"
    if vs_torch:
        argv = argv[:1] + argv[2:]
    out = argv[2] if len(argv) > 2 else "la-bench.png"
    with open(argv[1]) as f:
        # Parity pairs (objects without "kernel") are a table of ratios, not a time against N.
        rows = [row for row in json.load(f) if "kernel" in row]
    if not rows:
        print("plot.py: no rows in %s" % argv[1], file=sys.stderr)
        return 1

    import matplotlib
    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt

    if vs_torch:
        return plot_speedups(plt, rows, out)
    groups = [(name, [row for row in rows if family(row) in members]) for name, members in GROUPS]
    groups = [(name, mine) for name, mine in groups if mine]
    stem, ext = os.path.splitext(out)
    for name, mine in groups:
        plot_group(plt, mine, out if len(groups) == 1 else "%s-%s%s" % (stem, name, ext or ".png"))
    return 0


def plot_speedups(plt, rows, out):
    """Bars of torch / generated per kernel: eager and torch.compile side by side, one shade per N."""
    rows = [row for row in rows if row.get("generated_median_ms")]
    kernels = []
    for row in rows:
        if row["kernel"] not in kernels:
            kernels.append(row["kernel"])
    sizes = sorted({row["N"] for row in rows})
    fig, ax = plt.subplots(figsize=(max(8.0, 0.9 * len(kernels)), 4.8))
    width = 0.8 / (2 * len(sizes))
    colours = {"torch_median_ms": ("tab:green", "eager"), "torch_compile_median_ms": ("tab:purple", "torch.compile")}
    slot = 0
    for key, (colour, label) in colours.items():
        for index, n in enumerate(sizes):
            xs, ys = [], []
            for position, kernel in enumerate(kernels):
                row = next((r for r in rows if r["kernel"] == kernel and r["N"] == n), None)
                if row and row.get(key):
                    xs.append(position - 0.4 + (slot + 0.5) * width)
                    ys.append(row[key] / row["generated_median_ms"])
            alpha = 0.45 + 0.55 * (index + 1) / len(sizes)
            ax.bar(xs, ys, width, color=colour, alpha=alpha, label="%s, N=%d" % (label, n))
            slot += 1
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, rotation=35, ha="right")
    ax.set_ylabel("PyTorch ms / generated ms")
    first = rows[0]
    ax.set_title("Generated kernels against PyTorch on the CPU, %d threads, measured in the same run" %
                 first["threads"], fontsize="medium")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("plot.py: wrote %s" % out)
    return 0


def plot_group(plt, rows, out):
    """One figure: a panel per kernel of `rows`."""
    kernels = []
    for row in rows:
        if row["kernel"] not in kernels:
            kernels.append(row["kernel"])
    columns = 2 if len(kernels) > 1 else 1
    lines = (len(kernels) + columns - 1) // columns
    fig, axes = plt.subplots(lines, columns, figsize=(6.4 * columns, 4.6 * lines), squeeze=False)

    styles = [
        ("generated_median_ms", "generated (median)", dict(color="tab:blue", marker="o", linewidth=2)),
        ("reference_median_ms", "unfused reference", dict(color="tab:orange", marker="s")),
        ("torch_median_ms", "PyTorch eager", dict(color="tab:green", marker="^")),
        ("torch_compile_median_ms", "torch.compile", dict(color="tab:purple", marker="v")),
        ("roofline_ms", "roofline bound", dict(color="black", linestyle="--", marker="")),
    ]
    for index, kernel in enumerate(kernels):
        ax = axes[index // columns][index % columns]
        mine = sorted((row for row in rows if row["kernel"] == kernel), key=lambda row: row["N"])
        for key, label, style in styles:
            xs, ys = series(mine, key)
            if xs:
                ax.plot(xs, ys, label=label, **style)
        xs, lows = series(mine, "generated_min_ms")
        _, highs = series(mine, "generated_median_ms")
        if xs and len(lows) == len(highs):
            ax.fill_between(xs, lows, highs, color="tab:blue", alpha=0.15, linewidth=0)
        for row in mine:
            if row.get("ok") is False:
                y = row.get("generated_median_ms") or row["roofline_ms"]
                ax.annotate("WRONG" if row.get("error") is None else "ERROR", (row["N"], y), color="red")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        shape = mine[0].get("shape")
        ax.set_title(kernel + (" (%s)" % shape if shape and "family" in mine[0] and
                               mine[0]["family"] not in ("flow", "linear") else ""))
        ax.set_xlabel("N (= M = T)")
        ax.set_ylabel("time per call [ms]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    for index in range(len(kernels), lines * columns):
        axes[index // columns][index % columns].axis("off")

    first = rows[0]
    dims = ("B=%d H=%d D=%d Dv=%d, " % (first["B"], first["H"], first["D"], first["Dv"])
            if family(first) in ("flow", "linear") else "")
    title = "%s%d threads; roofline from %.1f GB/s and %.0f GFLOP/s, measured in-run" % (
        dims, first["threads"], first["bandwidth_gbs"], first["peak_gflops"])
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("plot.py: wrote %s" % out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
