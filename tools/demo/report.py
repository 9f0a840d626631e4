#!/usr/bin/env python3
"""report.py - the table, demo.json and demo.png of `make demo`.

    tools/demo/report.py RUN_DIR OUT_DIR

RUN_DIR is the guest's /out of one run of selftests/guest/demo.sh
(build/vm/out/<run>/): demo-env.txt, demo-times.txt, cap-*.json, and per
demo-policy.txt (phase 3's lines: "device|victim|neighbour LINE", the
neighbour's empty when it has none), and per
phase p (1..3) and tenant t (victim, neighbour): pP-T.json (fio JSON),
pP-T_iops.1.log (IOPS per second, --log_avg_msec=1000), pP-T_clat.1.log
(mean completion latency per second), pP-T_clat_hist.1.log (completion
latency histogram per second, --log_hist_msec=1000), pP-stats-{before,after}.txt
(blkiso's per-tenant sysfs stats), p3-ring-*.txt (the rings after phase 3,
not read here).  Python 3 standard library and gnuplot only.

Writes OUT_DIR/demo.json, OUT_DIR/demo.png (and demo-plot.dat/.gp, the
plot's data and script) and prints the table.

Isolation % (per second s of a phase): min(100, victim IOPS in s / victim
target IOPS) x 100, the target being the victim's fio rate_iops.  A phase's
"mean" is the mean over its seconds, "p05" the 5th percentile over its
seconds (nearest rank: with 10 seconds, the worst one).  100 = the victim
got all it asked for every second.

demo.json fields:
  version            1
  generated_utc      when this report was made
  wall_seconds       wall time of the whole `make demo` run so far (from run.sh)
  run_dir            RUN_DIR
  kernel, icount     guest kernel release; 1 = deterministic mode
  phase_seconds      length of each phase (guest seconds)
  device             null_blk shaping: size_mb, hw_queue_depth, completion_us,
                     mbps (null_blk's bandwidth limit, MiB/s)
  capacity           measured in the same boot on the raw device:
                     randread_4k_qd64_iops, randread_4k_qd1_iops,
                     randread_1m_qd32_mb_s (MB = 10^6 bytes), and the p50/p99
                     completion latency (us) of each
  victim             workload, target_iops (fio rate_iops), target_pct_of_qd1,
                     solo_p99_us (phase 1's fio p99, the base of its
                     latency target), latency_target_pct_of_solo_p99
  neighbour          workload
  phase3_policy      blkiso's policy in phase 3, as written to sysfs:
                     device (the line written to dm-N/conf), victim and
                     neighbour (the tenant lines written to dm-N/tenant as
                     "/cgroup LINE"; neighbour "" when none is written, the
                     default), why {device, victim, neighbour} (each
                     line's reasons, in words, with the numbers behind it),
                     source (where the policy was found)
  isolation_definition   the definition above, in words
  phases[]           one per phase:
    phase, name, policy
    tenants.victim / tenants.neighbour (neighbour null in phase 1):
      quota          blkiso tenant line in force ("none": phases 1-2;
                     "no line": phase 3 without one; or the line)
      iops, mb_s     fio's averages over the run
      p50_us, p99_us fio's completion latency percentiles over the run
      errors         fio's error count
      isolation_mean_pct, isolation_p05_pct   victim only
      per_second[]   {t: second since the victim's start (the phase's start),
                      iops, mean_us, p50_us, p99_us}; p50/p99 from the
                      per-second histogram (bin midpoints, within ~1.6%)
      blkiso         the tenant's sysfs counters accrued during the phase
                     (after - before; p50_us/p99_us as read after the phase,
                     power-of-two upper bounds since the device was made)
"""
import json
import math
import os
import shutil
import subprocess
import sys
import time

TENANTS = ("victim", "neighbour")
PHASES = {1: "victim alone", 2: "victim + neighbour, no policy",
          3: "victim + neighbour, blkiso policies"}
