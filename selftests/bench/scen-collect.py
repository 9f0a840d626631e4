#!/usr/bin/env python3
"""scen-collect.py - one scenario's JSON of `make bench` from its run records.

    scen-collect.py SCENARIO RUNS_DIR DEVICE_TXT OUT_JSON KERNEL ICOUNT
    scen-collect.py --held NOISY_RUN_DIR     (prints 1 if the victim's bounds held)

Run in the guest by scenarios-guest.sh after each scenario.  RUNS_DIR holds
one directory per run (lib-guest.sh: meta.txt, fio JSON and logs with
unix-epoch stamps in ms); DEVICE_TXT the device's shaping and capacity
measured in the same boot ("key=value" lines).  Python 3 standard library.

Output, one file per scenario (accuracy, noisy, convergence, scale, buffered,
ratestep):
  {"scenario", "kernel", "icount": 0|1, "device": {...},
   "runs": [{"anchor": blkiso|io.max|iocost|bfq|none, "case", "params",
             "metrics": {name: number|null}, "series": {"t_s": [...], ...}}
            | {"anchor", "case", "skipped": "reason", "params", "metrics": {},
               "series": {}}]}
params: what was configured: the exact control lines ("<cgroup>": "<line> >
<file under /sys>"; io.cost.model, io.cost.qos, scheduler), the workload, the
quota.  4k-eq = bytes / 4096.

accuracy  metrics quota (4k-eq IOPS configured), achieved (fio's bytes /
          4096 / its runtime), err_run_pct = |achieved - quota| / quota x 100,
          err_win_mean_pct, err_win_max_pct (per 1 s window of fio's IOPS log:
          the run's first $secs whole seconds, a second with no completion
          counts 0, the drain after the runtime is left out),
          err_win_max_steady_pct (the same without the first second, where
          a full bucket's burst lands), windows, errors;
          series t_s (end of each window, s since the first window's start),
          iops (4k-eq per s)
noisy     metrics victim_target_iops, victim_iops (mean over the together
          phase's seconds), isolation_mean_pct, isolation_p05_pct,
          isolation_p01_pct (per victim second: min(100, IOPS / target) x 100;
          p05/p01 nearest rank over the seconds), victim_p99_us (fio's
          completion-latency histograms of the together phase, reads and
          writes, summed; bin midpoints, within ~1.6%), victim_solo_p99_us,
          victim_solo_iops, p99_ratio, victim_p999_us, victim_solo_p999_us
          and p999_ratio (the same at the 99.9th percentile: how long the
          victim's rarest stalls are, which p99 does not see; a policy that
          lets the neighbour go in bursts, as io.max's slices do, can hold
          p99 and not p99.9), neighbour_mb_s (mean MB/s = 10^6 B/s
          while the victim ran: the raw device's bytes read per victim
          second, from the device poll dstat.txt, less the victim's 4 KiB
          reads; without the poll, fio's per-second log of the neighbour,
          which counts a read when fio reaps it;
          neighbour_from_device 1 or 0 says which), neighbour_errors (read errors fio went on
          through, see scen-noisy.sh), neighbour_idle_mb_s (while the victim's
          cgroup idled; the first second dropped; seconds in which no read
          of the neighbour completed count 0, here and in neighbour_mb_s),
          neighbour_alone_raw_mb_s (the "none" run's neighbour_idle_mb_s:
          the neighbour alone on the raw device without policy),
          release_pct = idle / alone-raw x 100, victim_errors;
          victim_share_pct (victim_iops over the device's randrw_4k_qd1_iops),
          neighbour_share_pct (neighbour_mb_s over its
          randread_1m_qd128_io_uring capacity), work_csv_pct (their sum),
          leftover_pct (neighbour share / (1 - victim share)),
          victim_late_pct (its I/Os fio saw complete after its latency
          target, %), victim_dev_late_pct and late_at_device_pct (blkiso's
          runs: the share blkiso timed late below it, and that over the
          former x 100; late_split()),
          victim_bounds_held (1/0: isolation mean >= 99, p05 >= 95, p99
          ratio <= 1.5), best_static_mb_s (the neighbour's MB/s in the best
          static run, anchors *-static, that held them), static_pct
          (neighbour_mb_s / best_static_mb_s x 100);
          series t_s (s since the victim's start), victim_iops,
          victim_p99_us, neighbour_mb_s
buffered  the metrics and series of noisy: the buffered writer in the
          neighbour's place (its 1 MiB write(2) calls per second, which dirty
          throttling holds to its writeback's rate), the victim reading only;
          release_pct against the "none" run's writer alone (no
          work_csv: the writer's capacity is its writeback's)
convergence  metrics quota, settle_s (from the step to the point after
          which the trailing 1 s rate, 4k-eq, stays within +-5% of the quota;
          null if it never does), settle_100ms_s (the same on the bare
          100 ms samples), pre_step_rate, post_step_rate (mean 4k-eq rate over
          the second half of job a, of job b), overshoot_pct (max trailing 1 s rate after the step
          over the quota, in %, may be negative);
          series t_s (s from the step, every 100 ms), iops_4k (over the
          last 100 ms), iops_4k_1s (over the last 1 s); each 100 ms log
          sample of a job covers the time since its previous one
ratestep  the io.max-static runs noisy's metrics; a "steps" run per phase k
          (1: R, 2: 2R, 3: R/2) rate_k, victim_iops_k, isolation_mean_pct_k,
          isolation_p05_pct_k, victim_p99_us_k, victim_solo_p99_us_k,
          p99_ratio_k, victim_bounds_held_k, neighbour_mb_s_k,
          best_static_mb_s_k, static_pct_k, noisy's late-I/O split over
          the three phases, and, after each step (k = 2, 3),
          victim_settle_s_k, neighbour_settle_s_k, settle_s_k
          (ratestep_settle(); doc/bench.md); series t_s, phase,
          victim_iops, victim_p99_us, neighbour_mb_s per 250 ms (the
          raw device's reads less the victim's, neighbour_from_device 1,
          as noisy's)
scale     metrics iops_total, instr_per_io (1e9 / iops_total: guest
          instructions per I/O in icount mode, else null), iops_total_1,
          instr_per_io_1 (the same 8 jobs in 1 configured cgroup), ratio
          (instr_per_io / instr_per_io_1), jobs_min_iops, jobs_max_iops
          (per-job spread with 1,000 cgroups); series {}
"""
import glob
import json
import math
import os
import sys

