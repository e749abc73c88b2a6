#!/usr/bin/python3
"""Plots of engisweep's report and compare JSON files, as PNG and SVG.

    /usr/bin/python3 analysis/plots.py --report P.json [--compare C.json]
        [--evidence P.evidence.csv] --out DIR

From the report (engisweep report --out-prefix P):
  forest.{png,svg}    EngiScore x100 per model (and condition) with its
                      task-clustered bootstrap interval; flagged cells (too
                      few tasks, all 0, all 100) drawn as a hollow point
                      with the flag, never with an interval; the mean
                      reward as a hollow diamond where it differs
  outcomes.{png,svg}  terminal outcomes per model, stacked, as shares of the
                      recorded episodes
From the evidence table (engisweep report --out-prefix P):
  ladder.{png,svg}    the evidence ladder: pass rate of each assertion stage
                      per model, stages in the verifiers' order (also from
                      the report's "evidence" object when --evidence is
                      not given)
From a comparison (engisweep compare --out-prefix C):
  lifts.{png,svg}     paired lifts (a - b, x100) with their intervals and
                      Holm-adjusted p-values, one row per comparison

The numbers are the JSON files' own: nothing is recomputed here. Uses
Debian's python3-matplotlib only; the same inputs give the same bytes.
"""
import argparse
import csv
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    sys.exit(f"plots: matplotlib is missing ({e}); on Debian: apt-get install python3-matplotlib")

matplotlib.rcParams.update({
    "svg.hashsalt": "engisweep",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
})

OUTCOMES = ["done", "fail_declared", "turn_limit", "time_limit", "agent_error",
            "env_crash", "infra_error", "other_outcome"]
COLOURS = ["#4c9a2a", "#d9a400", "#e07b39", "#c44e52", "#8172b2", "#7f7f7f", "#a6a6a6",
           "#d9d9d9"]


def save(fig, out, name):
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=150, bbox_inches="tight",
                    metadata=meta)
    plt.close(fig)


def arm_label(r, conditions):
    return r["model"] if len(conditions) < 2 else f"{r['model']} / {r['condition']}"


def forest(report, out):
    rows = [r for r in report["rows"] if r["table"] == "overall"]
    conditions = {r["condition"] for r in rows}
    rows.sort(key=lambda r: (-(r["score_x100"] if r["score_x100"] is not None else -1),
                             r["model"], r["condition"]))
    fig, ax = plt.subplots(figsize=(6.5, 0.9 + 0.32 * len(rows)))
    reward_drawn = False
    for y, r in enumerate(reversed(rows)):
        s = r["score_x100"]
        if s is None:
            # no scored episode: no score, said so instead of a point at 0
            ax.annotate("no score", (0, y), xytext=(2, -3), textcoords="offset points",
                        fontsize=7, color="#666666")
            continue
        if r["ci_flag"] == "ok":
            ax.plot([r["ci_lo_x100"], r["ci_hi_x100"]], [y, y], color="#1f4e79", lw=2)
            ax.plot(s, y, "o", color="#1f4e79")
        else:
            ax.plot(s, y, "o", mfc="white", color="#1f4e79")
            ax.annotate(r["ci_flag"].replace("_", " "), (s, y), xytext=(6, 3),
                        textcoords="offset points", fontsize=7, color="#666666")
        w = r.get("reward_x100")
        if w is not None and w != s:
            ax.plot(w, y, "d", mfc="white", color="#b05a00", ms=5,
                    label="mean reward" if not reward_drawn else None)
            reward_drawn = True
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{arm_label(r, conditions)} (n={r['tasks']})" for r in reversed(rows)])
    ax.set_xlim(0, 100)
    ax.set_xlabel("EngiScore x100, 95 % task-clustered bootstrap interval")
    b = report["bootstrap"]
    ax.set_title(f"Scores by model ({b['draws']} draws, seed {b['seed']})", loc="left")
    ax.grid(axis="x", color="#e5e5e5")
    if reward_drawn:
        ax.legend(fontsize=7, frameon=False, loc="lower right")
    save(fig, out, "forest")


def outcomes(report, out):
    rows = [r for r in report["rows"] if r["table"] == "overall"]
    conditions = {r["condition"] for r in rows}
    fig, ax = plt.subplots(figsize=(6.5, 0.9 + 0.32 * len(rows)))
    labels = []
    for y, r in enumerate(rows):
        total = sum(r.get(k, 0) for k in OUTCOMES) or 1
        left = 0.0
        for k, c in zip(OUTCOMES, COLOURS):
            w = 100.0 * r.get(k, 0) / total
            ax.barh(y, w, left=left, color=c, label=k if y == 0 else None, height=0.7)
            left += w
        labels.append(f"{arm_label(r, conditions)} (n={r['episodes']})")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of recorded episodes, %")
    ax.set_title("Terminal outcomes", loc="left")
    ax.legend(ncol=4, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18),
              frameon=False)
    save(fig, out, "outcomes")


