#!/usr/bin/env python3
"""Splits a SIGKILL's detection into its steps, on one clock (System.nanoTime = CLOCK_MONOTONIC).

Reads the combined output of `bin/ftmpirun ... --opt death-trace=true bench ft-detect kill`
(stdin, or files) and prints, per measured failure, in ms after kill(2):
  seen     the controller learned of the death (death watch, or waitpid when it is off)
  sent     the controller had written the notice to every survivor's control connection
  notice   slowest survivor's control reader had the frame
  handed   slowest survivor's engine had been handed the failure (its listener returned)
  told     slowest survivor's receive had failed (the benchmark's "every survivor told")
"""
import re, sys

def chains(text):
    kills = [(m.group(1), int(m.group(2)), int(m.group(3)), [int(x) for x in m.group(4).split()])
             for m in re.finditer(r"TRACE ft-detect round (\w+) victim (\d+) kill_ns (\d+) told_ns ([\d ]+)", text)]
    ctl = {int(m.group(1)): (m.group(2), int(m.group(3)), int(m.group(4)))
           for m in re.finditer(r"death-trace rank (\d+) (watch|waitpid)_ns (\d+) sent_ns (\d+)", text)}
    notices, handed = {}, {}
    for m in re.finditer(r"death-trace rank (\d+) failed (\d+) notice_ns (\d+) delivered_ns (\d+)", text):
        notices.setdefault(int(m.group(2)), []).append(int(m.group(3)))
        handed.setdefault(int(m.group(2)), []).append(int(m.group(4)))
    for rnd, victim, k, told in kills:
        if victim not in ctl:
            continue
        how, seen, sent = ctl[victim]
        n, h = notices.get(victim, []), handed.get(victim, [])
        yield (rnd, how, (seen - k) / 1e6, (sent - k) / 1e6, (max(n) - k) / 1e6 if n else float("nan"),
               (max(h) - k) / 1e6 if h else float("nan"), (max(told) - k) / 1e6)

text = "".join(open(f).read() for f in sys.argv[1:]) if len(sys.argv) > 1 else sys.stdin.read()
for c in chains(text):
    print("CHAIN round %s via %s seen_ms %.2f sent_ms %.2f notice_ms %.2f handed_ms %.2f told_ms %.2f" % c)
