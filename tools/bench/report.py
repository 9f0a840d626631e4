#!/usr/bin/env python3
"""report.py - merge the bench fragments of `make bench` into bench.json,
draw the plots and print the tables.

    tools/bench/report.py [-o OUT_DIR] [--fastpath FILE] [--cluster FILE] [--wall-s N] SRC...

SRC: directories (every *.json in them that is a fragment, i.e. an object
with "scenario" and "runs") or fragment files.  The guest scripts write the
fragments: selftests/bench/overhead-guest.sh (overhead.json) and
selftests/bench/scenarios-guest.sh (accuracy, noisy, convergence, scale,
buffered).
Fragments of one scenario found in several files have their runs merged.
--fastpath: fastpath.sh's JSON (the token engine under callgrind), copied
into bench.json as is.  --cluster: run.sh's cluster.json (selftests/cluster's
16 simulated hosts against Redis, one object per scenario and policy: the
agent, the static quota/16 split), copied into bench.json as "cluster" and
printed as a table.  Python 3 standard library and gnuplot only.

Writes OUT_DIR (default build/bench) /bench.json (schema 1, doc/bench.md),
bench-accuracy.png, bench-noisy.png, bench-convergence.png,
bench-overhead.png, bench-buffered.png, bench-ratestep.png (each with its .dat and .gp), and prints one table per
scenario (anchors as columns) and the goals of issue 8.  Plots of
scenarios absent from the sources are not drawn.  Exit status: 0, or 1
when no fragment was found or one is malformed (files that are not JSON
are skipped with a note).
"""
import glob
import json
import math
import os
import platform
import subprocess
import sys
import time

SCHEMA = 1
# Column order: the isolation mechanisms first, then the baselines.
ANCHOR_ORDER = ["blkiso", "blkiso-cap", "io.max", "iocost", "bfq", "none",
                "blkiso-static", "io.max-static", "raw", "dm-linear", "blkiso-no-quota"]
OVERHEAD_ORDER = ["raw", "dm-linear", "blkiso-no-quota", "blkiso", "io.max", "iocost",
                  "io.max-lv", "iocost-lv", "bfq-lv"]
ISOLATING = ("blkiso", "blkiso-cap", "io.max", "iocost", "bfq", "io.max-lv", "iocost-lv", "bfq-lv")
FIVE = ["blkiso", "io.max", "iocost", "bfq", "none"]	# every guest scenario's anchors
SCENARIO_ORDER = ["accuracy", "noisy", "overhead", "convergence", "scale", "buffered"]
CAVEAT = ("The guest runs under QEMU TCG (software emulation, no KVM) on the machine "
          "above, in the deterministic mode (-icount shift=0: one guest nanosecond per "
          "guest instruction; idle time skips to the next timer), over null_blk devices "
          "(shaped like a small SSD where rates matter, their capacity measured in the "
          "same boot). Absolute IOPS and latencies are those of this emulated "
          "machine, not of real hardware; ratios between anchors run in the same boot are "
          "the meaningful figures.")

# Per scenario: the summary figures of an anchor over its cases (non-skipped
# runs), as (metric, rule).  Rules: maxabs = worst |x|, meanabs = mean |x|,
# min / max / mean over the cases.  Metrics not listed are not summarised.
SUMMARY_RULES = {
    "accuracy": [("err_run_pct", "maxabs"), ("err_win_mean_pct", "meanabs"),
                 ("err_win_max_pct", "maxabs"), ("err_win_max_steady_pct", "maxabs"),
                 ("errors", "max")],
    "noisy": [("isolation_mean_pct", "min"), ("isolation_p05_pct", "min"),
              ("isolation_p01_pct", "min"), ("victim_p99_us", "max"),
              ("victim_solo_p99_us", "max"), ("p99_ratio", "max"),
              ("victim_p999_us", "max"), ("p999_ratio", "max"),
              ("neighbour_mb_s", "mean"), ("release_pct", "min"),
              ("work_csv_pct", "min"), ("leftover_pct", "min"), ("static_pct", "min"),
              ("best_static_mb_s", "max"), ("neighbour_errors", "max"),
              ("victim_errors", "max")],
    "convergence": [("settle_s", "max"), ("settle_s", "mean")],
    "scale": [("iops_total", "mean"), ("instr_per_io", "mean"), ("iops_total_1", "mean"),
              ("instr_per_io_1", "mean"), ("ratio", "mean")],
    # overhead: per case (engine), see summarize()
}
# the buffered writer neighbour: noisy's figures, the writer as the neighbour
SUMMARY_RULES["buffered"] = SUMMARY_RULES["noisy"]
RULE_WORDS = {"maxabs": "worst |x| over the cases", "meanabs": "mean |x| over the cases",
              "min": "lowest over the cases", "max": "highest over the cases",
              "mean": "mean over the cases", "case": "per case (engine)"}