PLAT_BITS, PLAT_VAL = 6, 64


def plat_idx_to_val(idx):
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    return base + (k + 0.5) * (1 << error_bits)


def hist_pct(bins, pct):
    total = sum(bins)
    if not total:
        return None
    acc = 0
    for idx, n in enumerate(bins):
        acc += n
        if acc >= pct / 100.0 * total:
            return plat_idx_to_val(idx)
    return None


def num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return int(f) if f.is_integer() and "." not in v else f


def kv_lines(path):
    d = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                d[k] = num(v)
    return d


def r1(x, nd=1):
    return None if x is None else round(x, nd)


def fio_json(path):
    with open(path) as f:
        text = f.read()
    return json.loads(text[text.index("{"):])


def log_rows(pattern):
    """fio log rows (t_ms, value, dir) of every file matching pattern."""
    rows = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for line in f:
                p = [x.strip() for x in line.split(",")]
                if len(p) >= 3 and p[0]:
                    rows.append((int(p[0]), float(p[1]), int(p[2])))
    return sorted(rows)


def hist_rows(pattern):
    """fio histogram log rows (t_ms, dir, bins)."""
    rows = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for line in f:
                p = [x.strip() for x in line.split(",")]
                if len(p) > 3 and p[0]:
                    rows.append((int(p[0]), int(p[1]), [int(x) for x in p[3:] if x]))
    return rows


def windows(rows, period_ms):
    """Sum a log's directions per window: [(t_ms, value)], windows keyed by
    the stamp (stamps of one window differ by a few ms between directions)."""
    out = []
    for t, v, _ in rows:
        if out and t - out[-1][0] < period_ms / 2:
            out[-1][1] += v
        else:
            out.append([t, v])
    return out


def grid(ws, start, n):
    """n whole 1 s windows from start: [(t_ms, value)]; a second without a
    log line (nothing completed in it) counts 0, but the n-th (fio may not
    log it), lines past n are the drain after fio's runtime."""
    out = [(start + 1000 * k, near(ws, start + 1000 * k)) for k in range(1, n + 1)]
    if out and out[-1][1] is None:
        out.pop()	# fio does not always log the last whole second
    return [(t, v or 0.0) for t, v in out]


def nearest_rank(vals, pct):
    if not vals:
        return None
    s = sorted(vals)
    k = max(1, int(math.ceil(pct / 100.0 * len(s))))
    return s[k - 1]


def mean(vals):
    return sum(vals) / len(vals) if vals else None


def params_of(meta):
    skip = ("scenario", "anchor", "case", "skipped")
    p = {}
    for k, v in meta.items():
        if k in skip:
            continue
        p[k[6:] if k.startswith("param.") else k] = v
    return p


def accuracy(run, meta):
    q = meta["quota"]
    bs = meta["bs"]
    doc = fio_json(os.path.join(run, "t.json"))
    j = doc["jobs"][0]
    r = j["read"]
    achieved = r["io_bytes"] / 4096.0 / (r["runtime"] / 1000.0) if r["runtime"] else 0.0
    ws = windows(log_rows(os.path.join(run, "t_iops.*.log")), 1000)
    start = doc["timestamp_ms"] - j["job_runtime"]	# fio's start, within ~100 ms
    if ws and abs(ws[0][0] - 1000 - start) < 500:
        start = ws[0][0] - 1000
    ws = grid(ws, start, int(meta["secs"]))
    w4k = [v * bs / 4096.0 for _, v in ws]
    errs = [abs(w - q) / q * 100 for w in w4k]
    t0 = start
    return ({
        "quota": q, "achieved": r1(achieved, 2),
        "err_run_pct": r1(abs(achieved - q) / q * 100, 3),
        "err_win_mean_pct": r1(mean(errs), 3), "err_win_max_pct": r1(max(errs) if errs else None, 3),
        "err_win_max_steady_pct": r1(max(errs[1:]) if len(errs) > 1 else None, 3),
        "windows": len(ws), "errors": j.get("error", 0),
    }, {"t_s": [r1((t - t0) / 1000.0, 2) for t, _ in ws], "iops": [r1(w, 1) for w in w4k]})


