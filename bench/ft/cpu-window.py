#!/usr/bin/env python3
"""Who had the CPUs during a recovery: reads a trace of bench/ft/sched-trace.sh and the job's
ft-trace lines, and prints the CPU time (ms, summed over CPUs) of each kind of thread between
the victim's SIGKILL and the last survivor's "COMM_WORLD rebuilt", and between the last
survivor's notice and then: the survivors' MPI (main) threads, their JIT compiler and other
threads, the victim's teardown, the controller (ftmpirun), other processes, idle. Then, for each
survivor's main thread, how long it ran, waited runnable for a CPU, and slept in the window.

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


def main_thread_states(lo, hi):
    """Each survivor's main (MPI) thread: running, runnable (waiting for a CPU), sleeping."""
    switch_state = re.compile(r'prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.*? next_pid=(\d+)')
    state, spent = {}, collections.defaultdict(collections.Counter)

    def add(tid, what, since, until):
        a, b = max(since, lo), min(until, hi)
        if b > a:
            spent[tid][what] += b - a

    for t, cpu, n, a, tid, comm in events:
        if n == 'sched_switch':
            m = switch_state.search(a)
            prev, prev_state, nxt = int(m.group(1)), m.group(2), int(m.group(3))
            if prev in state:
                add(prev, state[prev][0], state[prev][1], t)
            state[prev] = ('runnable' if prev_state.startswith('R') else 'sleeping', t)
            if nxt in state:
                add(nxt, state[nxt][0], state[nxt][1], t)
            state[nxt] = ('running', t)
        elif n == 'sched_waking':
            w = int(re.search(r'pid=(\d+)', a).group(1))
            if w in state and state[w][0] == 'sleeping':
                add(w, 'sleeping', state[w][1], t)
                state[w] = ('runnable', t)
    names = {tid: comm for t, c, n, a, tid, comm in events}
    print(f"each survivor's main thread, SIGKILL -> last COMM_WORLD rebuilt (ms): running / runnable / sleeping")
    for tid, c in sorted(spent.items()):
        if tgid.get(tid) in ranks and tgid.get(tid) != victim and names.get(tid) == 'java' and c['running'] + c['runnable'] > 0:
            print(f"   pid {tgid[tid]} thread {tid}: {c['running'] / 1e6:6.2f} / {c['runnable'] / 1e6:6.2f} / {c['sleeping'] / 1e6:6.2f}")


main_thread_states(kill, rebuilt)