# The goals of issue 8 (figures, not gates).  value: (scenario, summary key);
# the overhead goal is computed by layer_cost().
GOALS = [
    {"id": "accuracy_run", "name": "accuracy over the run",
     "goal": "accuracy: error of achieved vs quota over the run",
     "scenario": "accuracy", "metric": "err_run_pct", "op": "<=", "limit": 1.0,
     "target": "<= 1% (worst case)", "unit": "%"},
    {"id": "accuracy_window", "name": "accuracy per 1 s window",
     "goal": "accuracy: error per 1 s window",
     "scenario": "accuracy", "metric": "err_win_max_pct", "op": "<=", "limit": 3.0,
     "target": "<= 3% (worst window of the worst case)", "unit": "%"},
    {"id": "isolation_mean", "name": "isolation mean",
     "goal": "noisy neighbour: victim isolation, mean",
     "scenario": "noisy", "metric": "isolation_mean_pct", "op": ">=", "limit": 99.0,
     "target": ">= 99%", "unit": "%"},
    {"id": "isolation_p05", "name": "isolation p05",
     "goal": "noisy neighbour: victim isolation, p05",
     "scenario": "noisy", "metric": "isolation_p05_pct", "op": ">=", "limit": 95.0,
     "target": ">= 95%", "unit": "%"},
    {"id": "victim_p99", "name": "victim p99 / solo p99",
     "goal": "noisy neighbour: victim p99 vs its solo p99",
     "scenario": "noisy", "metric": "p99_ratio", "op": "<=", "limit": 1.5,
     "target": "<= 1.5x", "unit": "x"},
    {"id": "release", "name": "release (victim idle)",
     "goal": "noisy neighbour: the neighbour's throughput while the victim idles",
     "scenario": "noisy", "metric": "release_pct", "op": ">=", "limit": 90.0,
     "target": ">= 90%", "unit": "%"},
    # issue 20: work conservation while the protection is in force; met only
    # with the three victim goals above met too (bounds)
    {"id": "frontier", "name": "neighbour vs best static cap",
     "goal": "noisy neighbour: the neighbour's MB/s beside the victim over best_static's "
             "(the highest static cap that holds the victim's bounds)",
     "scenario": "noisy", "metric": "static_pct", "op": ">=", "limit": 90.0,
     "target": ">= 90% of best_static, victim bounds held", "unit": "%",
     "bounds": ["isolation_mean", "isolation_p05", "victim_p99"]},
    {"id": "metering_cost", "name": "metering cost (instructions per I/O)",
     "goal": "overhead: instructions per 4k read added by the isolation layer "
             "(blkiso over dm-linear; io.max, iocost over raw; the *-lv anchors, "
             "the same controllers with dm-linear above, over dm-linear)",
     "scenario": "overhead", "metric": "layer_cost", "op": "<=", "limit": 250.0,
     "target": "<= 250 (blk-throttle: ~450)", "unit": "instr"},
]


def die(msg):
    sys.stderr.write("report.py: %s\n" % msg)
    sys.exit(1)


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def anchor_key(a):
    return (ANCHOR_ORDER.index(a) if a in ANCHOR_ORDER else len(ANCHOR_ORDER), a)


def overhead_key(a):
    """overhead's anchors as the stack grows: raw, dm-linear, blkiso..., then io.max,
    iocost, then the LVM user's io.max, iocost and bfq with dm-linear above."""
    return (OVERHEAD_ORDER.index(a) if a in OVERHEAD_ORDER else len(OVERHEAD_ORDER), a)


# ---- loading ----

def load_fragments(srcs):
    files = []
    for s in srcs:
        if os.path.isdir(s):
            files += sorted(glob.glob(os.path.join(s, "*.json")))
        elif os.path.isfile(s):
            files.append(s)
        else:
            sys.stderr.write("report.py: note: %s does not exist, skipped\n" % s)
    scen, sources = {}, []
    for f in files:
        try:
            with open(f) as fh:
                d = json.load(fh)
        except (OSError, ValueError) as e:
            sys.stderr.write("report.py: note: %s skipped, not JSON: %s\n" % (f, e))
            continue
        if not isinstance(d, dict) or "scenario" not in d or "runs" not in d:
            continue
        check_fragment(f, d)
        sources.append(os.path.abspath(f))
        name = d["scenario"]
        if name in scen:
            scen[name]["runs"] += d["runs"]
        else:
            scen[name] = d
    return scen, sources


def check_fragment(f, d):
    if not isinstance(d["runs"], list):
        die("%s: runs is not a list" % f)
    for i, r in enumerate(d["runs"]):
        where = "%s: runs[%d]" % (f, i)
        if not isinstance(r, dict) or not isinstance(r.get("anchor"), str) or not r["anchor"]:
            die("%s: no anchor" % where)
        r.setdefault("case", "")
        r.setdefault("params", {})
        r.setdefault("metrics", {})
        r.setdefault("series", {})
        if not isinstance(r["metrics"], dict) or not isinstance(r["series"], dict):
            die("%s: metrics and series must be objects" % where)
        if "skipped" in r:
            if not isinstance(r["skipped"], str) or not r["skipped"]:
                die("%s: skipped needs a reason" % where)
            continue
        for k, v in r["metrics"].items():
            if v is not None and not is_num(v):
                die("%s: metric %s is not a number: %r" % (where, k, v))
        n = None
        for k, v in r["series"].items():
            if not isinstance(v, list):
                die("%s: series %s is not a list" % (where, k))
            if n is not None and len(v) != n:
                die("%s: series %s has %d points, t_s has %d" % (where, k, len(v), n))
            n = len(v) if n is None else n


# ---- summaries ----

def aggregate(vals, rule):
    vals = [v for v in vals if is_num(v)]
    if not vals:
        return None
    if rule == "maxabs":
        v = max(abs(x) for x in vals)
    elif rule == "meanabs":
        v = sum(abs(x) for x in vals) / len(vals)
    elif rule == "min":
        v = min(vals)
    elif rule == "max":
        v = max(vals)
    else:
        v = sum(vals) / len(vals)
    return round(v, 3)