def hist_by_window(rows):
    """Histogram rows summed over directions per window: [(t_ms, bins)]."""
    out = []
    for t, _, bins in sorted(rows, key=lambda x: x[0]):
        if out and t - out[-1][0] < 500:
            b = out[-1][1]
            if len(b) < len(bins):
                b.extend([0] * (len(bins) - len(b)))
            for i, n in enumerate(bins):
                b[i] += n
        else:
            out.append([t, list(bins)])
    return out


def hist_total(rows):
    total = []
    for _, _, bins in rows:
        if len(total) < len(bins):
            total.extend([0] * (len(bins) - len(total)))
        for i, n in enumerate(bins):
            total[i] += n
    return total


def late_count(bins, thr_ns):
    """I/Os of a fio histogram above @thr_ns (bin values as hist_pct's)."""
    return sum(n for i, n in enumerate(bins) if n and plat_idx_to_val(i) > thr_ns)


def victim_target_ns(meta, sp99):
    """What the victim's late I/Os are counted against: blkiso's latency
    target where blkiso ran (its line's latency_us: its solo p99 x 1.5,
    scen-noisy.sh), else 1.5x the run's solo p99 (the p99 bound)."""
    for w in str(meta.get("param.victim", "")).split():
        if w.startswith("latency_us=") and w[11:].isdigit():
            return int(w[11:]) * 1000.0
    return sp99 * 1.5 if sp99 else None


def ring_totals(path):
    """A tenant's feedback ring as ring_poll kept it (scen-noisy.sh): every
    read is the whole ring, so reads overlap; each tick (seq) counted once.
    (completed, missed) summed over the ticks, None without the file."""
    ticks = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4 and p[0].isdigit():
                    ticks[int(p[0])] = (int(p[2]), int(p[3]))
    except (OSError, ValueError):
        return None
    if not ticks:
        return None
    return sum(c for c, _ in ticks.values()), sum(m for _, m in ticks.values())


def late_split(run, meta, bins, sp99):
    """Where the victim's late I/Os were late (doc/bench.md): victim_late_pct,
    the share of its I/Os fio saw complete after its target; and where
    blkiso ran, victim_dev_late_pct, the share blkiso timed over the same
    target from .map to .end_io (the device and the queues below blkiso),
    and late_at_device_pct, the one over the other x 100: what is left is
    time above the block layer (the submitter's wait for a CPU, the
    completion's way back to it)."""
    thr = victim_target_ns(meta, sp99)
    total = sum(bins) if bins else 0
    out = {"victim_late_pct": r1(late_count(bins, thr) * 100.0 / total, 3)
           if thr and total else None}
    ring = ring_totals(os.path.join(run, "ring-victim.txt"))
    if ring and ring[0]:
        out["victim_dev_late_pct"] = r1(ring[1] * 100.0 / ring[0], 3)
        late = out["victim_late_pct"]
        out["late_at_device_pct"] = r1(out["victim_dev_late_pct"] / late * 100.0, 1) \
            if late else None
    return out


def near(pairs, t, tol=500):
    best = None
    for tt, v in pairs:
        if abs(tt - t) <= tol and (best is None or abs(tt - t) < abs(best[0] - t)):
            best = (tt, v)
    return best[1] if best else None


