#!/usr/bin/env bash
# Fault-tolerance benchmarks of issue 7 (see docs/benchmarks.md, "Fault tolerance"): runs the
# bench ft-* programs through bin/ftmpirun, interleaved, and prints medians.
#
#   bench/ft/run-ft-bench.sh [--rounds R] [--trials T] [--np "4 8"] [--recover-np "4 8 16"]
#                            [--agree-fast "auto 0 8"] [--kill-at steady|jit]
#                            [--only overhead,paired,detect,agree,sim,agree-sim,recover,after]
#                            [--after-np "3"]
#
# overhead: R rounds, each one job with the detector on (--hb-period 50, the default) and one
#           with it off (--hb-period 0), the order alternating per round; a table of medians,
#           the ratio of the medians and the median/min/max of the per-round (paired) ratios.
# paired:   R jobs of bench ft-overhead paired (np 2): within each job 21 pairs of blocks with every
#           rank's detector running and paused, order alternating; per job the median of the
#           per-pair on/off ratios and their quartiles; then the medians over the jobs.
# detect:   T jobs per np and signal (SIGKILL, SIGSTOP), two rounds each (cold, then warm); medians of "first survivor told" and
#           "every survivor told", ms after the signal.
# agree:    T jobs per np; medians of each figure (us). --agree-fast "auto 0 8": per trial and np one
#           job per value of the job option agree-fast (auto, the default: the fast path above
#           16 members; 0: coordinator protocol only; N: the fast path up to N members),
#           interleaved, medians per value.
# sim:      the simulated detector table (bench ft-sim).
# agree-sim: the simulated agreement table (bench ft-agree-sim, N = 4..4096).
# recover:  T jobs per --recover-np and recovery kind (bench ft-recover, --recovery-mode auto --opt
#           ft-trace=true, rank 1 SIGKILLed; --kill-at steady, the default: 300 calls after every
#           rank's JIT went quiet, 20 000 calls in; jit: at its call 300, while the JIT compiles the
#           loop, the figure before session 21): SHRINK, BLANK, REBUILD with a warm
#           spare (-sp 1), REBUILD by a cold respawn; per job the slowest survivor's "notice to
#           rebuilt", then the median over the jobs (ms); also the median survivor; and a second
#           table: from the last survivor's notice to the last COMM_WORLD rebuilt (the recovery
#           once every survivor knew; trace stamps of one host share a clock); a third: from the
#           injected SIGKILL to the last COMM_WORLD rebuilt (detection included); a fourth: from
#           the SIGKILL to every rank's return from the first allReduce after the recovery (the
#           job computes again; under REBUILD the replacement's start-up included).
# after:    (not in the default list) T jobs per --after-np of bench ft-after (SHRINK, BLANK,
#           REBUILD with a warm spare): an 8-byte ping-pong and a one-int allReduce before a
#           failure and after its recovery; medians over the jobs of before, after and after/before.
# Raw RESULT lines go to bench/results/ft-<UTC time, to the second>.txt as well.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
run="$root/bin/ftmpirun"
rounds=7 trials=7 nps="4 8" rnps="4 8 16" anps="3" afs="auto" killat=steady only="overhead,paired,detect,agree,sim,agree-sim,recover"
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --trials) trials=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --recover-np) rnps=$2; shift 2 ;;
        --after-np) anps=$2; shift 2 ;;
        --agree-fast) afs=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --kill-at) killat=$2; shift 2 ;;
        -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
        *) echo "run-ft-bench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for v in "$rounds" "$trials"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "run-ft-bench.sh: --rounds/--trials expect a positive integer, got '$v'" >&2; exit 2; }
done
for v in $afs; do
    [[ $v =~ ^([0-9]+|auto)$ ]] || { echo "run-ft-bench.sh: --agree-fast expects auto or numbers of members (0 or more), got '$v'" >&2; exit 2; }
done
. "$here/lib.sh"
recover_kill "$killat" || exit 2
mkdir -p "$root/bench/results"
raw="$root/bench/results/ft-$(date -u +%Y%m%d-%H%M%S).txt" # seconds: two runs in one minute must not share a file
: > "$raw"
echo "# $(date -u '+%F %T UTC'); $(uptime)" | tee -a "$raw"
job() { # job TAG ARGS...: runs one ftmpirun, appends its RESULT line tagged
    local tag=$1; shift
    local line
    line=$("$run" --timeout 600 "$@" 2>/dev/null | grep '^RESULT' || true)
    [ -n "$line" ] || { echo "run-ft-bench.sh: no RESULT from: ftmpirun $*" >&2; return 0; }
    sed "s/^/$tag /" <<< "$line" >> "$raw"
}