def rule_keys(name):
    """(summary key, metric, rule): the metric's name, or metric_rule when
    the metric is summarised twice (convergence: settle_s, settle_s_mean)."""
    res, seen = [], set()
    for metric, rule in SUMMARY_RULES.get(name, []):
        res.append((metric if metric not in seen else "%s_%s" % (metric, rule), metric, rule))
        seen.add(metric)
    return res


def summarize(name, frag):
    """summary[anchor] = {cases, skipped, skipped_reasons, metrics}."""
    by = {}
    for r in frag["runs"]:
        by.setdefault(r["anchor"], []).append(r)
    out = {}
    for a in sorted(by, key=overhead_key if name == "overhead" else anchor_key):
        runs = [r for r in by[a] if "skipped" not in r and "error" not in r]
        if a.endswith("-static"):
            runs = frontier_point(runs)
        skipped = [r for r in by[a] if "skipped" in r]
        failed = [r for r in by[a] if "skipped" not in r and "error" in r]
        m = {}
        if name == "overhead":
            # metric by metric, each for every engine
            metrics, cases = [], []
            for r in frag["runs"]:
                metrics += [k for k in r["metrics"] if k not in metrics]
                cases += [r["case"]] if r["case"] not in cases else []
            for k in metrics:
                for c in cases:
                    v = next((r["metrics"].get(k) for r in runs if r["case"] == c), None)
                    if v is not None:
                        m["%s_%s" % (k, c)] = v
        elif name in SUMMARY_RULES:
            for key, metric, rule in rule_keys(name):
                vals = [r["metrics"].get(metric) for r in runs]
                if metric == "settle_s":	# negative: never settled, counted below
                    vals = [v for v in vals if is_num(v) and v >= 0]
                m[key] = aggregate(vals, rule)
            if name == "convergence":
                m["not_settled"] = sum(1 for r in runs if not is_num(r["metrics"].get("settle_s"))
                                       or r["metrics"]["settle_s"] < 0)
        else:
            keys = sorted({k for r in runs for k in r["metrics"]})
            for k in keys:
                m[k] = aggregate([r["metrics"].get(k) for r in runs], "mean")
        out[a] = {"cases": len(runs), "skipped": len(skipped),
                  "skipped_reasons": sorted({r["skipped"] for r in skipped}),
                  "failed": len(failed),
                  "failed_reasons": sorted({"%s: %s" % (r["case"], r["error"]) for r in failed}),
                  "metrics": m}
    return out


def frontier_point(runs):
    """A static anchor's runs are the steps of a bisection on the
    neighbour's cap (scen-noisy.sh): its summary is its frontier point, the
    run with the most neighbour MB/s (> 0) among those that held the
    victim's bounds, else its lowest cap's run."""
    held = [r for r in runs if r["metrics"].get("victim_bounds_held") == 1
            and is_num(r["metrics"].get("neighbour_mb_s")) and r["metrics"]["neighbour_mb_s"] > 0]
    if held:
        return [max(held, key=lambda r: r["metrics"]["neighbour_mb_s"])]
    caps = [r for r in runs if is_num(r["params"].get("cap_pct"))]
    return [min(caps, key=lambda r: r["params"]["cap_pct"])] if caps else runs[:1]


def summary_rules(name):
    if name == "overhead":
        return {"<metric>_<engine>": RULE_WORDS["case"]}
    rules = SUMMARY_RULES.get(name)
    if not rules:
        return {"*": RULE_WORDS["mean"]}
    res = {}
    for key, _, rule in rule_keys(name):
        res[key] = RULE_WORDS[rule]
    if name == "convergence":
        res["not_settled"] = "cases whose settle_s is missing or negative (never within 5%)"
    if name == "noisy":
        res["*-static"] = ("a static anchor's figures are those of its frontier point: the "
                           "bisection step with the most neighbour MB/s that held the victim's "
                           "bounds (else its lowest cap)")
    return res


# ---- goals ----

def layer_cost(summary, anchor):
    """Instructions per read added by the isolation layer, worst engine:
    over dm-linear for blkiso (it is a dm target) and for the *-lv anchors (the
    controllers an LVM user has, with dm-linear above), over raw for the others."""
    s = summary.get(anchor)
    if not s:
        return None
    over_lv = anchor.startswith("blkiso") or anchor.endswith("-lv")
    key = "over_dm_linear_" if over_lv else "over_raw_"
    vals = [v for k, v in s["metrics"].items() if k.startswith(key) and is_num(v)]
    return max(vals) if vals else None


def compare(a, b, op):
    """'beats' if a is better than b under op, 'trails' if worse, 'ties'."""
    if abs(a - b) <= 1e-9 + 0.005 * max(abs(a), abs(b)):
        return "ties"
    better = a < b if op == "<=" else a > b
    return "beats" if better else "trails"


