#!/usr/bin/env python3
"""Who had the CPUs during a recovery: reads a trace of bench/ft/sched-trace.sh and the job's
ft-trace lines, and prints the CPU time (ms, summed over CPUs) of each kind of thread between
the victim's SIGKILL and the last survivor's "COMM_WORLD rebuilt", and between the last
survivor's notice and then: the survivors' MPI (main) threads, their JIT compiler and other
threads, the victim's teardown, the controller (ftmpirun), other processes, idle.

    bench/ft/cpu-window.py JOB.trace JOB.err
"""
import collections
import re
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\(\s*(\d+|-+)\)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
SWITCH = re.compile(r'prev_comm=(.*?) prev_pid=(\d+).*==> next_comm=(.*?) next_pid=(\d+)')
events, tgid = [], {}
for line in open(sys.argv[1]):
    m = LINE.match(line)
    if not m:
        continue
    tid = int(m.group(2))
    if m.group(3).isdigit():
        tgid[tid] = int(m.group(3))
    events.append((int(round(float(m.group(5)) * 1e9)), int(m.group(4)), m.group(6), m.group(7), tid, m.group(1)))
stamps = [(int(t), e) for t, e in re.findall(r'ftmpi: trace: rank \d+: t=(\d+) (.*)', open(sys.argv[2]).read())]
kill = min(t for t, e in stamps if 'SIGKILL' in e)
rebuilt = max(t for t, e in stamps if e.startswith('COMM_WORLD rebuilt, generation 1'))
last_notice = max(t for t, e in stamps if e.startswith('notice of rank'))
victim = next(int(re.search(r' pid=(\d+)', a).group(1)) for t, c, n, a, tid, comm in events
              if n == 'signal_generate' and 'comm=java' in a and t >= kill - 1_000_000)
comms = collections.defaultdict(set)
for t, c, n, a, tid, comm in events:
    comms[tgid.get(tid, tid)].add(comm)
ranks = {g for g, s in comms.items() if any(x.startswith(('ftmpi-control', 'ftmpi-detector')) for x in s)}
controller = {g for g, s in comms.items() if any(x.startswith('ftmpirun') for x in s)}


def kind(tid, comm):
    g = tgid.get(tid, tid)
    if tid == 0 or comm.startswith('swapper'):
        return 'idle'
    if g == victim:
        return 'victim (its teardown)'
    if g in controller:
        return 'controller (ftmpirun)'
    if g in ranks:
        if 'Compiler' in comm:
            return 'survivors: JIT compiler threads'
        if comm == 'java':
            return 'survivors: main (MPI) threads'
        return 'survivors: ' + re.sub(r'[-0-9]+$', '', comm)
    return 'other processes'


def window(lo, hi, label):
    ran, current = collections.Counter(), {}
    for t, cpu, n, a, tid, comm in events:
        if n != 'sched_switch':
            continue
        m = SWITCH.search(a)
        if cpu in current:
            since, (c, p) = current[cpu]
            start, end = max(since, lo), min(t, hi)
            if end > start:
                ran[kind(p, c)] += end - start
        current[cpu] = (t, (m.group(3), int(m.group(4))))
    print(f"{label}: {(hi - lo) / 1e6:.2f} ms")
    for k, v in ran.most_common():
        print(f"   {v / 1e6:7.2f} ms  {k}")


window(kill, rebuilt, 'SIGKILL -> last COMM_WORLD rebuilt')
window(last_notice, rebuilt, "last survivor's notice -> last COMM_WORLD rebuilt")