def dstat_rows(path):
    """The device poll (scen-noisy.sh dstat_poll): [(t_ms, bytes read)],
    the raw device's read sectors (counted as its requests complete)."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 4 and p[0]:
                    rows.append((float(p[0]) * 1000.0, int(p[3]) * 512))
    except (OSError, ValueError):
        return []
    return sorted(rows)


def dstat_at(rows, t):
    """Bytes read by time t (ms), linear between polls; None outside them."""
    if not rows or t < rows[0][0] or t > rows[-1][0]:
        return None
    for (t0, b0), (t1, b1) in zip(rows, rows[1:]):
        if t0 <= t <= t1:
            return b0 + (b1 - b0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return rows[-1][1]


def dstat_mb_s(rows, lo, hi, minus=0.0):
    """MB/s (10^6 B/s) the device read over (lo, hi] ms, less @minus bytes."""
    a, b = dstat_at(rows, lo), dstat_at(rows, hi)
    if a is None or b is None or hi <= lo:
        return None
    return max(0.0, b - a - minus) / 1e6 / ((hi - lo) / 1000.0)


def noisy(run, meta, device):
    target = meta["victim_target_iops"]
    n = int(meta["secs"])
    vw = windows(log_rows(os.path.join(run, "v_iops.*.log")), 1000)
    vw = grid(vw, vw[0][0] - 1000, n) if vw else []
    sw = windows(log_rows(os.path.join(run, "solo_iops.*.log")), 1000)
    sw = grid(sw, sw[0][0] - 1000, n) if sw else []
    vh = hist_rows(os.path.join(run, "v_clat_hist.*.log"))
    sh = hist_rows(os.path.join(run, "solo_clat_hist.*.log"))
    nw = windows(log_rows(os.path.join(run, "n_iops.*.log")), 1000)
    iso = [min(100.0, v / target * 100.0) for _, v in vw]
    vt = hist_total(vh)
    st = hist_total(sh)
    p99, sp99 = hist_pct(vt, 99), hist_pct(st, 99)
    p999, sp999 = hist_pct(vt, 99.9), hist_pct(st, 99.9)
    vstart = vw[0][0] - 1000 if vw else 0
    mbs = 1048576 / 1e6
    # The neighbour logs a second only if some read of it completed then
    # (under io.max most may fail with EAGAIN): a missing second counts 0.
    n_together = [(near(nw, t) or 0.0) * mbs for t, _ in vw]
    istart = meta.get("idle_start_ms", vstart)
    # With the device poll (dstat.txt): the neighbour's MB/s is the raw
    # device's bytes read in the second, less the victim's reads in it
    # (fio's read IOPS x 4 KiB); fio's log counts a read when fio reaps
    # it, seconds after the device did it when the submitter waited for
    # tags (doc/bench.md, nineteenth session)
    ds = dstat_rows(os.path.join(run, "dstat.txt"))
    vr = {}
    for t, v, d in log_rows(os.path.join(run, "v_iops.*.log")):
        if d == 0:
            vr[t] = vr.get(t, 0.0) + v
    vr = sorted(vr.items())
    def dev_mb_s(t):
        return dstat_mb_s(ds, t - 1000, t, (near(vr, t) or 0.0) * 4096)
    if ds:
        n_together = [dev_mb_s(t) or 0.0 for t, _ in vw]
    # the neighbour logs every 1000 ms from its first stamp: the stamps
    # due in the idle window, whether or not a read completed in them
    lo, hi = istart + 1000, vstart + 100
    if nw:
        t0 = nw[0][0]
        first = t0 + max(0, (lo - t0) // 1000 + 1) * 1000
        n_exp = max(1, (hi - first) // 1000 + 1 if hi >= first else 0)
    else:
        n_exp = max(1, int(round((vstart - istart) / 1000.0)) - 1)
    n_idle = [v * mbs for t, v in nw if lo < t <= hi]
    idle = sum(n_idle) / n_exp if vw else None
    if ds and vw:
        idle = dstat_mb_s(ds, lo, vstart)
        n_exp = int(round((vstart - lo) / 1000.0))
    if meta.get("wc_secs") == 0:	# a static frontier step: no idle part
        idle = None
    hw = hist_by_window(vh)
    def errs(name):
        try:
            j = fio_json(os.path.join(run, name))["jobs"][0]
        except (OSError, ValueError, KeyError, IndexError):
            return None
        return j.get("total_err", j.get("error", 0))
    verr, nerr = errs("v.json"), errs("n.json")
    metrics = {
        "victim_target_iops": target,
        "victim_iops": r1(mean([v for _, v in vw])),
        "victim_solo_iops": r1(mean([v for _, v in sw])),
        "isolation_mean_pct": r1(mean(iso), 2),
        "isolation_p05_pct": r1(nearest_rank(iso, 5), 2),
        "isolation_p01_pct": r1(nearest_rank(iso, 1), 2),
        "victim_p99_us": r1(p99 / 1e3 if p99 else None),
        "victim_solo_p99_us": r1(sp99 / 1e3 if sp99 else None),
        "p99_ratio": r1(p99 / sp99 if p99 and sp99 else None, 2),
        "victim_p999_us": r1(p999 / 1e3 if p999 else None),
        "victim_solo_p999_us": r1(sp999 / 1e3 if sp999 else None),
        "p999_ratio": r1(p999 / sp999 if p999 and sp999 else None, 2),
        "neighbour_mb_s": r1(mean(n_together)),
        "neighbour_idle_mb_s": r1(idle),
        "windows": len(vw), "idle_windows": n_exp, "victim_errors": verr,
        "neighbour_errors": nerr,
    }
    series = {"t_s": [], "victim_iops": [], "victim_p99_us": [], "neighbour_mb_s": []}
    for t, v in vw:
        series["t_s"].append(r1((t - vstart) / 1000.0, 2))
        series["victim_iops"].append(r1(v))
        b = near(hw, t)
        pv = hist_pct(b, 99) if b else None
        series["victim_p99_us"].append(r1(pv / 1e3 if pv else None))
        series["neighbour_mb_s"].append(r1((dev_mb_s(t) or 0.0) if ds else
                                           (near(nw, t) or 0.0) * mbs))
    metrics["neighbour_from_device"] = 1 if ds else 0
    metrics.update(late_split(run, meta, vt, sp99))
    return metrics, series


def release(runs, device, cap_key):
    """release_pct: the neighbour's MB/s while the victim idles, over its
    MB/s alone on the raw device without policy: the idle phase of the
    "none" run (the same measurement), else the device setup's capacity run
    (cap_key).  (Named work_conservation_pct before issue 20: it measures
    how fully a policy lets go once the victim stops, not the work done
    while the protection is in force, which work_csv_pct measures.)"""
    alone = None
    for r in runs:
        if r["anchor"] == "none":
            alone = r["metrics"].get("neighbour_idle_mb_s")
    src = "none run, victim idle"
    if not alone:
        cap = device.get(cap_key)
        alone = cap / 1e6 if cap else None
        src = "device capacity run"
    for r in runs:
        m = r["metrics"]
        if "neighbour_idle_mb_s" not in m:
            continue
        idle = m["neighbour_idle_mb_s"]
        m["neighbour_alone_raw_mb_s"] = r1(alone)
        m["release_pct"] = r1(idle / alone * 100 if idle is not None and alone else None)
        r["params"]["release_denominator"] = src


VICTIM_BOUNDS = (("isolation_mean_pct", ">=", 99.0), ("isolation_p05_pct", ">=", 95.0),
                 ("p99_ratio", "<=", 1.5))


def bounds_held(m):
    """The victim's bounds (issue 20): isolation mean >= 99 %, p05 >= 95 %,
    p99 <= 1.5x solo; None if a figure is missing."""
    for k, op, lim in VICTIM_BOUNDS:
        v = m.get(k)
        if v is None:
            return None
        if (v < lim) if op == ">=" else (v > lim):
            return False
    return True


def work_csv(runs, device, victim_key, neighbour_key):
    """Work conservation while both run, as resctl-bench's work_csv: each
    tenant's throughput over the device's capacity for its own I/O shape,
    measured in the same boot (the victim's IOPS over victim_key, the
    victim's workload flat out alone; the neighbour's MB/s over
    neighbour_key, its workload alone), summed: work_csv_pct.  leftover_pct:
    the neighbour's share of what the victim's share leaves, share_n / (1 -
    share_v).  Then the static frontier: best_static_mb_s, the neighbour's
    MB/s in the highest-capped static run (anchors *-static) that held the
    victim's bounds, and static_pct = neighbour_mb_s / best_static_mb_s x
    100 for every run (goal: >= 90 with the bounds held)."""
    vcap, ncap = device.get(victim_key), device.get(neighbour_key)
    for r in runs:
        m = r["metrics"]
        if "neighbour_mb_s" not in m:
            continue
        vs = m["victim_iops"] / vcap if m.get("victim_iops") is not None and vcap else None
        ns = m["neighbour_mb_s"] / (ncap / 1e6) if m.get("neighbour_mb_s") is not None and ncap else None
        m["victim_share_pct"] = r1(vs * 100 if vs is not None else None, 2)
        m["neighbour_share_pct"] = r1(ns * 100 if ns is not None else None, 2)
        m["work_csv_pct"] = r1((vs + ns) * 100 if vs is not None and ns is not None else None)
        m["leftover_pct"] = r1(ns / (1 - vs) * 100 if ns is not None and vs is not None and vs < 1
                               else None)
        m["victim_bounds_held"] = {True: 1, False: 0, None: None}[bounds_held(m)]
    best = None
    for r in runs:
        m = r["metrics"]
        # a cap under which the neighbour moved nothing (6.1's io_uring
        # under io.max: EAGAIN, scen-noisy.sh) is no point of the frontier
        if r["anchor"].endswith("-static") and m.get("victim_bounds_held") == 1 and \
                (m.get("neighbour_mb_s") or 0) > 0:
            if best is None or m["neighbour_mb_s"] > best[0]:
                best = (m["neighbour_mb_s"], r["anchor"], r["case"])
    for r in runs:
        m = r["metrics"]
        if "neighbour_mb_s" not in m:
            continue
        m["best_static_mb_s"] = best[0] if best else None
        m["static_pct"] = r1(m["neighbour_mb_s"] / best[0] * 100
                             if best and best[0] > 0 and m["neighbour_mb_s"] is not None else None)
        if best:
            r["params"]["best_static"] = "%s %s" % (best[1], best[2])


def convergence(run, meta):
    """Each 100 ms sample of a job covers (previous stamp of that job, its
    stamp] (the first one 100 ms) at its rate; rates of jobs a and b add.
    Sampled every 100 ms from a's start: the rate over the last 100 ms
    and over the last 1 s (trailing)."""
    q = float(meta["quota"])
    segs = []
    for name, bs in (("a", meta["bs_a"]), ("b", meta["bs_b"])):
        prev = None
        for t, v, _ in log_rows(os.path.join(run, name + "_iops.*.log")):
            start = t - 100 if prev is None else prev
            segs.append((name, start, t, v * bs / 4096.0))
            prev = t
    sa = [x for x in segs if x[0] == "a"]
    sb = [x for x in segs if x[0] == "b"]
    if not sa or not sb:
        return {"quota": q, "settle_s": None, "settle_100ms_s": None}, {}
    begin, step, end = sa[0][1], sb[0][1], sb[-1][2]

    def rate(lo, hi):	# mean 4k-eq rate over (lo, hi]
        acc = 0.0
        for _, s0, s1, v in segs:
            ov = min(hi, s1) - max(lo, s0)
            if ov > 0:
                acc += v * ov
        return acc / (hi - lo)

    times = list(range(begin + 100, end + 1, 100))
    bare = [rate(t - 100, t) for t in times]
    trail = [rate(t - 1000, t) if t - 1000 >= begin else None for t in times]

    def settle(vals):
        idx = [k for k, t in enumerate(times) if t > step and vals[k] is not None]
        if not idx:
            return None
        bad = [k for k in idx if abs(vals[k] - q) > 0.05 * q]
        if not bad:
            return 0.0
        if bad[-1] == idx[-1]:
            return None	# still outside at the end: never settled
        return round((times[bad[-1]] - step) / 1000.0, 2)

    post = [trail[k] for k, t in enumerate(times) if t > step and trail[k] is not None]
    pre = [bare[k] for k, t in enumerate(times) if (begin + step) / 2 < t <= step]
    late = [bare[k] for k, t in enumerate(times) if t > (step + end) / 2]
    return ({
        "quota": q, "settle_s": settle(trail), "settle_100ms_s": settle(bare),
        "pre_step_rate": r1(mean(pre)), "post_step_rate": r1(mean(late)),
        "overshoot_pct": r1((max(post) - q) / q * 100 if post else None, 2),
    }, {
        "t_s": [round((t - step) / 1000.0, 2) for t in times],
        "iops_4k": [r1(v) for v in bare], "iops_4k_1s": [r1(v) for v in trail],
    })


def scale(run, meta, icount):
    def total(prefix):
        iops = []
        for path in sorted(glob.glob(os.path.join(run, prefix + "[0-9].json"))):
            iops.append(fio_json(path)["jobs"][0]["read"]["iops"])
        return sum(iops), iops
    many, per = total("many")
    one, _ = total("one")
    ipi = 1e9 / many if icount and many else None
    ipi1 = 1e9 / one if icount and one else None
    return {
        "iops_total": r1(many), "instr_per_io": r1(ipi, 0),
        "iops_total_1": r1(one), "instr_per_io_1": r1(ipi1, 0),
        "ratio": r1(ipi / ipi1 if ipi and ipi1 else None, 3),
        "jobs": len(per),
        "jobs_min_iops": r1(min(per)) if per else None,
        "jobs_max_iops": r1(max(per)) if per else None,
    }, {}


RS_MS = 250	# ratestep's log period


def rs_windows(rows):
    """A 250 ms log's directions summed per window: [(t_ms, value)]."""
    return [(t, v) for t, v in windows(rows, RS_MS)]