def goals(scenarios):
    res = []
    for g in GOALS:
        sc = scenarios.get(g["scenario"])
        vals = {}
        if sc:
            summ = sc["summary"]
            for a in sorted(summ, key=anchor_key):
                if g["metric"] == "layer_cost":
                    if a not in ISOLATING:
                        continue
                    v = layer_cost(summ, a)
                else:
                    v = summ[a]["metrics"].get(g["metric"])
                if is_num(v):
                    vals[a] = v
        b = vals.get("blkiso")
        met = None
        if b is not None:
            met = b <= g["limit"] if g["op"] == "<=" else b >= g["limit"]
            for bid in g.get("bounds", []):	# the goals this one holds only with
                bg = next((x for x in res if x["id"] == bid), None)
                if bg is None or bg["met"] is None:
                    met = None
                    break
                met = met and bg["met"]
        iso = {a: v for a, v in vals.items() if a in ISOLATING}
        best = None
        if iso:
            best = (min if g["op"] == "<=" else max)(
                sorted(iso, key=anchor_key), key=lambda a: iso[a])
        vs = {}
        if b is not None:
            for a, v in iso.items():
                if a != "blkiso":
                    vs[a] = compare(b, v, g["op"])
        res.append({"id": g["id"], "name": g["name"], "goal": g["goal"], "scenario": g["scenario"],
                    "metric": g["metric"], "target": g["target"], "op": g["op"],
                    "limit": g["limit"], "unit": g["unit"], "blkiso": b, "met": met,
                    "bounds": g.get("bounds", []),
                    "best_anchor": best, "anchors": vals, "blkiso_vs": vs})
    return res


# ---- machine ----

def machine():
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = round(int(line.split()[1]) / 1048576, 1)
    except OSError:
        pass
    qemu = None
    try:
        r = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
        qemu = r.stdout.splitlines()[0].strip() if r.stdout else None
    except (OSError, IndexError):
        pass
    return {"cpu_model": cpu, "cores": os.cpu_count(), "memory_gib": mem,
            "host_kernel": platform.release(), "qemu": qemu, "accel": "tcg"}


# ---- tables ----

def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) >= 100):
        return "%d" % v
    if abs(v) >= 1000:
        return "%.0f" % v
    if abs(v) >= 100:
        return "%.1f" % v
    return "%.2f" % v


def table_rows(name, sc):
    """(header, rows) with anchors as columns: a row per summary figure."""
    summ = sc["summary"]
    anchors = list(summ)	# in summarize()'s order
    keys = []
    for a in anchors:
        for k in summ[a]["metrics"]:
            if k not in keys:
                keys.append(k)
    rows = [["cases (skipped)"] + ["%d (%d)%s" % (
        summ[a]["cases"], summ[a]["skipped"],
        ", %d failed" % summ[a]["failed"] if summ[a].get("failed") else "") for a in anchors]]
    for k in keys:
        rows.append([k] + [fmt(summ[a]["metrics"].get(k)) for a in anchors])
    return ["figure"] + anchors, rows


def print_cluster(rows):
    """The cluster figures: one line per scenario and policy."""
    if not rows:
        return
    print()
    print("cluster  (16 simulated hosts, quota %s riops, against redis-server; "
          "over-admission: worst sliding window; -1: not measured)" % rows[0].get("quota_iops"))
    hdr = ["scenario", "policy", "over 10 s %", "over 1 s %", "used %", "round trips/s", "ramp ms"]
    keys = ["scenario", "policy", "over_10s_pct", "over_1s_pct", "used_pct",
            "round_trips_per_s", "ramp_ms"]
    table = [hdr] + [[str(r.get(k)) for k in keys] for r in rows]
    w = [max(len(x) for x in col) for col in zip(*table)]
    for row in table:
        print("  ".join(x.ljust(w[i]) if i < 2 else x.rjust(w[i]) for i, x in enumerate(row)))


def print_tables(doc):
    m = doc["machine"]
    print()
    print("machine  %s, %s cores, host kernel %s, %s; guest kernel %s"
          % (m["cpu_model"], m["cores"], m["host_kernel"], m["qemu"], doc["guest_kernel"]))
    for name in ordered(doc["scenarios"]):
        sc = doc["scenarios"][name]
        hdr, rows = table_rows(name, sc)
        w = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
        print()
        print("%s  (%s)" % (name, ", ".join("%s: %s" % kv for kv in sc["summary_rules"].items())))
        line = "  ".join(str(h).ljust(w[i]) if i == 0 else str(h).rjust(w[i])
                         for i, h in enumerate(hdr))
        print(line)
        print("-" * len(line))
        for r in rows:
            print("  ".join(str(c).ljust(w[i]) if i == 0 else str(c).rjust(w[i])
                            for i, c in enumerate(r)))
        for a, s in sc["summary"].items():
            if s["skipped_reasons"]:
                print("  %s skipped: %s" % (a, "; ".join(s["skipped_reasons"])))
            if s["failed_reasons"]:
                print("  %s FAILED: %s" % (a, "; ".join(s["failed_reasons"])))
        if sc.get("missing_anchors"):
            print("  not run (no record): %s" % ", ".join(sc["missing_anchors"]))
    print()
    print("goals (issue 8; figures, not gates)")
    for g in doc["goals"]:
        if g["blkiso"] is None:
            state = "blkiso not measured"
        else:
            state = "blkiso %s %s: %s" % (fmt(g["blkiso"]), g["unit"],
                                         "met" if g["met"] else "NOT met")
        others = ", ".join("%s %s%s" % (a, fmt(v), " (blkiso %s)" % g["blkiso_vs"][a]
                                        if a in g["blkiso_vs"] else "")
                           for a, v in g["anchors"].items() if a != "blkiso")
        print("  %s, target %s" % (g["goal"], g["target"]))
        print("      %s%s" % (state, "; " + others if others else ""))
    print()