if [[ ,$only, == *,overhead,* ]]; then
    for r in $(seq 1 "$rounds"); do
        if (( r % 2 )); then order="50 0"; else order="0 50"; fi
        for hb in $order; do job "hb=$hb" -np 2 --hb-period "$hb" bench ft-overhead; done
    done
    on_lines=$(grep '^hb=50 ' "$raw" | grep ft-overhead || true)
    off_lines=$(grep '^hb=0 ' "$raw" | grep ft-overhead || true)
    echo "## ft-overhead, np 2, $rounds interleaved rounds (each job: median of its blocks)"
    echo "on = detector at --hb-period 50 (the default), off = --hb-period 0; paired = the on/off ratio of each round"
    echo
    echo "| metric | on (median) | off (median) | on/off of the medians | paired on/off: median | min | max | rounds |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    for k in lat8_us bw64k_MBps app_us_per_iter; do
        on=$(field $k <<< "$on_lines" | median)
        off=$(field $k <<< "$off_lines" | median)
        paste <(field $k <<< "$on_lines") <(field $k <<< "$off_lines") \
            | awk '$1 != "" && $2 != "" && $2 > 0 { print $1 / $2 }' > "$raw.ratios"
        pm=$(median < "$raw.ratios")
        mm=$(sort -g "$raw.ratios" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.4f %.4f %d", lo, hi, NR }')
        read -r lo hi cnt <<< "$mm"
        awk -v k=$k -v on="$on" -v off="$off" -v pm="$pm" -v lo="$lo" -v hi="$hi" -v c="$cnt" \
            'BEGIN { printf "| %s | %s | %s | %.4f | %.4f | %s | %s | %s |\n", k, on, off, on / off, pm, lo, hi, c }'
    done
    rm -f "$raw.ratios"
    echo
    echo "detector threads' CPU during the measured pass, % of one core (max over ranks), median of $rounds:" \
        "$(field detector_cpu_pct <<< "$on_lines" | median)"
    echo "detector thread's wake-ups (context switches) per second (max over ranks), median of $rounds:" \
        "$(field detector_wakeups_per_s <<< "$on_lines" | median)"
    echo "(latency: lower is better, so on/off > 1 is a cost; bandwidth: higher is better, on/off < 1 is a cost)"
fi

if [[ ,$only, == *,paired,* ]]; then
    for r in $(seq 1 "$rounds"); do job paired -np 2 bench ft-overhead paired; done
    lines=$(grep '^paired ' "$raw" | grep ft-overhead-paired || true)
    echo "## ft-overhead paired, np 2, $rounds jobs; within each job 21 pairs of blocks, detector running (on) and paused (off)"
    echo
    echo "| metric | on (median of jobs) | off | paired on/off per job: median over jobs | jobs' medians, min-max | quartiles of the pairs (median over jobs) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for k in lat8_us bw64k_MBps app_us_per_iter; do
        mm=$(field ${k}_paired <<< "$lines" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }')
        echo "| $k | $(field ${k}_on <<< "$lines" | median) | $(field ${k}_off <<< "$lines" | median) |" \
            "$(field ${k}_paired <<< "$lines" | median) | $mm |" \
            "$(field ${k}_q1 <<< "$lines" | median)-$(field ${k}_q3 <<< "$lines" | median) |"
    done
    echo
    echo "detector threads' CPU in the running halves, % of one core (max over ranks), median of $rounds:" \
        "$(field detector_cpu_pct <<< "$lines" | median)"
    echo "(latency and the application loop: on/off > 1 is a cost; bandwidth: on/off < 1 is a cost)"
fi

if [[ ,$only, == *,detect,* ]]; then
    for np in $nps; do
        for t in $(seq 1 "$trials"); do
            job "detect-np$np" -np "$np" --recovery-mode ignore bench ft-detect kill
            job "detect-np$np" -np "$np" --recovery-mode ignore bench ft-detect stop
        done
        for sig in KILL STOP; do
            for round in cold warm; do
                sel=$(grep "^detect-np$np " "$raw" | grep "round $round " | grep "sig $sig " || true)
                [ -n "$sel" ] || continue
                echo "## ft-detect np $np SIG$sig $round (alive $(field alive <<< "$sel" | head -1)), $trials trials:" \
                    "first survivor told $(field first_ms <<< "$sel" | median) ms," \
                    "every survivor told $(field every_ms <<< "$sel" | median) ms (medians)"
            done
        done
    done
fi

if [[ ,$only, == *,agree,* ]]; then
    for t in $(seq 1 "$trials"); do
        for np in $nps; do
            for af in $afs; do
                job "agree-np$np-af$af" -np "$np" --recovery-mode ignore --opt agree-fast="$af" bench ft-agree
            done
        done
    done
    for np in $nps; do
        for af in $afs; do
            sel=$(grep "^agree-np$np-af$af " "$raw" || true)
            printf "## ft-agree np %s agree-fast %s, %s jobs, medians:" "$np" "$af" "$trials"
            for k in agree_us allreduce_us ratio loop_agree_us loop_allreduce_us loop_ratio shrink_us first_agree_us agree_acked_us shrink_after_us agree_on_shrunk_us \
                     shrink_failed_us agree_failed_us; do
                printf " %s %s" "$k" "$(field $k <<< "$sel" | median)"
            done
            echo
        done
    done
fi

if [[ ,$only, == *,recover,* ]]; then
    declare -A kinds=([shrink]="--comm-mode shrink" [blank]="--comm-mode blank"
        [rebuild-warm]="--comm-mode rebuild -sp 1" [rebuild-cold]="--comm-mode rebuild")
    for t in $(seq 1 "$trials"); do
        for np in $rnps; do
            for k in shrink blank rebuild-warm rebuild-cold; do
                read -r -a o <<< "${kinds[$k]}"
                err=$("$run" --timeout 600 -np "$np" "${o[@]}" --recovery-mode auto --opt ft-trace=true \
                        "${recover_inject[@]}" bench "${recover_args[@]}" 2>&1 >/dev/null || true)
                # every survivor's "notice to rebuilt" of this job, one line
                ms=$(sed -nE 's/.*recovery to generation 1: .*notice to rebuilt ([0-9.]+) ms.*/\1/p' <<< "$err" | paste -sd' ' - || true)
                [ -n "$ms" ] || { echo "run-ft-bench.sh: no ft-trace line from ft-recover np $np $k" >&2; continue; }
                echo "recover-np$np $k $ms" >> "$raw"
                # the last survivor's COMM_WORLD rebuilt minus the last survivor's notice (one host:
                # the trace's System.nanoTime stamps share one clock): the recovery once all knew
                all=$(awk '/ trace: rank [0-9]+: t=[0-9]+ notice of rank 1$/ { if (!($4 in n)) n[$4] = substr($5, 3) + 0 }
                           / trace: rank [0-9]+: t=[0-9]+ COMM_WORLD rebuilt, generation 1$/ { b[$4] = substr($5, 3) + 0 }
                           END { for (r in n) { if (n[r] > ln) ln = n[r]; if ((r in b) && b[r] > lb) lb = b[r] }
                                 if (ln > 0 && lb > 0) printf "%.3f", (lb - ln) / 1e6 }' <<< "$err")
                [ -n "$all" ] && echo "recoverall-np$np $k $all" >> "$raw"
                # the injected SIGKILL to the last survivor's COMM_WORLD rebuilt: the whole failure,
                # detection included (the victim prints "SIGKILL requested" with ft-trace)
                # and to the last rank's return from the first allReduce after the recovery
                # (ft-recover prints it): the job computes again, a replacement included; "-" if absent
                read -r end back < <(awk '/ trace: rank [0-9]+: t=[0-9]+ SIGKILL requested$/ { k = substr($5, 3) + 0 }
                           / trace: rank [0-9]+: t=[0-9]+ COMM_WORLD rebuilt, generation 1$/ { v = substr($5, 3) + 0; if (v > lb) lb = v }
                           /^ft-recover: rank [0-9]+: t=[0-9]+ resumed after the recovery$/ { v = substr($4, 3) + 0; if (v > lr) lr = v }
                           function ms(t) { return k > 0 && t > 0 ? sprintf("%.3f", (t - k) / 1e6) : "-" }
                           END { print ms(lb), ms(lr) }' <<< "$err")
                [ "$end" != - ] && echo "recoverend-np$np $k $end" >> "$raw"
                [ "$back" != - ] && echo "recoverback-np$np $k $back" >> "$raw"
            done
        done
    done
    echo "## ft-recover: notice to COMM_WORLD rebuilt (ms), $trials jobs each, rank 1 SIGKILLed (--kill-at $killat); median over jobs of the slowest survivor (of the median survivor)"
    printf '%-5s %-14s %-14s %-14s %-14s\n' np shrink blank rebuild-warm rebuild-cold
    for np in $rnps; do
        printf '%-5s' "$np"
        for k in shrink blank rebuild-warm rebuild-cold; do
            sel=$(grep "^recover-np$np $k " "$raw" | cut -d' ' -f3- || true)
            slow=$(while read -r l; do [ -n "$l" ] && tr ' ' '\n' <<< "$l" | sort -g | tail -1; done <<< "$sel" | median)
            mid=$(while read -r l; do [ -n "$l" ] && tr ' ' '\n' <<< "$l" | median; done <<< "$sel" | median)
            printf ' %-14s' "$slow ($mid)"
        done
        echo
    done
    for fig in "recoverall:the last survivor's notice to the last survivor's COMM_WORLD rebuilt (ms): the recovery once every survivor knew" \
               "recoverend:the SIGKILL to the last survivor's COMM_WORLD rebuilt (ms): detection and recovery" \
               "recoverback:the SIGKILL to every rank's return from the first allReduce after the recovery (ms): the job computes again, a REBUILD replacement included"; do
        echo "## ft-recover: ${fig#*:}; median over jobs"
        printf '%-5s %-14s %-14s %-14s %-14s\n' np shrink blank rebuild-warm rebuild-cold
        for np in $rnps; do
            printf '%-5s' "$np"
            for k in shrink blank rebuild-warm rebuild-cold; do
                printf ' %-14s' "$(grep "^${fig%%:*}-np$np $k " "$raw" | cut -d' ' -f3 | median)"
            done
            echo
        done
    done
fi

if [[ ,$only, == *,after,* ]]; then
    declare -A akinds=([shrink]="--comm-mode shrink" [blank]="--comm-mode blank" [rebuild-warm]="--comm-mode rebuild -sp 1")
    for t in $(seq 1 "$trials"); do
        for np in $anps; do
            for k in shrink blank rebuild-warm; do
                read -r -a o <<< "${akinds[$k]}"
                line=$("$run" --timeout 600 -np "$np" "${o[@]}" --recovery-mode auto bench ft-after 2>/dev/null | grep '^RESULT ft-after' || true)
                [ -n "$line" ] || { echo "run-ft-bench.sh: no RESULT line from ft-after np $np $k" >&2; continue; }
                # RESULT ft-after np N mode M ping_us B A ratio R first F allreduce_us B A ratio R first F
                read -r -a f <<< "$line"
                echo "after-np$np $k ${f[7]} ${f[8]} ${f[10]} ${f[14]} ${f[15]} ${f[17]}" >> "$raw"
            done
        done
    done
    echo "## ft-after: before the failure / after the recovery (median over $trials jobs of each job's median round), ratio after/before"
    printf '%-5s %-13s %-26s %-26s\n' np kind "ping 8 B one-way us" "allreduce 1 int us"
    for np in $anps; do
        for k in shrink blank rebuild-warm; do
            col() { grep "^after-np$np $k " "$raw" | cut -d' ' -f"$1" | median; }
            printf '%-5s %-13s %-26s %-26s\n' "$np" "$k" "$(col 3) / $(col 4) ($(col 5)x)" "$(col 6) / $(col 7) ($(col 8)x)"
        done
    done
fi

if [[ ,$only, == *,sim,* ]]; then
    "$run" -np 1 bench ft-sim | tee -a "$raw"
fi

if [[ ,$only, == *,agree-sim,* ]]; then
    "$run" -np 1 bench ft-agree-sim | tee -a "$raw"
fi
echo "# raw results: $raw"
