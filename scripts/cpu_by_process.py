#!/usr/bin/env python3
"""CPU seconds each program (by command name) used over the next SECONDS, read from /proc: where a benchmark's
time went when every process shares two cores. A process that starts in the window counts from its start; one that
ends in it is not counted.

    scripts/cpu_by_process.py SECONDS      e.g. started as bench-feed.sh logs "generating the city"
"""
import collections
import os
import sys
import time

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def cpu_ticks() -> dict[int, tuple[str, int]]:
    """Per process id: its command name and the user + system ticks it used so far."""
    ticks = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                text = stat.read()
        except OSError:
            continue  # ended meanwhile
        # The name is in parentheses and may hold spaces; the fields after it are fixed (utime 14th, stime 15th).
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        ticks[int(pid)] = (name, int(fields[11]) + int(fields[12]))
    return ticks


def main() -> None:
    try:
        seconds = float(sys.argv[1])
    except (IndexError, ValueError):
        sys.exit("usage: cpu_by_process.py SECONDS")
    before = cpu_ticks()
    time.sleep(seconds)
    used = collections.Counter()
    for pid, (name, ticks) in cpu_ticks().items():
        used[name] += (ticks - before.get(pid, (name, 0))[1]) / TICKS_PER_SECOND
    for name, cpu_seconds in used.most_common(8):
        print(f"{name:20s} {cpu_seconds:7.1f} s")
    print(f"all processes {sum(used.values()):.1f} CPU-s in {seconds:.0f} s, of {seconds * os.cpu_count():.0f} the cores had")


if __name__ == "__main__":
    main()
