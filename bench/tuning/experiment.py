#!/usr/bin/env python3
# ===- experiment.py - how well the tuner's strategies and cost model do, on this machine ---------------=== #
#
# usage: python3 bench/tuning/experiment.py --lac build/bin/lac --kernels kernels --out OUT
#            [--threads 2] [--measure-ms 100] [--budget-share 0.25] [--seeds 5] [--quick]
#
# 1. An exhaustive search (`lac tune --strategy exhaustive --log`) of each kernel × shape below, over the
#    tunables the cost model sees (chunk-size, vector-tile, max-rows, reduction-panel; the others pinned at
#    their defaults): OUT/traces/<entry>-N<n>-D<d>.jsonl, every candidate measured against the default.
# 2. Replays of that trace (`lac tune --replay`, nothing runs): the model strategy and, for comparison, random
#    and anneal with several seeds, each with a quarter of the space as budget; and the model over the whole
#    space for its rank correlation with the measured times.
# 3. OUT/model.json (every figure), OUT/model.md (the table for docs/BENCHMARKS.md) and, with matplotlib,
#    OUT/best-so-far.png (best time found against evaluations, per strategy), OUT/heatmap.png (vector-tile ×
#    max-rows, the best over the other tunables) and OUT/predicted-vs-measured.png.
#
# `--plots-only` redraws the figures from OUT/model.json and the traces without running anything;
# `--replay-only` keeps the traces and replays them again (nothing is timed: after a change to the cost
# model). The exhaustive searches need the machine to themselves: run nothing else meanwhile (a build
# doubles the figures).
#
# ===----------------------------------------------------------------------------------------------=== #
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plotting import pyplot  # noqa: E402

KERNELS = [
    ("linear_attention.mlir", "linear_attention"),
    ("linear_attention.mlir", "linear_attention_causal"),
    ("flow_attention.mlir", "flow_attention"),
    ("flow_attention.mlir", "flow_attention_causal"),
    ("retention.mlir", "retention"),
]
# (N, D); B=2, H=2 slices, two per thread at --threads 2.
SHAPES = [(1024, 64), (4096, 64), (1024, 128)]
PINS = ["--group-sweeps=false", "--sweep-tile=64", "--prefetch-tile-bytes=65536"]
# --quick (the test): one kernel at a tiny shape over chunk-size × max-rows, 12 candidates.
QUICK_KERNELS = [("linear_attention.mlir", "linear_attention_causal")]
QUICK_SHAPES = [(64, 16)]
QUICK_PINS = PINS + ["--reduction-panel=64", "--vector-tile=64"]


def run_json(command):
    """Runs `command`; its stdout's last line as JSON (stderr passes through for progress)."""
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError("failed (%d): %s" % (done.returncode, " ".join(command)))
    return json.loads(done.stdout.strip().splitlines()[-1])


def read_trace(path):
    """The candidates of a trace, in the order they were evaluated."""
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [row for row in rows if "status" in row]


def best_so_far(candidates):
    best, series = float("inf"), []
    for candidate in candidates:
        if "relative_time" in candidate:
            best = min(best, candidate["relative_time"])
        series.append(best)
    return series


def tune_base(args, file, entry, n, d):
    return [args.lac, "tune", os.path.join(args.kernels, file), "--entry", entry, "--random", "2,2,%d,%d" % (n, d),
            "--threads", str(args.threads), "--cache-dir", os.path.join(args.out, "cache")] + (
                QUICK_PINS if args.quick else PINS)


def measure(args):
    os.makedirs(os.path.join(args.out, "traces"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "replays"), exist_ok=True)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    kernels = QUICK_KERNELS if args.quick else KERNELS
    results = []
    previous = []
    if args.replay_only:
        with open(os.path.join(args.out, "model.json")) as f:
            previous = json.load(f)
    for file, entry in kernels:
        for n, d in shapes:
            name = "%s-N%d-D%d" % (entry, n, d)
            trace = os.path.join(args.out, "traces", name + ".jsonl")
            base = tune_base(args, file, entry, n, d)
            if args.replay_only:
                # The traces of an earlier run: only the replays (and so the model's figures) are new.
                exhaustive = next(row["exhaustive"] for row in previous if row["kernel"] == entry
                                  and row["N"] == n and row["D"] == d)
            else:
                print("experiment.py: exhaustive search of %s" % name, file=sys.stderr)
                exhaustive = run_json(base + ["--strategy", "exhaustive", "--measure-ms", str(args.measure_ms),
                                              "--db", os.path.join(args.out, "db.jsonl"), "--log", trace, "--json"])
            space = exhaustive["space_size"]
            budget = max(2, int(space * args.budget_share))
            row = {"kernel": entry, "N": n, "D": d, "space_size": space, "budget": budget,
                   "exhaustive": exhaustive, "replays": {}}
            runs = [("model", 0)] + [(s, seed) for s in ("random", "anneal") for seed in range(1, args.seeds + 1)]
            for strategy, seed in runs:
                log = os.path.join(args.out, "replays", "%s-%s-%d.jsonl" % (name, strategy, seed))
                replay = run_json(base + ["--replay", trace, "--strategy", strategy, "--seed", str(seed),
                                          "--budget", str(budget), "--log", log, "--json"])
                row["replays"].setdefault(strategy, []).append(replay)
            whole = os.path.join(args.out, "replays", "%s-model-all.jsonl" % name)
            row["model_all"] = run_json(base + ["--replay", trace, "--strategy", "model", "--budget", str(space),
                                                "--log", whole, "--json"])
            results.append(row)
    with open(os.path.join(args.out, "model.json"), "w") as f:
        json.dump(results, f, indent=1)
    return results