def lifts(compare, out):
    rows = compare["rows"]
    fig, ax = plt.subplots(figsize=(6.5, 0.9 + 0.32 * max(1, len(rows))))
    labels = []
    for y, r in enumerate(rows):
        labels.append(f"{r['within']}: {r['a']} − {r['b']}")
        s = r["lift_x100"]
        if s is None:
            continue
        if r["ci_flag"] == "ok":
            ax.plot([r["ci_lo_x100"], r["ci_hi_x100"]], [y, y], color="#7a1f1f", lw=2)
            ax.plot(s, y, "o", color="#7a1f1f")
        else:
            ax.plot(s, y, "o", mfc="white", color="#7a1f1f")
        p = r["p_holm"]
        if p is not None:
            ax.annotate(f"p={p:.3g}", (s, y), xytext=(6, 4), textcoords="offset points",
                        fontsize=7, color="#444444")
    ax.axvline(0, color="#999999", lw=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("paired lift, score x100 (95 % paired bootstrap; p Holm-adjusted)")
    fam = compare["family"]
    base = f" vs {fam['baseline']}" if fam["baseline"] else " (all pairs)"
    ax.set_title(f"Paired lifts, {fam['axis']}{base}, family of {fam['size']}", loc="left")
    ax.grid(axis="x", color="#e5e5e5")
    save(fig, out, "lifts")


def ladder_rows(evidence):
    """The evidence CSV's rows from the "evidence" object of a report."""
    rows = []
    for arm in evidence["arms"]:
        for step in arm["ladder"]:
            rate = step["pass_rate"]
            rows.append({"model": arm["model"], "condition": arm["condition"],
                         "stage": step["stage"], "pass_rate": "" if rate is None else str(rate)})
    return rows


def ladder(path, out, rows=None):
    if rows is None:
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["stage"] != "none"]
    stages, arms = [], []
    for r in rows:
        if r["stage"] not in stages:
            stages.append(r["stage"])
        if (r["model"], r["condition"]) not in arms:
            arms.append((r["model"], r["condition"]))
    conditions = {c for _, c in arms}
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    markers = "osD^vP*X"
    for k, (m, c) in enumerate(arms):
        ys = []
        for s in stages:
            hit = [r for r in rows if (r["model"], r["condition"], r["stage"]) == (m, c, s)]
            ys.append(100 * float(hit[0]["pass_rate"]) if hit and hit[0]["pass_rate"] else None)
        xs = [i for i, y in enumerate(ys) if y is not None]
        label = m if len(conditions) < 2 else f"{m} / {c}"
        ax.plot(xs, [ys[i] for i in xs], marker=markers[k % len(markers)], label=label)
    ax.set_xticks(range(len(stages)))
    ax.set_xticklabels(stages, rotation=20, ha="right")
    ax.set_ylim(-3, 103)
    ax.set_ylabel("pass rate, % of applicable episodes")
    ax.set_title("Evidence ladder (unavailable and missing verdicts count as failures)",
                 loc="left")
    ax.grid(axis="y", color="#e5e5e5")
    ax.legend(fontsize=7, frameon=False)
    save(fig, out, "ladder")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", help="P.json from engisweep report --out-prefix P")
    ap.add_argument("--compare", help="C.json from engisweep compare --out-prefix C")
    ap.add_argument("--evidence", help="P.evidence.csv from engisweep report --out-prefix P")
    ap.add_argument("--out", required=True, help="folder for the PNG and SVG files")
    a = ap.parse_args()
    if not a.report and not a.compare and not a.evidence:
        ap.error("nothing to draw: give --report, --compare or --evidence")
    os.makedirs(a.out, exist_ok=True)
    if a.evidence:
        try:
            ladder(a.evidence, a.out)
        except (OSError, KeyError, ValueError) as e:
            sys.exit(f"plots: cannot read '{a.evidence}': {e}")
    for path, fmt in ((a.report, "engisweep-report"), (a.compare, "engisweep-compare")):
        if not path:
            continue
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"plots: cannot read '{path}': {e}")
        if doc.get("format") != fmt:
            sys.exit(f"plots: '{path}' is not an {fmt} file")
        if fmt == "engisweep-report":
            forest(doc, a.out)
            outcomes(doc, a.out)
            if not a.evidence and doc.get("evidence") and doc["evidence"]["stages"]:
                ladder(None, a.out, ladder_rows(doc["evidence"]))
        else:
            lifts(doc, a.out)


main()