def ordered(scenarios):
    return sorted(scenarios, key=lambda n: (SCENARIO_ORDER.index(n)
                                            if n in SCENARIO_ORDER else 99, n))


# ---- plots ----

COLORS = {"blkiso": "#1a7f37", "blkiso-cap": "#4ac26b", "io.max": "#cf222e", "iocost": "#8250df", "bfq": "#bf8700",
          "none": "#57606a", "raw": "#57606a", "dm-linear": "#0969da",
          "blkiso-no-quota": "#6fdd8b", "blkiso-static": "#0a3d1a", "io.max-static": "#82071e"}


def color(a):
    return COLORS.get(a, "#000000")


def gp_term(w, h):
    try:
        r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    terms = r.stdout + r.stderr
    if "pngcairo" in terms:
        return "pngcairo noenhanced size %d,%d font 'Sans,10'" % (w, h)
    if "png" in terms:
        return "png noenhanced size %d,%d" % (w, h)
    return None


def gp_str(s):
    """Text for a single-quoted gnuplot string (the terminals are noenhanced)."""
    return str(s).replace("'", "''")


def run_gnuplot(outdir, name, script, drawn):
    gpf = os.path.join(outdir, "bench-%s.gp" % name)
    with open(gpf, "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", gpf], capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write(r.stderr)
        die("gnuplot failed on %s" % gpf)
    drawn.append(os.path.join(outdir, "bench-%s.png" % name))


def anchor_points(dat, anchors, size):
    """gnuplot plot items: columns 1:2 of each anchor's block of dat, as points."""
    return ", \\\n     ".join(
        "'%s' index %d using 1:2 with points pt 7 ps %.1f lc rgb '%s' title '%s'"
        % (dat, i, size, color(a), gp_str(a)) for i, a in enumerate(anchors))


def valid_runs(sc, anchor=None):
    return [r for r in sc["runs"] if "skipped" not in r and "error" not in r
            and (anchor is None or r["anchor"] == anchor)]


def plot_accuracy(sc, outdir, drawn):
    anchors = [a for a in sorted(sc["summary"], key=anchor_key) if valid_runs(sc, a)]
    if not anchors:
        return
    dat = os.path.join(outdir, "bench-accuracy.dat")
    with open(dat, "w") as f:
        for i, a in enumerate(anchors):
            # spread the anchors around each quota so their points do not hide each other
            k = 1.0 + 0.05 * (i - (len(anchors) - 1) / 2.0)
            f.write("# %s: quota*spread err_run_abs err_win_max_abs err_win_mean_abs case\n" % a)
            for r in valid_runs(sc, a):
                m = r["metrics"]
                q = m.get("quota", r["params"].get("quota"))
                if not is_num(q):
                    continue
                f.write("%g %s %s %s \"%s\"\n" % (q * k, absnum(m.get("err_run_pct")),
                                                  absnum(m.get("err_win_max_pct")),
                                                  absnum(m.get("err_win_mean_pct")), r["case"]))
            f.write("\n\n")
    term = gp_term(1200, 800)
    if not term:
        return
    pl1 = anchor_points(dat, anchors, 1.0)
    pl2 = ", \\\n     ".join(
        "'%s' index %d using 1:3 with points pt 7 ps 1.0 lc rgb '%s' title '%s worst window', "
        "'%s' index %d using 1:4 with points pt 6 ps 1.0 lc rgb '%s' title '%s mean window'"
        % (dat, i, color(a), gp_str(a), dat, i, color(a), gp_str(a))
        for i, a in enumerate(anchors))
    gp = """set terminal %(term)s
set output '%(out)s/bench-accuracy.png'
set multiplot layout 2,1 title 'accuracy: |achieved - quota| / quota, per case (quotas in 4 KiB-equivalent IOPS; bs and modes as points)'
set logscale x
set grid
set key outside right top
set lmargin 10
set rmargin 30
set logscale y
set format y '%%g'
set ylabel 'error over the run (%%)'
plot %(pl1)s, 1 with lines dt 2 lc rgb '#000000' title 'goal 1%%'
set ylabel 'error per 1 s window (%%)'
set xlabel 'quota'
plot %(pl2)s, 3 with lines dt 2 lc rgb '#000000' title 'goal 3%%'
unset multiplot
""" % {"term": term, "out": outdir, "pl1": pl1, "pl2": pl2}
    run_gnuplot(outdir, "accuracy", gp, drawn)


def pct(v):
    return "%.1f%%" % v if is_num(v) else "-"


def absnum(v):
    # log axes: a zero error is drawn at the floor
    return "%g" % max(abs(v), 0.001) if is_num(v) else "NaN"


def pick_case(sc):
    """The case shown per anchor: the first case that blkiso ran, else the first."""
    for r in sc["runs"]:
        if r["anchor"] == "blkiso" and "skipped" not in r:
            return r["case"]
    runs = valid_runs(sc)
    return runs[0]["case"] if runs else None


