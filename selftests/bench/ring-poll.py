#!/usr/bin/env python3
"""ring-poll.py - the bench's poll of blkiso's rings (scen-noisy.sh ring_poll,
used by noisy and ratestep): until STOP exists, the victim's and the
neighbour's tenant rings every 100 ms (16 ticks each: 160 ms at tick_ms=10),
the device's ring and its stats line (with the time, as bash's
EPOCHREALTIME) every 500 ms (64 ticks), appended to OUT/ring-victim.txt,
ring-neighbour.txt, ring-dev.txt and stats-poll.txt.  Only the victim's
ring feeds a figure (victim_dev_late_pct); the rest is the run's record.

One process for the whole run, one read(2) per file, one file per 50 ms
step: the bash loop it replaced read each sysfs file a byte at a time
(bash's read builtin; 0.5 ms of the one vCPU per ring) and all four at
once every 100 ms, which stalled blkiso's victim (and no other anchor's)
for 1-4 ms about twelve times a second (thirty-fifth session,
doc/bench.md).  OUT is in the guest's memory (/tmp): the caller copies it
to the run's record.

    ring-poll.py SYSDIR VICTIM_ID NEIGHBOUR_ID OUT STOP
"""
import os
import sys
import time


def read(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None	# a tenant's directory appears with its first bio
    try:
        return os.read(fd, 65536)
    except OSError:
        return None
    finally:
        os.close(fd)


def main():
    sysdir, vid, nid, out, stop = sys.argv[1:6]
    # (path, record, every how many 50 ms steps, at which step of them)
    polls = [(os.path.join(sysdir, vid, "ring"), "ring-victim.txt", 2, 0),
             (os.path.join(sysdir, nid, "ring"), "ring-neighbour.txt", 2, 1),
             (os.path.join(sysdir, "ring"), "ring-dev.txt", 10, 3),
             (os.path.join(sysdir, "stats"), "stats-poll.txt", 10, 7)]
    outs = {name: open(os.path.join(out, name), "ab") for _, name, _, _ in polls}
    step = 0
    while not os.path.exists(stop):
        for path, name, every, at in polls:
            if step % every != at:
                continue
            buf = read(path)
            if buf and name == "stats-poll.txt":
                outs[name].write(b"%.6f %s" % (time.time(), buf))
            elif buf:
                outs[name].write(buf)
        step += 1
        time.sleep(0.05)
    for f in outs.values():
        f.close()


if __name__ == "__main__":
    main()
