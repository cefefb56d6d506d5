#!/usr/bin/env python3
# ===- library.py - tuned against default for every library kernel --------------------------------------=== #
#
# usage: python3 bench/tuning/library.py --lac build/bin/lac --kernels kernels --out OUT
#            [--n 1024,4096,16384] [--d 64,128] [--threads 1,2] [--heads B,H] [--strategy anneal]
#            [--budget 16] [--measure-ms 100] [--entries a,b] [--plots-only]
#
# Runs `lac tune` for each library entry (bench/gpu/model_report.py's list and shapes) at each N, D and
# thread count, with a fresh tuning database, and writes OUT/library.json, OUT/library.md (the table for
# docs/BENCHMARKS.md: the default's and the tuned configuration's median time, measured interleaved in the
# tuner's final round, the speedup, what the tuned configuration changes, and the tuning time) and, with
# matplotlib, OUT/library.png (the speedup of each entry at each shape). Entries whose inputs at a shape are
# too large for this machine to tune in reasonable time are listed as skipped, with the reason.
#
# Timing needs the machine to itself: run nothing else meanwhile.
#
# ===----------------------------------------------------------------------------------------------=== #
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plotting import pyplot  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from model_report import entries  # noqa: E402  (the library's entries and their argument shapes)

# Entries whose cost grows with N² beyond what a tuning run here affords: the largest N each is tuned at, and
# why. At N = 16384 the [T, T] bias of aft_full is 1 GiB and a call of aft_full or GAU takes about a second, so
# each of their 12-candidate tunings would take minutes (aft_local reads only a band of its bias: tuned at every N).
MAX_N = {"aft_full": 4096, "aft_full_causal": 4096, "gau": 4096}
SKIP_REASON = "O(N²): a call takes about a second at N=16384 (aft_full: a 1 GiB bias)"


def differences(config, default):
    """The `name=value` items of `config` that `default` lacks."""
    base = set(default.split(","))
    changed = [item for item in config.split(",") if item not in base]
    return " ".join(changed) if changed else "default"


def measure(args):
    b, h = (int(x) for x in args.heads.split(","))
    rows = []
    os.makedirs(args.out, exist_ok=True)
    db = os.path.join(args.out, "db.jsonl")
    for n in (int(x) for x in args.n.split(",")):
        for d in (int(x) for x in args.d.split(",")):
            for file, entry, arguments in entries(b, h, n, d):
                if args.entries and entry not in args.entries.split(","):
                    continue
                for threads in (int(x) for x in args.threads.split(",")):
                    row = {"entry": entry, "N": n, "D": d, "threads": threads, "B": b, "H": h}
                    if n > MAX_N.get(entry, n):
                        row["skipped"] = SKIP_REASON
                        rows.append(row)
                        continue
                    command = [args.lac, "tune", os.path.join(args.kernels, file), "--entry", entry, *arguments,
                               "--threads", str(threads), "--strategy", args.strategy, "--budget", str(args.budget),
                               "--measure-ms", str(args.measure_ms), "--db", db, "--cache-dir",
                               os.path.join(args.out, "cache"), "--json"]
                    print("library.py: %s N=%d D=%d threads=%d" % (entry, n, d, threads), file=sys.stderr)
                    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    if done.returncode != 0:
                        row["error"] = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
                    else:
                        result = json.loads(done.stdout.strip().splitlines()[-1])
                        row.update({key: result[key] for key in ("best_config", "best_ms", "default_ms",
                                                                  "speedup", "evaluated", "space_size",
                                                                  "tuning_s", "rejected")})
                    rows.append(row)
                    with open(os.path.join(args.out, "library.json"), "w") as f:
                        json.dump(rows, f, indent=1)
    return rows


def table(rows, default_config):
    lines = ["| entry | N | D | threads | default ms | tuned ms | speedup | tuned configuration changes | "
             "evaluated / space | tuning s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        head = "| %s | %d | %d | %d |" % (row["entry"], row["N"], row["D"], row["threads"])
        if "skipped" in row:
            lines.append(head + " — | — | — | skipped: %s | — | — |" % row["skipped"])
        elif "error" in row:
            lines.append(head + " — | — | — | error: %s | — | — |" % row["error"].replace("|", "/"))
        else:
            lines.append(head + " %.4g | %.4g | %.2f× | %s | %d / %d | %.0f |" % (
                row["default_ms"], row["best_ms"], row["speedup"],
                differences(row["best_config"], default_config), row["evaluated"], row["space_size"],
                row["tuning_s"]))
    return "\n".join(lines) + "\n"


def plot(args, rows):
    """A heatmap of default time / tuned time: one row per entry, one column per (N, D, threads); a blank cell
    was skipped or failed. With 18 entries at 12 shapes, bars would be unreadable."""
    plt = pyplot("library.py")
    if plt is None:
        return
    measured = [row for row in rows if "speedup" in row]
    if not measured:
        return
    shapes = sorted({(row["N"], row["D"], row["threads"]) for row in rows})
    names = list(dict.fromkeys(row["entry"] for row in rows))
    grid = [[float("nan")] * len(shapes) for _ in names]
    for row in measured:
        grid[names.index(row["entry"])][shapes.index((row["N"], row["D"], row["threads"]))] = row["speedup"]
    fig, ax = plt.subplots(figsize=(max(6, 0.75 * len(shapes) + 3), 0.32 * len(names) + 1.8))
    top = max(1.5, max(row["speedup"] for row in measured))
    image = ax.imshow(grid, cmap="viridis", vmin=1, vmax=top, aspect="auto")
    for i, line in enumerate(grid):
        for j, value in enumerate(line):
            if value == value:  # not NaN
                ax.text(j, i, "%.2f" % value, ha="center", va="center", fontsize=6,
                        color="white" if value < 1 + 0.6 * (top - 1) else "black")
    ax.set_xticks(range(len(shapes)), ["N=%d\nD=%d\n%dT" % shape for shape in shapes], fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(image, ax=ax, label="default time / tuned time")
    ax.set_title("lac tune: tuned against default (measured interleaved, this machine; blank: skipped)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "library.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser(description="Tuned against default for every library kernel (bench/tuning/).")
    parser.add_argument("--lac", default="build/bin/lac")
    parser.add_argument("--kernels", default="kernels")
    parser.add_argument("--out", default="tuning-library")
    parser.add_argument("--n", default="1024,4096,16384")
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--heads", default="2,2", help="B,H of the [B, H, N, D] inputs")
    parser.add_argument("--strategy", default="anneal")
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--measure-ms", type=float, default=100)
    parser.add_argument("--entries", default="", help="only these entries (comma-separated)")
    parser.add_argument("--plots-only", action="store_true")
    args = parser.parse_args()
    if args.plots_only:
        with open(os.path.join(args.out, "library.json")) as f:
            rows = json.load(f)
    else:
        rows = measure(args)
    default_config = subprocess.run([args.lac, "run", os.path.join(args.kernels, "linear_attention.mlir"), "--entry",
                                     "linear_attention", "--random", "1,1,16,16", "--threads", "1", "--cache-dir",
                                     "none", "--json"], stdout=subprocess.PIPE, text=True, check=True)
    default = json.loads(default_config.stdout.strip().splitlines()[-1])["config"]
    with open(os.path.join(args.out, "library.md"), "w") as f:
        f.write(table(rows, default))
    print(table(rows, default))
    plot(args, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