def plot_noisy(sc, outdir, drawn, name="noisy", title="noisy neighbour"):
    case = pick_case(sc)
    runs = [r for r in valid_runs(sc) if r["case"] == case and r["series"].get("t_s")]
    runs.sort(key=lambda r: anchor_key(r["anchor"]))
    if not runs:
        return
    dat = os.path.join(outdir, "bench-%s.dat" % name)
    with open(dat, "w") as f:
        for r in runs:
            s = r["series"]
            f.write("# %s: t_s victim_iops victim_p99_ms neighbour_mb_s\n" % r["anchor"])
            for i, t in enumerate(s["t_s"]):
                def col(k, scale=1.0):
                    v = s.get(k, [None] * (i + 1))[i]
                    return "%g" % (v * scale) if is_num(v) and v > 0 else "NaN"
                f.write("%g %s %s %s\n" % (t, col("victim_iops"), col("victim_p99_us", 1e-3),
                                           col("neighbour_mb_s")))
            f.write("\n\n")
    term = gp_term(1200, 1000)
    if not term:
        return
    target = runs[0]["metrics"].get("victim_target_iops")

    def pl(c, pt):
        return ", \\\n     ".join(
            "'%s' index %d using 1:%d with linespoints lw 2 pt %d ps 0.5 lc rgb '%s' title '%s'"
            % (dat, i, c, pt, color(r["anchor"]), gp_str("%s (isolation %s)" % (
                r["anchor"], pct(r["metrics"].get("isolation_mean_pct")))))
            for i, r in enumerate(runs))
    tline = (", %g with lines dt 2 lc rgb '#000000' title 'victim target'" % target
             if is_num(target) else "")
    gp = """set terminal %(term)s
set output '%(out)s/bench-%(name)s.png'
set multiplot layout 3,1 title '%(title)s (%(case)s): the victim per second under each anchor'
set grid
set key outside right top
set lmargin 10
set rmargin 34
set ylabel 'victim IOPS'
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
plot %(p1)s%(tline)s
set ylabel 'victim p99 (ms)'
set offsets 0, 0, 0, 0
set logscale y
set yrange [*:*]
set format y '%%g'
plot %(p2)s
unset logscale y
set yrange [0:*]
set ylabel 'neighbour MB/s'
set xlabel 'seconds'
plot %(p3)s
unset multiplot
""" % {"term": term, "out": outdir, "case": gp_str(case), "p1": pl(2, 7), "p2": pl(3, 7),
       "p3": pl(4, 5), "tline": tline, "name": name, "title": title}
    run_gnuplot(outdir, name, gp, drawn)


def plot_frontier(sc, outdir, drawn):
    """Every noisy run's operating point: the victim's p99 over its solo
    p99 against the neighbour's MB/s beside it, a colour per anchor (the
    static anchors: each bisection step), the 1.5x bound dashed."""
    runs = [r for r in valid_runs(sc) if is_num(r["metrics"].get("neighbour_mb_s"))
            and is_num(r["metrics"].get("p99_ratio"))]
    if not runs:
        return
    anchors = sorted({r["anchor"] for r in runs}, key=anchor_key)
    dat = os.path.join(outdir, "bench-frontier.dat")
    with open(dat, "w") as f:
        for a in anchors:
            f.write("# %s: neighbour_mb_s p99_ratio bounds_held case\n" % a)
            for r in (r for r in runs if r["anchor"] == a):
                m = r["metrics"]
                f.write("%g %g %s %s\n" % (m["neighbour_mb_s"], max(m["p99_ratio"], 0.01),
                                           m.get("victim_bounds_held"), r["case"]))
            f.write("\n\n")
    term = gp_term(1000, 700)
    if not term:
        return
    pl = anchor_points(dat, anchors, 1.5)
    gp = """set terminal %(term)s
set output '%(out)s/bench-frontier.png'
set title 'noisy neighbour: victim p99 / solo p99 against the neighbour MB/s (every run)'
set grid
set key outside right top
set logscale y
set xlabel 'neighbour MB/s beside the victim'
set ylabel 'victim p99 / solo p99'
set xrange [0:*]
plot %(pl)s, 1.5 with lines dt 2 lc rgb '#000000' title 'bound 1.5x'
""" % {"term": term, "out": outdir, "pl": pl}
    run_gnuplot(outdir, "frontier", gp, drawn)