# demo.sh's default device line (DEMO_DEV_LINE) and neighbour line
# (DEMO_NEIGH_LINE: none): the README's recommended configuration, the
# default of make bench's noisy scenario (scen-noisy.sh)
DEFAULT_DEV_LINE = "depth_limit=1 tick_ms=10 window_ticks=5"
DEFAULT_NEIGH_LINE = ""
# Why the victim's allocation is work-conserving or strict (DEMO_VICTIM_ISOLATION).
ISOLATION_WHY = {
    "wc": "the allocation binds only in an overload episode other tenants' misses "
          "are in, so it never holds the victim back beside a neighbour without a "
          "promise",
    "strict": "the allocation binds at all times",
}
# fio's latency histogram: FIO_IO_U_PLAT_BITS 6, 29 groups of 64 bins (ns).
PLAT_BITS, PLAT_VAL = 6, 64


def plat_idx_to_val(idx):
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    return base + (k + 0.5) * (1 << error_bits)


def hist_pct(bins, pcts):
    total = sum(bins)
    if not total:
        return [None for _ in pcts]
    res, acc, want = [], 0, sorted(pcts)
    out = {}
    i = 0
    for idx, n in enumerate(bins):
        acc += n
        while i < len(want) and acc >= want[i] / 100.0 * total:
            out[want[i]] = plat_idx_to_val(idx)
            i += 1
        if i == len(want):
            break
    for p in pcts:
        res.append(out.get(p))
    return res


def kv_file(path):
    d = {}
    with open(path) as f:
        for tok in f.read().split():
            if "=" in tok:
                k, v = tok.split("=", 1)
                d[k] = v
    return d


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fio_read(path):
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON
    j = json.loads(text[text.index("{"):])
    job = j["jobs"][0]
    r = job["read"]
    pct = r.get("clat_ns", {}).get("percentile", {})
    return {
        "iops": r["iops"],
        "mb_s": r["bw_bytes"] / 1e6,
        "p50_us": pct.get("50.000000", 0) / 1e3,
        "p99_us": pct.get("99.000000", 0) / 1e3,
        "errors": job.get("total_err", job.get("error", 0)),
    }


