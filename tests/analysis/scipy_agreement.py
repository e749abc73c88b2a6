"""engisweep report and compare against SciPy on a generated results table.

360 tasks x 5 models x 3 trials under two paired conditions (base, hint),
written as an episodes CSV. Checked:
  - report: per-arm counts and means exact; interval endpoints within
    max(0.5, 0.2 x bootstrap SE) + one lattice step (100 / (3 x tasks)) of
    scipy.stats.bootstrap (percentile, task means, 10,000 resamples), and
    the same for --interval bca against method='BCa';
  - compare: the paired lifts and their intervals the same way against
    scipy.stats.bootstrap on the task differences; sign-flip p-values within
    4 sqrt(2 p (1 - p) / 10,000) + 0.0002 of scipy.stats.permutation_test
    (permutation_type='samples' on the paired task differences);
  - BCa on a small binary cell, where a quarter of the draws tie the
    estimate: the ends against SciPy's (which counts ties half in z0) over
    eight seeds, and apart from what counting only the draws below would give;
  - Holm-adjusted p-values against a computation by hand from the printed p,
    one family per condition (or per model for the ablation), with the
    family sizes;
  - the same input and seed give byte-identical outputs.
Environment: ENGISWEEP (the binary), ENGI_SCRATCH (a scratch folder).
"""
import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
from scipy import stats

BIN = os.environ["ENGISWEEP"]
WORK = os.path.join(os.environ["ENGI_SCRATCH"], "scipy_agreement")
os.makedirs(WORK, exist_ok=True)
os.chdir(WORK)

NTASKS, TRIALS, DRAWS = 360, 3, 10000
MODELS = ["m0", "m1", "m2", "m3", "m4"]
CONDS = ["base", "hint"]
# hint lifts: none, small, medium, large, negative
HINT_LIFT = [0.0, 0.04, 0.08, 0.2, -0.06]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def generate():
    rng = np.random.default_rng(7)
    easy = rng.uniform(0.0, 1.0, NTASKS)
    rows = []
    for t in range(NTASKS):
        for mi, m in enumerate(MODELS):
            for c in CONDS:
                p = easy[t] + 0.05 * mi - 0.1 + (HINT_LIFT[mi] if c == "hint" else 0.0)
                p = min(1.0, max(0.0, p))
                for trial in range(1, TRIALS + 1):
                    s = int(rng.uniform() < p)
                    # a third of the tasks are scored with a continuous quality
                    score = s if t % 3 else round(s * rng.uniform(0.5, 1.0), 6)
                    rows.append([f"task{t:04d}", m, trial, c, s, score, s, 12, 2000, 300,
                                 0.02, 40.0, "done", "CAD" if t % 2 else "CAE",
                                 "single", "cli", "openscad",
                                 "binary" if t % 3 else "optimization"])
    with open("episodes.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task_id", "model", "trial", "condition", "success", "score", "feasible",
                    "turns", "tokens_in", "tokens_out", "cost_usd", "wall_s", "outcome",
                    "domain", "type", "interface", "software", "scoring"])
        w.writerows(rows)
    means = {}
    for r in rows:
        means.setdefault((r[1], r[3]), {}).setdefault(r[0], []).append(r[5])
    return {k: np.array([np.mean(v[t]) for t in sorted(v)]) for k, v in means.items()}


def run(*args):
    subprocess.run([BIN, *args], check=True, stdout=subprocess.PIPE)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def boot(x, method):
    return stats.bootstrap((x,), np.mean, method=method, n_resamples=DRAWS,
                           confidence_level=0.95, random_state=1, vectorized=True)


def close_interval(what, lo, hi, x, method="percentile"):
    res = boot(x, method)
    se = 100 * res.standard_error
    tol = max(0.5, 0.2 * se) + 100.0 / (TRIALS * len(x))
    slo, shi = 100 * res.confidence_interval.low, 100 * res.confidence_interval.high
    if abs(lo - slo) > tol or abs(hi - shi) > tol:
        fail(f"{what}: interval [{lo:.3f}, {hi:.3f}], scipy [{slo:.3f}, {shi:.3f}], tol {tol:.3f}")
    return max(abs(lo - slo), abs(hi - shi)), tol


def holm(p):
    order = sorted(range(len(p)), key=lambda i: (p[i], i))
    adj, running = [0.0] * len(p), 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - k) * p[i]))
        adj[i] = running
    return adj


