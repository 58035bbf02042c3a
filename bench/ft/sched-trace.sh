#!/usr/bin/env bash
# Runs one job under kernel scheduler tracing (needs root and tracefs) and writes OUT.out,
# OUT.err (the job's stdout/stderr: run it with --opt ft-trace=true) and OUT.trace (a tracefs
# instance with trace_clock mono, the clock of System.nanoTime, so its stamps compare with the
# ft-trace lines; events sched_switch, sched_waking, sched_process_exit/free and signal_generate
# for signal 9, with the thread-group id of each task). Then bench/ft/cpu-window.py OUT.trace
# OUT.err says who had the CPUs during the recovery (docs/fault-tolerance.md, "Where a
# recovery's time goes").
#
#   bench/ft/sched-trace.sh /tmp/j1 bin/ftmpirun -np 4 --comm-mode shrink --recovery-mode auto \
#       --opt ft-trace=true --inject rank=1,at-call=300 bench ft-recover
#   bench/ft/cpu-window.py /tmp/j1.trace /tmp/j1.err
# SCHED_TRACE_KB sets the trace buffer per CPU (default 262144, 256 MiB).
set -u
[ $# -ge 2 ] || { sed -n '2,14p' "$0"; exit 2; }
out=$1; shift
T=/sys/kernel/tracing/instances/ftmpi-sched-$$
mkdir "$T" || { echo "sched-trace.sh: cannot make a tracefs instance (root? tracefs mounted?)" >&2; exit 1; }
events="sched/sched_switch sched/sched_waking sched/sched_process_exit sched/sched_process_free signal/signal_generate"
echo mono > "$T/trace_clock"
echo "${SCHED_TRACE_KB:-262144}" > "$T/buffer_size_kb" # per CPU; 8 MiB lost CPU 0's events of a 30 000-call job
echo 1 > "$T/options/record-tgid"
echo 'sig==9' > "$T/events/signal/signal_generate/filter"
for e in $events; do echo 1 > "$T/events/$e/enable"; done
echo 1 > "$T/tracing_on"
"$@" > "$out.out" 2> "$out.err"
rc=$?
echo 0 > "$T/tracing_on"
cat "$T/trace" > "$out.trace"
for e in $events; do echo 0 > "$T/events/$e/enable"; done
rmdir "$T"
exit $rc