def log_rows(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 2 and parts[0]:
                rows.append(parts)
    return rows


def per_second(run, p, t, shift_s):
    """Per-second samples of tenant t in phase p; times shifted to the
    victim's start (shift_s = tenant start - victim start)."""
    pre = os.path.join(run, "p%d-%s" % (p, t))
    iops = {int(r[0]): float(r[1]) for r in log_rows(pre + "_iops.1.log") if r[2] == "0"}
    mean = {int(r[0]): float(r[1]) / 1e3 for r in log_rows(pre + "_clat.1.log") if r[2] == "0"}
    hist = {}
    for r in log_rows(pre + "_clat_hist.1.log"):
        if r[1] != "0":
            continue
        bins = [int(x) for x in r[3:] if x]
        hist[int(r[0])] = hist_pct(bins, (50, 99))
    def near(d, ms, dflt):
        # the logs' stamps of one window differ by a millisecond or so
        k = min(d, key=lambda x: abs(x - ms)) if d else None
        return d[k] if k is not None and abs(k - ms) < 500 else dflt
    out = []
    for ms in sorted(iops):
        h = near(hist, ms, (None, None))
        m = near(mean, ms, None)
        out.append({
            "t": round(ms / 1000.0 + shift_s, 2),
            "iops": iops[ms],
            "mean_us": round(m, 1) if m is not None else None,
            "p50_us": round(h[0] / 1e3, 1) if h[0] else None,
            "p99_us": round(h[1] / 1e3, 1) if h[1] else None,
        })
    return out


def stats_delta(run, p, cgid):
    def load(when):
        d = {}
        path = os.path.join(run, "p%d-stats-%s.txt" % (p, when))
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if parts:
                        d[parts[0]] = dict(x.split("=", 1) for x in parts[1:] if "=" in x)
        return d
    before, after = load("before"), load("after")
    a = after.get(str(cgid))
    if a is None:
        return None
    b = before.get(str(cgid), {})
    res = {}
    for k, v in a.items():
        # gauges as read after the phase; counters as accrued during it
        if k in ("p50_us", "p99_us", "queued") or k.endswith("_tokens") or k not in b:
            res[k] = int(v)
        else:
            res[k] = int(v) - int(b.get(k, 0))
    return res


def nearest_rank(vals, pct):
    s = sorted(vals)
    return s[max(0, math.ceil(pct / 100.0 * len(s)) - 1)]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report.py RUN_DIR OUT_DIR")
    run, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    env = kv_file(os.path.join(run, "demo-env.txt"))
    times = {}
    with open(os.path.join(run, "demo-times.txt")) as f:
        for line in f:
            d = dict(x.split("=", 1) for x in line.split())
            p = int(d.pop("phase"))
            for k, v in d.items():
                times.setdefault(p, {})[k] = float(v)
    secs = int(env["phase_secs"])
    target = float(env["victim_iops"])
    pol = {}
    with open(os.path.join(run, "demo-policy.txt")) as f:
        for line in f:
            role, _, rest = line.strip().partition(" ")
            if role:
                pol[role] = rest

    cap = {}
    for name, key in (("4k", "randread_4k_qd64"), ("4k-qd1", "randread_4k_qd1"),
                      ("1m", "randread_1m_qd32")):
        r = fio_read(os.path.join(run, "cap-%s.json" % name))
        if name == "1m":
            cap[key + "_mb_s"] = round(r["mb_s"], 1)
        else:
            cap[key + "_iops"] = round(r["iops"])
        cap[key + "_p50_us"] = round(r["p50_us"], 1)
        cap[key + "_p99_us"] = round(r["p99_us"], 1)

    isolation_def = ("per second: min(100, victim IOPS / victim target IOPS) x 100; "
                     "mean over the phase's seconds, p05 = 5th percentile over them "
                     "(nearest rank)")
    phases = []
    for p in (1, 2, 3):
        ph = {"phase": p, "name": PHASES[p],
              "policy": ("device %s; /victim %s; /neighbour %s"
                         % (pol["device"], pol["victim"], pol["neighbour"])
                         if p == 3 else "none"), "tenants": {}}
        vstart = times[p]["victim_start"]
        for t in TENANTS:
            jf = os.path.join(run, "p%d-%s.json" % (p, t))
            if not os.path.exists(jf):
                ph["tenants"][t] = None
                continue
            r = fio_read(jf)
            shift = times[p].get(t + "_start", vstart) - vstart
            ps = per_second(run, p, t, shift)
            ten = {
                "quota": (pol[t] or "no line") if p == 3 else "none",
                "iops": round(r["iops"], 1), "mb_s": round(r["mb_s"], 2),
                "p50_us": round(r["p50_us"], 1), "p99_us": round(r["p99_us"], 1),
                "errors": r["errors"],
            }
            if t == "victim":
                iso = [min(100.0, s["iops"] / target * 100.0) for s in ps]
                ten["isolation_mean_pct"] = round(sum(iso) / len(iso), 1) if iso else None
                ten["isolation_p05_pct"] = round(nearest_rank(iso, 5), 1) if iso else None
            ten["per_second"] = ps
            ten["blkiso"] = stats_delta(run, p, env[t + "_cgid"])
            ph["tenants"][t] = ten
        ph["work_csv_pct"] = work_csv(ph["tenants"], cap)
        phases.append(ph)

    cap_bw = float(env["cap_1m_bw_bytes"])
    why = {
        "device": ("" if pol["device"] == DEFAULT_DEV_LINE else
                   "DEMO_DEV_LINE's line; the default's reasons: ") +
                  "depth_limit=1: while a protected tenant (one with an allocation) "
                  "misses its latency target in a tick, every tenant above its "
                  "commitment (here the neighbour, which has no line) is bounded in "
                  "bios in flight: half its depth at the first miss, halved on later "
                  "ones, raised by one every two clean ticks, lifted when nobody comes "
                  "near it; its bios are cut to one lower request while it is bound "
                  "(doc/controllers.md, Depth limit); tick_ms=10 window_ticks=5: a miss "
                  "is seen within a tick or two (a 1 MiB read is ~1 ms of this device)",
        "victim": "latency_us = its phase-1 p99 (%s us) x %s%%, miss_pct=%s: more than "
                  "that share of its reads over the target is an overload; alloc = %s%% "
                  "of its target IOPS (%d) in IOPS: its guaranteed share (an allocation "
                  "at exactly its rate slowed it in the bench: fio's catch-up bursts go "
                  "over the band and draw delays); isolation=%s: %s"
                  % (env["victim_solo_p99_us"], env["victim_lat_pct"],
                     pol["victim"].split("miss_pct=")[1].split()[0],
                     env["victim_alloc_pct"], target, env["victim_isolation"],
                     ISOLATION_WHY.get(env["victim_isolation"], "")),
        "neighbour": ("no line: a best-effort flood with no promise and no latency "
                      "objective; the depth limit binds it while the victim misses, "
                      "and it has the whole device otherwise"
                      if not pol["neighbour"] else
                      "DEMO_NEIGH_LINE's line (the default is none)"),
    }
    doc = {
        "version": 1,
        "generated_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": int(os.environ["DEMO_WALL_S"]) if os.environ.get("DEMO_WALL_S") else None,
        "run_dir": os.path.abspath(run),
        "kernel": env["kernel"], "icount": int(env["icount"]),
        "phase_seconds": secs,
        "device": {"kind": "null_blk, timer completions, no backing memory",
                   "size_mb": int(env["dev_size_mb"]),
                   "hw_queue_depth": int(env["dev_hw_qd"]),
                   "completion_us": int(env["dev_lat_ns"]) / 1000.0,
                   "mbps": int(env["dev_mbps"])},
        "capacity": cap,
        "victim": {"workload": "4k randread, psync QD1, fio rate_iops",
                   "target_iops": target,
                   "target_pct_of_qd1": int(env["victim_pct"]),
                   "solo_p99_us": int(env["victim_solo_p99_us"]),
                   "latency_target_pct_of_solo_p99": int(env["victim_lat_pct"])},
        "neighbour": {"workload": "1M randread, io_uring QD%s" % env["neighbour_qd"]},
        "phase3_policy": {"device": pol["device"], "victim": pol["victim"],
                          "neighbour": pol["neighbour"], "why": why,
                          "source": "make bench, noisy-neighbour scenario "
                                    "(selftests/bench/scen-noisy.sh)"},
        "isolation_definition": isolation_def,
        "phases": phases,
    }
    with open(os.path.join(outdir, "demo.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    print_table(doc, cap_bw)
    plot(doc, outdir)


def work_csv(tenants, cap):
    """The device's capacity used while both run (doc/bench.md, work_csv_pct):
    the victim's IOPS over its shape's capacity (4k QD1), plus the
    neighbour's MB/s over its (1 MiB reads), in %; None unless both ran."""
    v, n = tenants.get("victim"), tenants.get("neighbour")
    if not v or not n or not cap.get("randread_4k_qd1_iops") or not cap.get("randread_1m_qd32_mb_s"):
        return None
    return round((v["iops"] / cap["randread_4k_qd1_iops"] +
                  n["mb_s"] / cap["randread_1m_qd32_mb_s"]) * 100, 1)


def print_table(doc, cap_bw):
    d, c, v, n = doc["device"], doc["capacity"], doc["victim"], doc["neighbour"]
    print()
    print("device  null_blk %d GiB, %d slots x %g us timer completions, %d MiB/s bandwidth"
          % (d["size_mb"] // 1024, d["hw_queue_depth"], d["completion_us"], d["mbps"]))
    print("        measured: 4k randread QD64 %d IOPS (p99 %.0f us), 4k QD1 %d IOPS, "
          "1M randread QD32 %.0f MB/s (p99 %.1f ms)"
          % (c["randread_4k_qd64_iops"], c["randread_4k_qd64_p99_us"],
             c["randread_4k_qd1_iops"], c["randread_1m_qd32_mb_s"],
             c["randread_1m_qd32_p99_us"] / 1e3))
    print("victim     %s = %d IOPS (%d%% of its QD1 rate on the idle device)"
          % (v["workload"], v["target_iops"], v["target_pct_of_qd1"]))
    print("neighbour  %s, flat out" % n["workload"])
    pp = doc["phase3_policy"]
    print("phase 3    blkiso's feedback policy, written to /sys/kernel/blkiso/dm-N/:")
    print("  conf     %s" % pp["device"])
    print("  tenant   /victim %s   (latency_us: phase-1 p99 %d us x %d%%)"
          % (pp["victim"], v["solo_p99_us"], v["latency_target_pct_of_solo_p99"]))
    print("  tenant   /neighbour %s" % (pp["neighbour"] or
                                         "(no line: bound by the depth limit while the victim misses)"))
    print()
    hdr = "%-38s %-9s %-20s %8s %8s %9s %9s %9s %8s %8s" % (
        "phase", "tenant", "quota", "IOPS", "MB/s", "p50 us", "p99 us", "isol mean", "isol p05",
        "work_csv")
    print(hdr)
    print("-" * len(hdr))
    for ph in doc["phases"]:
        label = "%d %s" % (ph["phase"], ph["name"])
        wcsv = "%.1f%%" % ph["work_csv_pct"] if ph.get("work_csv_pct") is not None else ""
        for t in TENANTS:
            r = ph["tenants"].get(t)
            if not r:
                continue
            iso_m = "%.1f%%" % r["isolation_mean_pct"] if "isolation_mean_pct" in r else ""
            iso_p = "%.1f%%" % r["isolation_p05_pct"] if "isolation_p05_pct" in r else ""
            print("%-38s %-9s %-20s %8.0f %8.1f %9.0f %9.0f %9s %8s %8s" % (
                label, t, short_quota(r["quota"]), r["iops"], r["mb_s"], r["p50_us"], r["p99_us"],
                iso_m, iso_p, wcsv))
            label = wcsv = ""
    print()
    print("isolation %: " + doc["isolation_definition"] + "; target = %d IOPS" % v["target_iops"])
    print("work_csv: the victim's IOPS / 4k QD1 capacity + the neighbour's MB/s / 1M "
          "capacity, while both run (doc/bench.md)")
    print("latencies: fio completion latency (clat) over the phase; the neighbour's "
          "includes time held by blkiso; quota: the tenant line's allocation "
          "(IOPS) and latency target or slots")
    print()


def short_quota(line):
    """A tenant line in a table column: 'alloc 3500 lat 318us'."""
    if line in ("none", "no line"):
        return line
    kv = dict(x.split("=", 1) for x in line.split() if "=" in x)
    out = []
    if "alloc" in kv:
        out.append("alloc %s" % kv["alloc"])
    if "slots" in kv:
        out.append("slots %s" % kv["slots"])
    elif "latency_us" in kv:
        out.append("lat %sus" % kv["latency_us"])
    return " ".join(out) or line[:16]


def alloc_of(line):
    """A tenant line's alloc= in the plot's caption: 'no line' without one."""
    if not line:
        return "no line"
    return dict(x.split("=", 1) for x in line.split() if "=" in x).get("alloc", "none")


def gp_term():
    try:
        terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                               text=True).stdout + subprocess.run(
            ["gnuplot", "-e", "set terminal"], capture_output=True, text=True).stderr
    except FileNotFoundError:
        return None
    if "pngcairo" in terms:
        return "pngcairo size 1200,800 font 'Sans,11'"
    if " png " in terms or "\npng" in terms or "png " in terms:
        return "png size 1200,800"
    return None


def plot(doc, outdir):
    secs = doc["phase_seconds"]
    gap = 3
    dat = os.path.join(outdir, "demo-plot.dat")
    with open(dat, "w") as f:
        for t in TENANTS:
            f.write("# %s: x iops p99_ms\n" % t)
            for ph in doc["phases"]:
                r = ph["tenants"].get(t)
                off = (ph["phase"] - 1) * (secs + gap)
                if r:
                    for s in r["per_second"]:
                        f.write("%.2f %.1f %s\n" % (off + s["t"], s["iops"],
                                                     "%.3f" % (s["p99_us"] / 1e3)
                                                     if s["p99_us"] else "NaN"))
                f.write("\n")
            f.write("\n\n")
    term = gp_term()
    png = os.path.join(outdir, "demo.png")
    if not term:
        print("no gnuplot png terminal: %s not drawn (data in %s)" % (png, dat))
        return
    target = doc["victim"]["target_iops"]
    xmax = 3 * secs + 2 * gap + 0.5
    objs, labels = [], []
    for ph in doc["phases"]:
        x0 = (ph["phase"] - 1) * (secs + gap)
        iso = ph["tenants"]["victim"]
        short = {1: "1: victim alone", 2: "2: + neighbour, no policy",
                 3: "3: + neighbour, blkiso %s\\nalloc: victim %s, neighbour %s"
                    % ((doc["phase3_policy"]["device"].split() or ["-"])[0].replace("_", "\\\\_"),
                       alloc_of(doc["phase3_policy"]["victim"]),
                       alloc_of(doc["phase3_policy"]["neighbour"]))}[ph["phase"]]
        color = {1: "#eef5ee", 2: "#fbeaea", 3: "#eaf0fb"}[ph["phase"]]
        objs.append("set object %d rect from %g, graph 0 to %g, graph 1 behind "
                    "fillcolor rgb '%s' fillstyle solid noborder"
                    % (ph["phase"], x0, x0 + secs + 0.5, color))
        nb = ph["tenants"].get("neighbour")
        nbs = "\\nneighbour %.0f MB/s" % nb["mb_s"] if nb else ""
        labels.append("set label %d \"%s\\nvictim isolation %.0f%% (p05 %.0f%%)%s\" at %g, graph 0.97 "
                      "left front font ',10'"
                      % (ph["phase"], short, iso["isolation_mean_pct"],
                         iso["isolation_p05_pct"], nbs, x0 + 0.3))
    gp = """
set terminal %(term)s
set output '%(png)s'
set multiplot layout 2,1 title "blkiso demo: victim (4k QD1 at %(target)d IOPS) vs noisy neighbour (1M io\\\\_uring QD32), %(secs)d s per phase"
set grid ytics lc rgb '#cccccc'
set xrange [0:%(xmax)g]
set key outside right top
set lmargin 12
set rmargin 22
%(objs)s
%(labels)s
set ylabel 'IOPS (per second)'
set yrange [0:*]
set offsets 0, 0, graph 0.35, 0
unset xlabel
set format x ''
plot '%(dat)s' index 0 using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1a7f37' title 'victim', \\
     '%(dat)s' index 1 using 1:2 with linespoints lw 2 pt 5 ps 0.6 lc rgb '#cf222e' title 'neighbour', \\
     %(target)g with lines dt 2 lw 1.5 lc rgb '#1a7f37' title 'victim target'
unset label
set offsets 0, 0, 0, 0
set logscale y
set yrange [0.1:*]
set ylabel 'p99 completion latency (ms)'
set xlabel 'seconds (each phase from the victim start; fio logs, 1 s windows)'
set format x '%%g'
set format y '%%g'
plot '%(dat)s' index 0 using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1a7f37' title 'victim', \\
     '%(dat)s' index 1 using 1:3 with linespoints lw 2 pt 5 ps 0.6 lc rgb '#cf222e' title 'neighbour'
unset multiplot
""" % {"term": term, "png": png, "dat": dat, "target": target, "secs": secs,
       "xmax": xmax, "objs": "\n".join(objs), "labels": "\n".join(labels)}
    gpf = os.path.join(outdir, "demo-plot.gp")
    with open(gpf, "w") as f:
        f.write(gp)
    r = subprocess.run(["gnuplot", gpf], capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write(r.stderr)
        sys.exit("gnuplot failed")
    print("wrote %s and %s" % (os.path.join(outdir, "demo.json"), png))


if __name__ == "__main__":
    main()