def plot_convergence(sc, outdir, drawn):
    """A panel per case: each anchor's trailing 1 s rate (thick) and its
    100 ms samples (thin) from the step on, the quota and its +-5% band."""
    cases = []
    for r in valid_runs(sc):
        if r["case"] not in cases and r["series"].get("t_s"):
            cases.append(r["case"])
    if not cases:
        return
    cases = cases[:6]
    dat = os.path.join(outdir, "bench-convergence.dat")
    blocks = []	# (case, anchor, index, ylabel, settle_s, quota)
    with open(dat, "w") as f:
        for c in cases:
            for r in sorted([r for r in valid_runs(sc) if r["case"] == c and r["series"].get("t_s")],
                            key=lambda r: anchor_key(r["anchor"])):
                s = r["series"]
                keys = [k for k in s if k != "t_s"]
                main = next((k for k in ("iops_4k_1s", "iops") if k in s), keys[0] if keys else None)
                thin = "iops_4k" if "iops_4k" in s and main != "iops_4k" else None
                if main is None:
                    continue
                q = r["metrics"].get("quota")
                f.write("# %s %s: t_s %s %s\n" % (c, r["anchor"], main, thin or "-"))
                for i, t in enumerate(s["t_s"]):
                    y = s[main][i]
                    y2 = s[thin][i] if thin else None
                    f.write("%g %s %s\n" % (t, "%g" % y if is_num(y) else "NaN",
                                            "%g" % y2 if is_num(y2) else "NaN"))
                f.write("\n\n")
                blocks.append((c, r["anchor"], len(blocks), main, r["metrics"].get("settle_s"),
                               q if is_num(q) else None))
    if not blocks:
        return
    term = gp_term(1200, 80 + 300 * len(cases))
    if not term:
        return
    parts = []
    for c in cases:
        bs = [b for b in blocks if b[0] == c]
        if not bs:
            continue
        pl = []
        for b in bs:
            pl.append("'%s' index %d using 1:3 with lines lw 0.6 lc rgb '%s' notitle"
                      % (dat, b[2], color(b[1])))
            pl.append("'%s' index %d using 1:2 with lines lw 2.5 lc rgb '%s' title '%s'"
                      % (dat, b[2], color(b[1]), gp_str("%s (%s)" % (
                          b[1], "settles in %s s" % fmt(b[4]) if is_num(b[4])
                          else "never within 5%"))))
        q = bs[0][5]
        if q:
            pl.append("%g with lines dt 2 lw 1.5 lc rgb '#000000' title 'quota %g'" % (q, q))
            pl.append("%g with lines dt 3 lc rgb '#777777' title '+-5%%'" % (q * 1.05))
            pl.append("%g with lines dt 3 lc rgb '#777777' notitle" % (q * 0.95))
        parts.append("set title '%s'\nset ylabel '4k-eq IOPS'\nplot %s"
                     % (gp_str(c), ", \\\n     ".join(pl)))
    gp = """set terminal %(term)s
set output '%(out)s/bench-convergence.png'
set multiplot layout %(n)d,1 title 'convergence: rate after the step at t = 0 (thick: trailing 1 s; thin: 100 ms samples)'
set grid
set key outside right top
set lmargin 10
set rmargin 34
set yrange [0:*]
set xlabel 'seconds from the step'
set arrow 1 from 0, graph 0 to 0, graph 1 nohead dt 2 lc rgb '#cf222e'
%(parts)s
unset multiplot
""" % {"term": term, "out": outdir, "n": len(parts), "parts": "\n".join(parts)}
    run_gnuplot(outdir, "convergence", gp, drawn)


def plot_overhead(sc, outdir, drawn):
    anchors = [a for a in sorted(sc["summary"], key=overhead_key) if valid_runs(sc, a)]
    engines = []
    for r in valid_runs(sc):
        if r["case"] not in engines:
            engines.append(r["case"])
    if not anchors:
        return
    dat = os.path.join(outdir, "bench-overhead.dat")
    with open(dat, "w") as f:
        f.write("# anchor %s\n" % " ".join(engines))
        for a in anchors:
            vals = []
            for e in engines:
                v = next((r["metrics"].get("instr_per_io") for r in valid_runs(sc, a)
                          if r["case"] == e), None)
                vals.append("%g" % v if is_num(v) else "NaN")
            f.write("\"%s\" %s\n" % (a, " ".join(vals)))
    term = gp_term(1100, 600)
    if not term:
        return
    ecol = ["#0969da", "#bf8700", "#8250df", "#57606a"]
    w = 0.8 / max(1, len(engines))
    pl = []
    for i, e in enumerate(engines):
        x = "($0 + %g)" % ((i - (len(engines) - 1) / 2.0) * w)
        pl.append("'%s' using %s:%d with boxes lc rgb '%s' title '%s'"
                  % (dat, x, i + 2, ecol[i % len(ecol)], gp_str(e)))
        pl.append("'%s' using %s:%d:(sprintf('%%.0f', $%d)) with labels "
                  "offset 0,0.7 font ',8' notitle" % (dat, x, i + 2, i + 2))
    xt = ", ".join("'%s' %d" % (gp_str(a), i) for i, a in enumerate(anchors))
    gp = """set terminal %(term)s
set output '%(out)s/bench-overhead.png'
set title 'overhead: guest instructions per 4 KiB read, qd1 (icount), by path and engine'
set style fill solid 0.8 border -1
set boxwidth %(w)g
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set ylabel 'instructions per read'
set xrange [-0.6:%(xmax)g]
set xtics (%(xt)s)
set key top left
plot %(pl)s
""" % {"term": term, "out": outdir, "pl": ", \\\n     ".join(pl), "xmax": len(anchors) - 0.4,
       "w": w * 0.95, "xt": xt}
    run_gnuplot(outdir, "overhead", gp, drawn)