def table(results):
    lines = ["| kernel | N | D | space | budget (25%) | exhaustive best | model: found (gap) | model: evals to ≤3% "
             "| rank corr. | random: median gap | anneal: median gap |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    for row in results:
        model = row["replays"]["model"][0]
        within = model["evaluations_to_within_3pct"]
        lines.append("| %s | %d | %d | %d | %d | %.3f× | %.3f× (%+.1f%%) | %s | %.2f | %+.1f%% | %+.1f%% |" % (
            row["kernel"], row["N"], row["D"], row["space_size"], row["budget"], model["trace_best_relative"],
            model["best_relative"], 100 * model["gap"], within if within > 0 else "not within budget",
            row["model_all"].get("model_rank_correlation", float("nan")),
            100 * median([r["gap"] for r in row["replays"]["random"]]),
            100 * median([r["gap"] for r in row["replays"]["anneal"]])))
    return "\n".join(lines) + "\n\nTimes relative to the default configuration's (1.000×), measured interleaved with it.\n"


def plots(args, results):
    plt = pyplot("experiment.py")
    if plt is None:
        return
    replays = os.path.join(args.out, "replays")
    # Best so far against evaluations: one panel per kernel × shape, a line per strategy run.
    columns = min(3, len(results))
    rows = (len(results) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.4 * rows), squeeze=False)
    colours = {"model": "tab:red", "random": "tab:blue", "anneal": "tab:green"}
    for ax, row in zip(axes.flat, results):
        name = "%s-N%d-D%d" % (row["kernel"], row["N"], row["D"])
        for strategy, runs in row["replays"].items():
            for i, run in enumerate(runs):
                seed = 0 if strategy == "model" else i + 1
                series = best_so_far(read_trace(os.path.join(replays, "%s-%s-%d.jsonl" % (name, strategy, seed))))
                ax.plot(range(1, len(series) + 1), series, color=colours[strategy], alpha=1 if seed == 0 else 0.35,
                        label=strategy if i == 0 else None, linewidth=2 if strategy == "model" else 1)
        ax.axhline(row["replays"]["model"][0]["trace_best_relative"], color="black", linestyle=":",
                   label="exhaustive best")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("best time / default's")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(results):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "best-so-far.png"), dpi=110)

    # Heatmap: vector-tile × max-rows of the first kernel × shape, the best over the other tunables.
    first = results[0]
    name = "%s-N%d-D%d" % (first["kernel"], first["N"], first["D"])
    cells = {}
    for candidate in read_trace(os.path.join(args.out, "traces", name + ".jsonl")):
        if "relative_time" not in candidate:
            continue
        options = dict(item.split("=", 1) for item in candidate["config"].split(","))
        key = (int(options["vector-tile"]), int(options["max-rows"]))
        cells[key] = min(cells.get(key, float("inf")), candidate["relative_time"])
    tiles = sorted({k[0] for k in cells})
    rows_ = sorted({k[1] for k in cells})
    grid = [[cells.get((t, r), float("nan")) for t in tiles] for r in rows_]
    fig, ax = plt.subplots(figsize=(5, 4))
    image = ax.imshow(grid, cmap="viridis_r", origin="lower")
    ax.set_xticks(range(len(tiles)), [str(t) for t in tiles])
    ax.set_yticks(range(len(rows_)), [str(r) for r in rows_])
    ax.set_xlabel("vector-tile (lanes)")
    ax.set_ylabel("max-rows")
    for y, line in enumerate(grid):
        for x, value in enumerate(line):
            if value == value:
                ax.text(x, y, "%.3f" % value, ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(image, label="best time / default's")
    ax.set_title("%s: best over chunk-size, reduction-panel" % name, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "heatmap.png"), dpi=110)

    # Predicted against measured, every kernel × shape (each normalised to its own default's prediction).
    fig, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.4 * rows), squeeze=False)
    for ax, row in zip(axes.flat, results):
        name = "%s-N%d-D%d" % (row["kernel"], row["N"], row["D"])
        candidates = [c for c in read_trace(os.path.join(replays, "%s-model-all.jsonl" % name))
                      if c.get("status") == "measured" and "predicted" in c]
        default = next((c["predicted"] for c in candidates if c["index"] == 0), None)
        if not candidates or not default:
            ax.axis("off")
            continue
        ax.scatter([c["predicted"] / default for c in candidates], [c["relative_time"] for c in candidates], s=10)
        ax.set_title("%s (ρ = %.2f)" % (name, row["model_all"].get("model_rank_correlation", float("nan"))),
                     fontsize=9)
        ax.set_xlabel("predicted cost / default's")
        ax.set_ylabel("measured time / default's")
    for ax in list(axes.flat)[len(results):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "predicted-vs-measured.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser(description="How well the tuner's strategies and cost model do (bench/tuning/).")
    parser.add_argument("--lac", default="build/bin/lac")
    parser.add_argument("--kernels", default="kernels")
    parser.add_argument("--out", default="tuning-experiment")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--measure-ms", type=float, default=100)
    parser.add_argument("--budget-share", type=float, default=0.25)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one kernel at a tiny shape and space (the test)")
    parser.add_argument("--plots-only", action="store_true", help="redraw from OUT/model.json and the traces")
    parser.add_argument("--replay-only", action="store_true",
                        help="keep OUT's exhaustive traces, replay them again (after a change to the model)")
    args = parser.parse_args()
    if args.plots_only:
        with open(os.path.join(args.out, "model.json")) as f:
            results = json.load(f)
    else:
        results = measure(args)
    with open(os.path.join(args.out, "model.md"), "w") as f:
        f.write(table(results))
    print(table(results))
    plots(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