def rs_hist(rows):
    """Histogram rows summed over directions per 250 ms window: [[t_ms, bins]]."""
    out = []
    for t, _, bins in sorted(rows, key=lambda x: x[0]):
        if out and t - out[-1][0] < RS_MS / 2:
            b = out[-1][1]
            b.extend([0] * max(0, len(bins) - len(b)))
            for i, n in enumerate(bins):
                b[i] += n
        else:
            out.append([t, list(bins)])
    return out


def rs_sum_bins(hs):
    total = []
    for b in hs:
        total.extend([0] * max(0, len(b) - len(total)))
        for i, n in enumerate(b):
            total[i] += n
    return total


def ratestep(run, meta):
    """One run of the three phases (scen-ratestep.sh): per phase k (1: R,
    2: 2R, 3: R/2) its figures (suffix _k) and, per 250 ms interval from
    the phase's start (the step), the series.  The settle times need
    best_static per rate and are added by ratestep_settle()."""
    rates = [int(x) for x in str(meta["rates"]).split()]
    secs = int(meta["secs"])
    mbs = 1048576 / 1e6
    nw = rs_windows(log_rows(os.path.join(run, "n_iops.*.log")))
    # the device poll (dstat.txt), as noisy's: the neighbour's MB/s in an
    # interval is the raw device's bytes read in it less the victim's
    # reads (its read IOPS x 4 KiB); fio's log when there is no poll
    ds = dstat_rows(os.path.join(run, "dstat.txt"))
    m = {"secs": secs, "neighbour_from_device": 1 if ds else 0}
    series = {"t_s": [], "phase": [], "victim_iops": [], "victim_p99_us": [], "neighbour_mb_s": []}
    t0 = None
    phase_bins = []
    for k, rate in enumerate(rates, 1):
        vrows = log_rows(os.path.join(run, "v%d_iops.*.log" % k))
        vw = rs_windows(vrows)
        vr = rs_windows([r for r in vrows if r[2] == 0])
        vh = rs_hist(hist_rows(os.path.join(run, "v%d_clat_hist.*.log" % k)))
        sh = hist_rows(os.path.join(run, "s%d_clat_hist.*.log" % k))
        sp99 = hist_pct(hist_total(sh), 99)
        # the phase's whole 250 ms intervals: fio logs an interval at its end
        start = vw[0][0] - RS_MS if vw else None
        n = secs * 1000 // RS_MS
        ivs = []
        for j in range(1, n + 1):
            t = start + j * RS_MS
            v = near(vw, t, RS_MS // 2)
            b = near(vh, t, RS_MS // 2)
            if ds:
                vrd = (near(vr, t, RS_MS // 2) or 0.0) * RS_MS / 1000.0
                x = dstat_mb_s(ds, t - RS_MS, t, vrd * 4096) or 0.0
            else:
                x = (near(nw, t, RS_MS // 2) or 0.0) * mbs
            ivs.append((t, v, b, x))
        if ivs and ivs[-1][1] is None:
            ivs.pop()	# fio does not always log the last interval
        # an interval without a line: nothing of the victim completed in it
        ivs = [(t, v or 0.0, b, x) for t, v, b, x in ivs]
        if t0 is None:
            t0 = start
        iso = [min(100.0, v / rate * 100.0) for _, v, _, _ in ivs]
        allb = rs_sum_bins([b for _, _, b, _ in ivs if b])
        p99 = hist_pct(allb, 99) if allb else None
        # the per-second figures of the bounds, over the phase's whole seconds
        secs_iso = [mean(iso[j:j + 4]) for j in range(0, len(iso) - 3, 4)]
        m.update({
            "rate_%d" % k: rate,
            "victim_iops_%d" % k: r1(mean([v for _, v, _, _ in ivs])),
            "isolation_mean_pct_%d" % k: r1(mean(secs_iso), 2),
            "isolation_p05_pct_%d" % k: r1(nearest_rank(secs_iso, 5), 2),
            "victim_p99_us_%d" % k: r1(p99 / 1e3 if p99 else None),
            "victim_solo_p99_us_%d" % k: r1(sp99 / 1e3 if sp99 else None),
            "p99_ratio_%d" % k: r1(p99 / sp99 if p99 and sp99 else None, 2),
            "neighbour_mb_s_%d" % k: r1(mean([x for _, _, _, x in ivs])),
        })
        m["victim_bounds_held_%d" % k] = {True: 1, False: 0, None: None}[bounds_held({
            "isolation_mean_pct": m["isolation_mean_pct_%d" % k],
            "isolation_p05_pct": m["isolation_p05_pct_%d" % k],
            "p99_ratio": m["p99_ratio_%d" % k]})]
        for t, v, b, x in ivs:
            pv = hist_pct(b, 99) if b else None
            series["t_s"].append(r1((t - t0) / 1000.0, 2))
            series["phase"].append(k)
            series["victim_iops"].append(r1(v))
            series["victim_p99_us"].append(r1(pv / 1e3 if pv else None))
            series["neighbour_mb_s"].append(r1(x))
        m["_ivs_%d" % k] = ivs
        m["_sp99_%d" % k] = sp99
        phase_bins.append(allb)
    # the late I/Os of the three phases against one target (the line
    # blkiso had, from the solo p99 at R; else 1.5x that)
    m.update(late_split(run, meta, rs_sum_bins(phase_bins), m.get("_sp99_1")))
    return m, series


def ratestep_settle(runs):
    """best_static per rate (the io.max-static runs of rate k, cases
    "r<k>-cap-..."), then for every run of the three phases: static_pct_k
    (the neighbour's MB/s in phase k over best_static at its rate) and, after
    each step (k = 2: doubled, 3: halved), the settle times: from the step
    to the end of the first trailing 1 s window (4 intervals, those since
    the step while fewer) from which every later one in the phase holds:
    victim_settle_s_k the victim (isolation over the window >= 95 %, the
    per-second p05 bound, and its p99 <= 1.5x solo at this rate),
    neighbour_settle_s_k the neighbour (MB/s over the window >= 90 % of
    best_static at this rate), settle_s_k both; -1 if the last window
    misses."""
    best = {}
    for r in runs:
        if not r["anchor"].endswith("-static") or "skipped" in r:
            continue
        k = int(r["case"][1]) if r["case"][:1] == "r" else None
        m = r["metrics"]
        m["victim_bounds_held"] = {True: 1, False: 0, None: None}[bounds_held(m)]
        if k and m["victim_bounds_held"] == 1 and (m.get("neighbour_mb_s") or 0) > 0:
            if k not in best or m["neighbour_mb_s"] > best[k][0]:
                best[k] = (m["neighbour_mb_s"], r["case"])
    for r in runs:
        m = r["metrics"]
        for k in (1, 2, 3):
            ivs = m.pop("_ivs_%d" % k, None)
            sp99 = m.pop("_sp99_%d" % k, None)
            if ivs is None:
                continue
            bs = best.get(k, (None, None))[0]
            m["best_static_mb_s_%d" % k] = bs
            nm = m.get("neighbour_mb_s_%d" % k)
            m["static_pct_%d" % k] = r1(nm / bs * 100 if bs and nm is not None else None)
            if k in best:
                r["params"]["best_static_%d" % k] = "io.max-static " + best[k][1]
            if k == 1:
                continue
            rate = m["rate_%d" % k]
            vok, nok = [], []
            for j in range(len(ivs)):
                w = ivs[max(0, j - 3):j + 1]
                iso = min(100.0, mean([v for _, v, _, _ in w]) / rate * 100.0)
                b = rs_sum_bins([x[2] for x in w if x[2]])
                p99 = hist_pct(b, 99) if b else None
                vok.append(iso >= 95.0 and p99 is not None and sp99 and p99 <= 1.5 * sp99)
                nok.append(bool(bs) and mean([x for _, _, _, x in w]) >= 0.9 * bs)

            def settle(ok):
                if not ok or not ok[-1]:
                    return -1
                j = len(ok) - 1
                while j > 0 and ok[j - 1]:
                    j -= 1
                return (j + 1) * RS_MS / 1000.0
            m["victim_settle_s_%d" % k] = settle(vok)
            m["neighbour_settle_s_%d" % k] = settle(nok) if bs else None
            m["settle_s_%d" % k] = settle([a and b for a, b in zip(vok, nok)]) if bs else None


def main():
    if sys.argv[1:2] == ["--held"]:
        # scen-noisy.sh's bisection: 1 if the noisy run in argv[2] held the
        # victim's bounds, else 0
        run = sys.argv[2]
        m, _ = noisy(run, kv_lines(os.path.join(run, "meta.txt")), {})
        print(1 if bounds_held(m) else 0)
        return
    scen, runs_dir, dev_txt, out, kernel, icount = sys.argv[1:7]
    icount = int(icount)
    device = kv_lines(dev_txt)
    runs = []
    for d in sorted(os.listdir(runs_dir)):
        run = os.path.join(runs_dir, d)
        meta = kv_lines(os.path.join(run, "meta.txt"))
        rec = {"anchor": meta["anchor"], "case": str(meta["case"]), "params": params_of(meta)}
        if "skipped" in meta:
            rec.update({"skipped": meta["skipped"], "metrics": {}, "series": {}})
        else:
            try:
                if scen == "accuracy":
                    m, s = accuracy(run, meta)
                elif scen in ("noisy", "buffered"):
                    m, s = noisy(run, meta, device)
                elif scen == "convergence":
                    m, s = convergence(run, meta)
                elif scen == "ratestep":
                    if meta["anchor"].endswith("-static"):
                        m, s = noisy(run, meta, device)
                    else:
                        m, s = ratestep(run, meta)
                else:
                    m, s = scale(run, meta, icount)
            except (OSError, ValueError, KeyError, IndexError, TypeError, ZeroDivisionError) as e:
                m, s = {}, {}
                rec["error"] = "%s: %s" % (type(e).__name__, e)
            rec.update({"metrics": m, "series": s})
        runs.append(rec)
    if scen == "noisy":
        release(runs, device, "randread_1m_qd128_io_uring_bytes_s")
        work_csv(runs, device, "randrw_4k_qd1_iops", "randread_1m_qd128_io_uring_bytes_s")
    elif scen == "buffered":
        release(runs, device, "write_1m_qd32_bytes_s")
    elif scen == "ratestep":
        ratestep_settle(runs)
    doc = {"scenario": scen, "kernel": kernel, "icount": icount, "device": device, "runs": runs}
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(out + ".tmp", out)
    for r in runs:
        m = r["metrics"]
        brief = " ".join("%s=%s" % (k, v) for k, v in m.items()
                         if k in ("achieved", "err_run_pct", "err_win_max_pct", "isolation_mean_pct",
                                  "isolation_p05_pct", "p99_ratio", "release_pct", "work_csv_pct",
                                  "settle_s", "overshoot_pct", "instr_per_io", "instr_per_io_1",
                                  "p99_ratio_1", "p99_ratio_2", "p99_ratio_3", "static_pct_1",
                                  "static_pct_2", "static_pct_3", "settle_s_2", "settle_s_3",
                                  "victim_settle_s_2", "victim_settle_s_3"))
        print("%s %-7s %-22s %s" % (scen, r["anchor"], r["case"],
                                   r.get("skipped") and "skipped" or r.get("error") or brief))


if __name__ == "__main__":
    main()