def plot_ratestep(sc, outdir, drawn):
    """Three panels over the steps run of each anchor (250 ms intervals from
    the first phase's start): the victim's IOPS and its rate, its p99 over
    its solo p99 at the phase's rate and the 1.5x bound, the neighbour's
    MB/s and 90 % of best_static at the phase's rate."""
    runs = sorted([r for r in valid_runs(sc) if r["case"] == "steps" and r["series"].get("t_s")],
                  key=lambda r: anchor_key(r["anchor"]))
    if not runs:
        return
    dat = os.path.join(outdir, "bench-ratestep.dat")
    blocks = []	# (anchor, index, settle_s_2, settle_s_3)
    with open(dat, "w") as f:
        for r in runs:
            s, m = r["series"], r["metrics"]
            f.write("# %s: t_s victim_iops rate p99_over_solo neighbour_mb_s 0.9xbest_static\n"
                    % r["anchor"])
            for i, t in enumerate(s["t_s"]):
                k = s["phase"][i]
                solo, best = m.get("victim_solo_p99_us_%d" % k), m.get("best_static_mb_s_%d" % k)
                p99 = s["victim_p99_us"][i]
                vals = [s["victim_iops"][i], m.get("rate_%d" % k),
                        p99 / solo if is_num(p99) and is_num(solo) and solo else None,
                        s["neighbour_mb_s"][i], 0.9 * best if is_num(best) else None]
                f.write("%g %s\n" % (t, " ".join("%g" % v if is_num(v) else "NaN" for v in vals)))
            f.write("\n\n")
            blocks.append((r["anchor"], len(blocks), m.get("settle_s_2"), m.get("settle_s_3")))
    term = gp_term(1200, 980)
    if not term:
        return

    def settle(v):
        return "%s s" % fmt(v) if is_num(v) and v >= 0 else "not"

    def lines(col, ref=None, reftitle=None):
        pl = ["'%s' index %d using 1:%d with lines lw 2 lc rgb '%s' title '%s'"
              % (dat, b[1], col, color(b[0]), gp_str("%s (settles %s / %s)" % (
                  b[0], settle(b[2]), settle(b[3])))) for b in blocks]
        if ref:
            pl.append("'%s' index 0 using 1:%d with steps dt 2 lw 1.5 lc rgb '#000000' title '%s'"
                      % (dat, ref, gp_str(reftitle)))
        return ", \\\n     ".join(pl)
    gp = """set terminal %(term)s
set output '%(out)s/bench-ratestep.png'
set multiplot layout 3,1 title 'ratestep: the victim at R, 2R, R/2 (250 ms intervals; settle after the doubling / the halving)'
set grid
set key outside right top
set lmargin 10
set rmargin 44
set xlabel 'seconds from the first phase'
set title 'victim IOPS'
set yrange [0:*]
plot %(iops)s
set title 'victim p99 / solo p99 at the phase rate'
set logscale y
set yrange [*:*]
plot %(p99)s, 1.5 with lines dt 2 lc rgb '#000000' title 'bound 1.5x'
unset logscale y
set title 'neighbour MB/s'
set yrange [0:*]
plot %(nb)s
unset multiplot
""" % {"term": term, "out": outdir, "iops": lines(2, 3, "victim rate"), "p99": lines(4),
       "nb": lines(5, 6, "0.9 x best_static (io.max-static)")}
    run_gnuplot(outdir, "ratestep", gp, drawn)


# ---- main ----

def main():
    args = sys.argv[1:]
    outdir, fastpath, cluster, wall = "build/bench", None, None, None
    srcs = []
    while args:
        a = args.pop(0)
        if a == "-o" and args:
            outdir = args.pop(0)
        elif a == "--fastpath" and args:
            fastpath = args.pop(0)
        elif a == "--cluster" and args:
            cluster = args.pop(0)
        elif a == "--wall-s" and args:
            wall = int(args.pop(0))
        elif a.startswith("-"):
            sys.exit(__doc__)
        else:
            srcs.append(a)
    if not srcs:
        sys.exit(__doc__)
    frags, sources = load_fragments(srcs)
    if not frags:
        die("no bench fragment in %s" % " ".join(srcs))
    os.makedirs(outdir, exist_ok=True)
    scenarios = {}
    kernels = set()
    for name in ordered(frags):
        fr = frags[name]
        fr["summary"] = summarize(name, fr)
        fr["summary_rules"] = summary_rules(name)
        want = OVERHEAD_ORDER if name == "overhead" else FIVE
        fr["missing_anchors"] = [a for a in want if a not in fr["summary"]]
        scenarios[name] = fr
        if fr.get("kernel"):
            kernels.add(fr["kernel"])
    doc = {
        "schema": SCHEMA,
        "generated_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": wall,
        "machine": machine(),
        "guest_kernel": ", ".join(sorted(kernels)) if kernels else None,
        "caveat": CAVEAT,
        "sources": sources,
        "scenarios": scenarios,
        "goals": goals(scenarios),
    }
    if fastpath:
        try:
            with open(fastpath) as f:
                doc["fastpath"] = json.load(f)
        except (OSError, ValueError) as e:
            sys.stderr.write("report.py: note: fastpath %s not read: %s\n" % (fastpath, e))
    if cluster and os.path.exists(cluster):
        try:
            with open(cluster) as f:
                doc["cluster"] = json.load(f)
        except (OSError, ValueError) as e:
            sys.stderr.write("report.py: note: cluster %s not read: %s\n" % (cluster, e))
    path = os.path.join(outdir, "bench.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print_tables(doc)
    print_cluster(doc.get("cluster"))
    drawn = []
    plots = {"accuracy": plot_accuracy, "noisy": plot_noisy, "frontier": plot_frontier,
             "convergence": plot_convergence, "overhead": plot_overhead,
             "buffered": lambda sc, o, d: plot_noisy(sc, o, d, "buffered",
                                                     "buffered writer neighbour"),
             "ratestep": plot_ratestep}
    if not gp_term(100, 100):
        print("no gnuplot png terminal: plots not drawn (data in %s/*.dat)" % outdir)
    for name, fn in plots.items():
        sc = scenarios.get("noisy" if name == "frontier" else name)
        if sc:
            fn(sc, outdir, drawn)
    print("wrote %s%s" % (path, "".join(", " + os.path.basename(p) for p in drawn)))


if __name__ == "__main__":
    main()