def main():
    means = generate()

    # ---- report: per-arm intervals ----
    run("report", "--out-prefix", "r1", "episodes.csv")
    run("report", "--out-prefix", "r2", "episodes.csv")
    rows = [r for r in read_csv("r1.csv") if r["table"] == "overall"]
    if len(rows) != len(MODELS) * len(CONDS):
        fail(f"report has {len(rows)} overall rows, expected {len(MODELS) * len(CONDS)}")
    worst = 0.0
    for r in rows:
        x = means[(r["model"], r["condition"])]
        if int(r["tasks"]) != NTASKS or int(r["scored"]) != NTASKS * TRIALS:
            fail(f"report {r['model']}/{r['condition']}: tasks {r['tasks']}, scored {r['scored']}")
        if abs(float(r["score_x100"]) - 100 * x.mean()) > 1e-8:
            fail(f"report {r['model']}/{r['condition']}: score {r['score_x100']} != {100 * x.mean()}")
        # EngiScore takes the quality of optimization tasks and the success
        # of the others, which here equals their score: the mean reward
        # (of every score) is the same, from the same resample
        for k in ("x100", "lo_x100", "hi_x100"):
            sk = "score_x100" if k == "x100" else "ci_" + k
            if r["reward_" + k] != r[sk]:
                fail(f"report {r['model']}/{r['condition']}: reward_{k} {r['reward_' + k]} != {r[sk]}")
        if r["ci_flag"] != "ok":
            fail(f"report {r['model']}/{r['condition']}: flag {r['ci_flag']}")
            continue
        d, tol = close_interval(f"report {r['model']}/{r['condition']}",
                                float(r["ci_lo_x100"]), float(r["ci_hi_x100"]), x)
        worst = max(worst, d / tol)
    print(f"report intervals: worst distance {worst:.2f} of the tolerance")

    # ---- report --interval bca against scipy's BCa ----
    run("report", "--interval", "bca", "--out-prefix", "rb", "episodes.csv")
    worst = 0.0
    for r in (r for r in read_csv("rb.csv") if r["table"] == "overall"):
        x = means[(r["model"], r["condition"])]
        d, tol = close_interval(f"report BCa {r['model']}/{r['condition']}",
                                float(r["ci_lo_x100"]), float(r["ci_hi_x100"]), x, "BCa")
        worst = max(worst, d / tol)
    print(f"report BCa intervals: worst distance {worst:.2f} of the tolerance")

    # ---- BCa where it matters: skewed task scores, 40 tasks, one trial ----
    rng = np.random.default_rng(12)
    skew = np.round(np.minimum(1.0, rng.exponential(0.03, 40)), 6)
    skew[rng.uniform(size=40) < 0.1] = 1.0
    with open("skewed.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task_id", "model", "trial", "success", "score", "scoring"])
        for t, v in enumerate(skew):
            w.writerow([f"s{t:03d}", "m", 1, int(v >= 1.0), f"{v:.6f}", "optimization"])
    run("report", "--interval", "bca", "--out-prefix", "sb", "skewed.csv")
    run("report", "--out-prefix", "sp", "skewed.csv")
    rb = [r for r in read_csv("sb.csv") if r["table"] == "overall"][0]
    rp = [r for r in read_csv("sp.csv") if r["table"] == "overall"][0]
    res_b, res_p = boot(skew, "BCa"), boot(skew, "percentile")
    # the BCa ends sit at extreme quantiles here (about 0.997): their Monte
    # Carlo spread is wide, so ours must fall inside the range of SciPy's
    # ends over eight seeds, widened by 0.2 bootstrap SE
    tol = 0.2 * 100 * res_b.standard_error
    runs = [stats.bootstrap((skew,), np.mean, method="BCa", n_resamples=DRAWS,
                            random_state=k, vectorized=True).confidence_interval
            for k in range(1, 9)]
    for name, ours, ends in (("lo", rb["ci_lo_x100"], [100 * c.low for c in runs]),
                             ("hi", rb["ci_hi_x100"], [100 * c.high for c in runs])):
        if not min(ends) - tol <= float(ours) <= max(ends) + tol:
            fail(f"skewed BCa {name}: {ours} outside scipy's [{min(ends):.3f}, "
                 f"{max(ends):.3f}] +- {tol:.3f}")
    shift = 100 * max(abs(res_b.confidence_interval.low - res_p.confidence_interval.low),
                      abs(res_b.confidence_interval.high - res_p.confidence_interval.high))
    print(f"skewed: BCa [{float(rb['ci_lo_x100']):.3f}, {float(rb['ci_hi_x100']):.3f}], scipy "
          f"[{100 * res_b.confidence_interval.low:.3f}, {100 * res_b.confidence_interval.high:.3f}]"
          f"; percentile [{float(rp['ci_lo_x100']):.3f}, {float(rp['ci_hi_x100']):.3f}]; "
          f"BCa moves an end by {shift:.3f}, tolerance {tol:.3f}")
    if shift <= tol:
        fail("the skewed sample does not tell BCa from percentile")

    # ---- BCa with ties: 10 tasks, one binary trial, mean 0.5 ----
    ties = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 0], dtype=float)
    with open("ties.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task_id", "model", "trial", "success", "score"])
        for t, v in enumerate(ties):
            w.writerow([f"q{t:02d}", "m", 1, int(v), int(v)])
    run("report", "--interval", "bca", "--out-prefix", "tb", "ties.csv")
    rt = [r for r in read_csv("tb.csv") if r["table"] == "overall"][0]
    runs = [stats.bootstrap((ties,), np.mean, method="BCa", n_resamples=DRAWS,
                            random_state=k, vectorized=True) for k in range(1, 9)]
    # what z0 from the draws strictly below alone would give, on SciPy's draws
    # (the acceleration is 0 here: the jackknife of a balanced 0/1 sample is
    # symmetric)
    strict = []
    for res in runs:
        dist = res.bootstrap_distribution
        z0 = stats.norm.ppf(np.mean(dist < ties.mean()))
        strict.append([100 * np.percentile(dist, 100 * stats.norm.cdf(2 * z0 + z))
                       for z in (stats.norm.ppf(0.025), stats.norm.ppf(0.975))])
    tol = 1.0
    for k, name in enumerate(("lo", "hi")):
        ours = float(rt[f"ci_{name}_x100"])
        ends = [100 * (r.confidence_interval.low if k == 0 else r.confidence_interval.high)
                for r in runs]
        if not min(ends) - tol <= ours <= max(ends) + tol:
            fail(f"ties BCa {name}: {ours} outside scipy's [{min(ends):.3f}, {max(ends):.3f}]")
    s_lo = [e[0] for e in strict]
    lo_ends = [100 * r.confidence_interval.low for r in runs]
    if max(s_lo) + tol >= min(lo_ends) - tol:
        fail(f"the ties sample does not tell the two z0 rules apart: {s_lo} vs {lo_ends}")
    print(f"ties: BCa [{rt['ci_lo_x100']}, {rt['ci_hi_x100']}], scipy lo "
          f"[{min(lo_ends):.1f}, {max(lo_ends):.1f}], strict-below lo [{min(s_lo):.1f}, "
          f"{max(s_lo):.1f}]")

    # ---- compare: the ablation family (hint vs base per model) ----
    run("compare", "--axis", "conditions", "--baseline", "base", "--out-prefix", "c1",
        "episodes.csv")
    run("compare", "--axis", "conditions", "--baseline", "base", "--out-prefix", "c2",
        "episodes.csv")
    crows = read_csv("c1.csv")
    if len(crows) != len(MODELS):
        fail(f"compare has {len(crows)} rows, expected {len(MODELS)}")
    worst_p = 0.0
    for r in crows:
        m = r["within"]
        d = means[(m, "hint")] - means[(m, "base")]
        if int(r["tasks"]) != NTASKS:
            fail(f"compare {m}: {r['tasks']} tasks")
        if abs(float(r["lift_x100"]) - 100 * d.mean()) > 1e-6:
            fail(f"compare {m}: lift {r['lift_x100']} != {100 * d.mean()}")
        close_interval(f"compare {m} lift", float(r["ci_lo_x100"]), float(r["ci_hi_x100"]), d)
        perm = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis),
                                      permutation_type="samples", vectorized=True,
                                      n_resamples=DRAWS, alternative="two-sided",
                                      random_state=2)
        p, sp = float(r["p"]), float(perm.pvalue)
        tol = 4 * math.sqrt(2 * sp * (1 - sp) / DRAWS) + 0.0002
        print(f"  {m}: lift {float(r['lift_x100']):+.2f}, p {p:.4f}, scipy {sp:.4f}, tol {tol:.4f}")
        if abs(p - sp) > tol:
            fail(f"compare {m}: p {p} vs scipy {sp}, tol {tol}")
        worst_p = max(worst_p, abs(p - sp) / tol)
    print(f"sign-flip p-values: worst distance {worst_p:.2f} of the tolerance")
    # one Holm family per model: the single test of each is its own
    for r in crows:
        if int(r["family"]) != 1 or abs(float(r["p_holm"]) - float(r["p"])) > 2e-6:
            fail(f"compare {r['within']}: family {r['family']}, Holm {r['p_holm']} != p {r['p']}")

    # ---- compare: all model pairs within each condition, Holm over 10 each ----
    run("compare", "--out-prefix", "c3", "episodes.csv")
    prow = read_csv("c3.csv")
    if len(prow) != 20:
        fail(f"all-pairs comparison has {len(prow)} rows, expected 20")
    for c in CONDS:
        fam = [r for r in prow if r["within"] == c]
        if len(fam) != 10 or any(int(r["family"]) != 10 for r in fam):
            fail(f"pairs within {c}: {len(fam)} rows, families {[r['family'] for r in fam]}")
        hand = holm([float(r["p"]) for r in fam])
        for r, h in zip(fam, hand):
            if abs(float(r["p_holm"]) - h) > 2e-6:
                fail(f"pairs {r['a']}-{r['b']} ({c}): Holm {r['p_holm']} != {h}")
    fams = json.load(open("c3.json"))["family"]
    if fams["size"] != 20 or fams["families"] != [{"within": c, "size": 10} for c in CONDS]:
        fail(f"compare JSON family: {fams}")

    # ---- determinism ----
    for a, b in [("r1.csv", "r2.csv"), ("r1.json", "r2.json"),
                 ("r1.evidence.csv", "r2.evidence.csv"), ("c1.csv", "c2.csv"),
                 ("c1.json", "c2.json")]:
        if open(a, "rb").read() != open(b, "rb").read():
            fail(f"{a} and {b} differ: same input and seed must give the same bytes")

    if failures:
        print(f"{len(failures)} failures", file=sys.stderr)
        sys.exit(1)
    print("scipy agreement: all checks passed")


main()
