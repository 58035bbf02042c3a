#!/usr/bin/env bash
# Time to solution of the fault-tolerant examples (issue 8; docs/fault-tolerance.md, "Examples"),
# from a fresh clone after `mvn -B package -DskipTests`:
#
#   bench/ft/run-examples-bench.sh [--rounds R] [--np N] [--gol "ROWS COLS GENS EVERY"] [--cg "N EVERY TOL"]
#
# For each example, R interleaved rounds of four jobs:
#   no-FT     --comm-mode abort, no checkpoints (checkpointEvery 0): the plain program
#   0 fail    the FT configuration (GameOfLife: rebuild, -sp 2; PoissonCG: shrink), checkpoints, no failure
#   1 fail    the same, rank 2 SIGKILLed at half of its MPI calls (--inject rank=2,at-call=C/2)
#   2 fails   the same, rank 2 at a third and rank 1 at two thirds of the calls
# C is the call count the first fault-free FT job prints. The table shows the median "time to
# solution" each job printed (rank 0, from its first step to the answer, wall clock; recoveries
# included) and its ratio to no-FT; a job whose answer differs from no-FT's is reported as WRONG.
# Raw lines go to bench/results/examples-<UTC time>.txt.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
run="$root/bin/ftmpirun"
rounds=3 np=4 gol="384 384 300 20" cg="128 25 1e-10"
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --gol) gol=$2; shift 2 ;;
        --cg) cg=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "run-examples-bench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
done
for v in "$rounds" "$np"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "run-examples-bench.sh: --rounds/--np expect a positive integer, got '$v'" >&2; exit 2; }
done
(( np >= 3 )) || { echo "run-examples-bench.sh: --np must be at least 3 (two ranks are killed)" >&2; exit 2; }
[ -f "$root/examples/target/classes/org/ftmpi/examples/GameOfLife.class" ] \
    || { echo "run-examples-bench.sh: build first: mvn -B package -DskipTests" >&2; exit 2; }
mkdir -p "$root/bench/results"
raw="$root/bench/results/examples-$(date -u +%Y%m%d-%H%M%S).txt"
: > "$raw"
echo "# $(date -u '+%F %T UTC'); np $np; $rounds rounds; $(uptime)" | tee -a "$raw"

. "$here/lib.sh"
job() { # job EXAMPLE CONFIG ARGS...: one ftmpirun; appends "EXAMPLE CONFIG <answer> | <report>" to $raw
    local ex=$1 cfg=$2; shift 2
    local out answer report
    out=$("$run" --timeout 900 "$@" 2>/dev/null || true)
    answer=$(grep -E '^(GameOfLife|PoissonCG) ' <<< "$out" | sed -E 's/ on [0-9]+ ranks| [0-9]+ ranks//; s/ [0-9]+ iterations,//; s/relative residual [^,]*, //; s/max error [^,]*, //' || true)
    report=$(grep '^failures recovered' <<< "$out" || true)
    if [ -z "$report" ]; then echo "run-examples-bench.sh: no result from: ftmpirun $*" >&2; return 0; fi
    echo "$ex $cfg $answer | $report" >> "$raw"
}
calls_of() { grep "^$1 ft0 " "$raw" | head -1 | sed -E 's/.*mpi-calls ([0-9]+).*/\1/'; }

declare -A opts=(
    [GameOfLife]="-np $np -sp 2 --comm-mode rebuild --msg-mode reset --recovery-mode auto"
    [PoissonCG]="-np $np --comm-mode shrink --msg-mode reset --recovery-mode auto"
)
declare -A args=([GameOfLife]="$gol" [PoissonCG]="$cg")
for ex in GameOfLife PoissonCG; do
    main=org.ftmpi.examples.$ex
    read -r -a a <<< "${args[$ex]}"
    plain=("${a[@]}")
    [ "$ex" = GameOfLife ] && plain[3]=0 || plain[1]=0
    read -r -a o <<< "${opts[$ex]}"
    for r in $(seq 1 "$rounds"); do
        job "$ex" noft -np "$np" "$main" "${plain[@]}"
        job "$ex" ft0 "${o[@]}" "$main" "${a[@]}"
        c=$(calls_of "$ex")
        [[ $c =~ ^[0-9]+$ ]] || { echo "run-examples-bench.sh: $ex printed no call count" >&2; exit 1; }
        job "$ex" ft1 "${o[@]}" --inject "rank=2,at-call=$(( c / 2 ))" "$main" "${a[@]}"
        job "$ex" ft2 "${o[@]}" --inject "rank=2,at-call=$(( c / 3 ))" --inject "rank=1,at-call=$(( 2 * c / 3 ))" "$main" "${a[@]}"
    done
done

printf '\n%-11s %-8s %12s %10s %9s  %s\n' example config "median ms" "vs no-FT" failures answer
for ex in GameOfLife PoissonCG; do
    ref=$(grep "^$ex noft " "$raw" | head -1 | sed -E 's/^[^ ]+ [^ ]+ (.*) \| .*/\1/')
    base=$(grep "^$ex noft " "$raw" | sed -E 's/.*time to solution ([0-9.]+) ms.*/\1/' | median)
    for cfg in noft ft0 ft1 ft2; do
        sel=$(grep "^$ex $cfg " "$raw" || true)
        [ -n "$sel" ] || continue
        t=$(sed -E 's/.*time to solution ([0-9.]+) ms.*/\1/' <<< "$sel" | median)
        f=$(sed -E 's/.*failures recovered ([0-9]+).*/\1/' <<< "$sel" | sort -n | uniq | paste -sd/ -)
        ok=same
        while IFS= read -r line; do
            ans=$(sed -E 's/^[^ ]+ [^ ]+ (.*) \| .*/\1/' <<< "$line")
            if [ "$ex" = PoissonCG ]; then # sum(x) within 1e-7 relative; the iteration count may differ by one
                awk -v a="$(sed -E 's/.*sum\(x\) ([^ ]+).*/\1/' <<< "$ans")" -v b="$(sed -E 's/.*sum\(x\) ([^ ]+).*/\1/' <<< "$ref")" \
                    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-7 * (b < 0 ? -b : b)) }' || ok=WRONG
            elif [ "$ans" != "$ref" ]; then ok=WRONG; fi
        done <<< "$sel"
        awk -v ex="$ex" -v cfg="$cfg" -v t="$t" -v b="$base" -v f="$f" -v ok="$ok" \
            'BEGIN { printf "%-11s %-8s %12s %10.2f %9s  %s\n", ex, cfg, t, t / b, f, ok }'
    done
done
echo "# answers: $(grep ' noft ' "$raw" | sed -E 's/ \| .*//' | sort -u | paste -sd';' -)"
echo "# raw results: $raw"
