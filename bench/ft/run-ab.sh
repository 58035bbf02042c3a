#!/usr/bin/env bash
# A/B comparison of the first failure of a job (docs/benchmarks.md, "Issues 7/8, session 5"):
# two variants of ftmpirun options and rank JVM options, interleaved (the order alternates per
# trial), each trial running, per variant:
#   detect:  bench ft-detect kill (--recovery-mode ignore): every survivor told, cold (the job's
#            first failure) and warm (its second), ms after the SIGKILL;
#   agree:   bench ft-agree (--recovery-mode ignore): the first agree after a SIGKILL and the shrink
#            after it (us, max over the ranks);
#   recover: bench ft-recover, rank 1 SIGKILLed (--kill-at as in run-ft-bench.sh: steady, the
#            default, or jit), --recovery-mode auto --opt ft-trace=true: notice to COMM_WORLD
#            rebuilt of the slowest survivor (ms) for SHRINK, BLANK and REBUILD with a warm spare (-sp 1).
# Prints the median of each figure per variant, and the load average before and after.
#
#   bench/ft/run-ab.sh [--trials T] [--np N] [--only detect,agree,recover] [--kill-at steady|jit]
#       --a NAME 'FTMPIRUN-OPTIONS' 'JVM-OPTIONS' --b NAME 'FTMPIRUN-OPTIONS' 'JVM-OPTIONS'
#   e.g. bench/ft/run-ab.sh --a thp '' '' --b nothp '' '-XX:-UseTransparentHugePages'
#        bench/ft/run-ab.sh --a warm '--opt ft-warmup=true' '' --b cold '--opt ft-warmup=false' ''
# Raw lines go to bench/results/ab-<UTC time>.txt.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
run="$root/bin/ftmpirun"
trials=5 np=4 only="detect,agree,recover" killat=steady
declare -a names=() fopts=() jopts=()
while [ $# -gt 0 ]; do
    case $1 in
        --trials) trials=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --kill-at) killat=$2; shift 2 ;;
        --a|--b) [ $# -ge 4 ] || { echo "run-ab.sh: $1 needs NAME, ftmpirun options and JVM options" >&2; exit 2; }
                 names+=("$2"); fopts+=("$3"); jopts+=("$4"); shift 4 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "run-ab.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
[ ${#names[@]} -eq 2 ] || { echo "run-ab.sh: give exactly --a and --b" >&2; exit 2; }
[[ $trials =~ ^[1-9][0-9]*$ ]] || { echo "run-ab.sh: --trials expects a positive integer, got '$trials'" >&2; exit 2; }
. "$here/lib.sh"
recover_kill "$killat" || exit 2
mkdir -p "$root/bench/results"
raw="$root/bench/results/ab-$(date -u +%Y%m%d-%H%M%S).txt"
: > "$raw"
echo "# $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); A=${names[0]} B=${names[1]}" | tee -a "$raw"

one() { # one VARIANT-INDEX TAG FTMPIRUN-ARGS... -- BENCH-ARGS...: appends "NAME TAG line"
    local v=$1 tag=$2; shift 2
    local -a fa=() ba=() f j
    while [ "$1" != "--" ]; do fa+=("$1"); shift; done; shift
    ba=("$@")
    read -r -a f <<< "${fopts[$v]}"
    read -r -a j <<< "${jopts[$v]}"
    local out
    out=$("$run" --timeout 300 "${fa[@]}" ${f[@]+"${f[@]}"} java ${j[@]+"${j[@]}"} org.ftmpi.bench.Main "${ba[@]}" 2>&1 || true)
    if [ "$tag" = recover ]; then
        local ms
        ms=$(sed -nE 's/.*recovery to generation 1: .*notice to rebuilt ([0-9.]+) ms.*/\1/p' <<< "$out" | sort -g | tail -1)
        [ -n "$ms" ] && echo "${names[$v]} $tag ${fa[*]} slowest_ms $ms" >> "$raw"
    else
        grep '^RESULT' <<< "$out" | sed "s/^/${names[$v]} $tag /" >> "$raw" || true
    fi
}

for t in $(seq 1 "$trials"); do
    if (( t % 2 )); then order="0 1"; else order="1 0"; fi
    for v in $order; do
        if [[ ,$only, == *,detect,* ]]; then
            one "$v" detect -np "$np" --recovery-mode ignore -- ft-detect kill
        fi
        if [[ ,$only, == *,agree,* ]]; then
            one "$v" agree -np "$np" --recovery-mode ignore -- ft-agree
        fi
        if [[ ,$only, == *,recover,* ]]; then
            for k in shrink blank rebuild; do
                extra=(); [ $k = rebuild ] && extra=(-sp 1)
                one "$v" recover -np "$np" --comm-mode "$k" "${extra[@]}" --recovery-mode auto --opt ft-trace=true \
                    "${recover_inject[@]}" -- "${recover_args[@]}"
            done
        fi
    done
done
echo "# end $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$raw"

printf '| figure (np %s, %s trials, medians) | %s | %s |\n|---|---:|---:|\n' "$np" "$trials" "${names[0]}" "${names[1]}"
row() { # row LABEL SELECTOR-REGEX FIELD
    printf '| %s |' "$1"
    for v in 0 1; do
        printf ' %s |' "$(grep "^${names[$v]} " "$raw" | grep -E "$2" | field "$3" | median)"
    done
    echo
}
row "every survivor told, first failure (ms)" " detect .*round cold" every_ms
row "every survivor told, second failure (ms)" " detect .*round warm" every_ms
row "first survivor told, first failure (ms)" " detect .*round cold" first_ms
row "first agree after a SIGKILL (us)" " agree " first_agree_us
row "shrink after it (us)" " agree " shrink_after_us
row "SHRINK notice to rebuilt, slowest survivor (ms)" " recover .*comm-mode shrink" slowest_ms
row "BLANK notice to rebuilt (ms)" " recover .*comm-mode blank" slowest_ms
row "REBUILD warm spare notice to rebuilt (ms)" " recover .*comm-mode rebuild" slowest_ms
echo "# raw results: $raw"
