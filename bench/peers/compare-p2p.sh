#!/usr/bin/env bash
# Side-by-side point-to-point comparison: FT-MPI/J vs Open MPI vs MPICH on this machine.
#
#   bench/peers/compare-p2p.sh [--transport tcp|default] [--runs N] [--benchmarks LIST]
#                              [--peers-only] [--no-install] [-- BENCHMARK-OPTIONS...]
#
# For each benchmark (latency, bw, bibw) runs N interleaved rounds (ours, Open MPI, MPICH, ours, ...),
# takes the per-size median over the rounds and the median of the per-round FT-MPI/J / Open MPI ratios (paired), prints one table; writes the merged table, the
# physical limits and every raw output to bench/results/<UTC date-time>-<benchmark>.txt.
# Everything after `--` is passed to all three implementations (e.g. `-- -m 1:4096 -i 1000`).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
RESULTS_DIR="$ROOT/bench/results"
BUILD_DIR="$SCRIPT_DIR/build"
RUN_TIMEOUT=${FTMPI_BENCH_TIMEOUT:-600}

usage() {
    cat <<EOF
Usage: bench/peers/compare-p2p.sh [options] [-- BENCHMARK-OPTIONS...]

Runs the OSU-style benchmarks with FT-MPI/J (bin/ftmpirun -np N bench ...), Open MPI
(mpirun.openmpi) and MPICH (mpirun.mpich), interleaved, and prints per-size medians:
point-to-point (latency, bw, bibw; 2 ranks) or collectives (allreduce, barrier; --np ranks, with
Open MPI's --oversubscribe when there are more ranks than cores, which also turns on its
yield-when-idle).

Options:
  --transport tcp|default  tcp: all three over TCP loopback
                             FT-MPI/J: --transports tcp (or \$FTMPI_TRANSPORT_ARGS if set)
                             Open MPI: --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo
                             MPICH:    MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=lo FI_PROVIDER=tcp
                           default: each implementation's default intra-node path
                             FT-MPI/J: no options (or \$FTMPI_TRANSPORT_ARGS if set)
                             Open MPI: --mca pml ob1 --mca btl vader,self (shared memory)
                             MPICH:    no settings (Debian's ch4:ucx: UCX sysv/cma shared memory)
                           (default: default)
  --runs N                 interleaved rounds per benchmark, median taken (default: 3)
  --benchmarks LIST        comma-separated subset of latency,bw,bibw,allreduce,barrier
                           (default: latency,bw,bibw)
  --np N                   ranks (default 2; the point-to-point benchmarks need exactly 2)
  --peers-only             skip FT-MPI/J (e.g. before the Java build exists)
  --no-install             do not run install-peers.sh
  -h, --help               this help
  -- ARGS...               passed to every benchmark (e.g. -- -m 1:65536 -i 1000 -x 100)
                           (-- --median: latency, allreduce, barrier report median calls,
                           bw and bibw the median window's bandwidth;
                           see docs/benchmarks.md, "Median latency")

Environment:
  FTMPI_TRANSPORT_ARGS     if set, the bin/ftmpirun options (word-split, inserted before
                           'bench') used instead of the --transport default above
  FTMPI_BENCH_TIMEOUT      per-run timeout in seconds (default: 600)
EOF
}

TRANSPORT=default
RUNS=3
BENCHMARKS=latency,bw,bibw
PEERS_ONLY=0
INSTALL=1
BENCH_ARGS=()
NP=2
while (($#)); do
    case "$1" in
        --transport) TRANSPORT=${2:?--transport needs a value}; shift 2 ;;
        --transport=*) TRANSPORT=${1#*=}; shift ;;
        --runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
        --runs=*) RUNS=${1#*=}; shift ;;
        --benchmarks) BENCHMARKS=${2:?--benchmarks needs a value}; shift 2 ;;
        --benchmarks=*) BENCHMARKS=${1#*=}; shift ;;
        --np) NP=${2:?--np needs a value}; shift 2 ;;
        --np=*) NP=${1#*=}; shift ;;
        --peers-only) PEERS_ONLY=1; shift ;;
        --no-install) INSTALL=0; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; BENCH_ARGS=("$@"); break ;;
        *) echo "compare-p2p.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
case "$TRANSPORT" in tcp|default) ;; *) echo "compare-p2p.sh: --transport must be tcp or default" >&2; exit 2 ;; esac
if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ ]]; then
    echo "compare-p2p.sh: --runs must be a positive integer" >&2; exit 2
fi
if ! [[ "$NP" =~ ^[1-9][0-9]*$ ]]; then
    echo "compare-p2p.sh: --np must be a positive integer" >&2; exit 2
fi
IFS=, read -r -a BENCH_LIST <<<"$BENCHMARKS"
for b in "${BENCH_LIST[@]}"; do
    case "$b" in
        latency|bw|bibw)
            if ((NP != 2)); then echo "compare-p2p.sh: $b runs on exactly 2 ranks (--np $NP given)" >&2; exit 2; fi ;;
        allreduce|barrier) ;;
        *) echo "compare-p2p.sh: unknown benchmark '$b' (latency, bw, bibw, allreduce, barrier)" >&2; exit 2 ;;
    esac
done

log() { echo "compare-p2p.sh: $*" >&2; }

# --- peers: install and build -------------------------------------------------------------------
if ((INSTALL)); then
    "$SCRIPT_DIR/install-peers.sh"
fi
make -s -C "$SCRIPT_DIR" all

# --- FT-MPI/J: check the Java build --------------------------------------------------------------
OURS=1
if ((PEERS_ONLY)); then
    OURS=0
elif [[ ! -x "$ROOT/bin/ftmpirun" ]] ||
     [[ ! -f "$ROOT/bench/target/classes/org/ftmpi/bench/Main.class" && -z "$(ls "$ROOT"/bench/target/*.jar 2>/dev/null)" ]]; then
    log "FT-MPI/J build not found (need $ROOT/bin/ftmpirun and the compiled bench module)."
    log "Build it first:  (cd $ROOT && mvn -B package -DskipTests)"
    log "or run with --peers-only to measure Open MPI and MPICH alone."
    exit 1
fi

# --- launch commands -----------------------------------------------------------------------------
NCPU=$(nproc 2>/dev/null || echo 1)
OMPI_CMD=(mpirun.openmpi -np "$NP")
[[ $(id -u) -eq 0 ]] && OMPI_CMD+=(--allow-run-as-root)
((NCPU < NP)) && OMPI_CMD+=(--oversubscribe)
MPICH_ENV=()
OURS_ARGS=()
if [[ -n "${FTMPI_TRANSPORT_ARGS+set}" ]]; then
    read -r -a OURS_ARGS <<<"$FTMPI_TRANSPORT_ARGS"
elif [[ $TRANSPORT == tcp ]]; then
    OURS_ARGS=(--transports tcp)   # ftmpirun: only the TCP transport (plus self)
fi
if [[ $TRANSPORT == tcp ]]; then
    OMPI_CMD+=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
    # Debian's MPICH 4.0 is ch4:ucx: intra-node traffic goes through UCX shared memory (sysv/cma)
    # and MPIR_CVAR_NOLOCAL alone changes nothing; UCX_TLS/UCX_NET_DEVICES force UCX's TCP
    # transport on loopback. NOLOCAL covers ch3:nemesis and ch4 builds with the POSIX shm module,
    # FI_PROVIDER ch4:ofi builds.
    MPICH_ENV=(MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=lo FI_PROVIDER=tcp)
    if ((OURS)) && [[ -n "${FTMPI_TRANSPORT_ARGS+set}" ]]; then
        log "note: --transport tcp with FTMPI_TRANSPORT_ARGS='$FTMPI_TRANSPORT_ARGS' (instead of --transports tcp)"
    fi
else
    OMPI_CMD+=(--mca pml ob1 --mca btl vader,self)
fi
OURS_CMD=("$ROOT/bin/ftmpirun" -np "$NP" "${OURS_ARGS[@]}" bench)

peer_exe() { # impl benchmark
    echo "$BUILD_DIR/$1/osu_$2"
}

# run_one IMPL BENCH OUTFILE: runs one benchmark, output (stdout+stderr) to OUTFILE; returns status
run_one() {
    local impl=$1 bench=$2 out=$3 cmd
    case "$impl" in
        ours) cmd=("${OURS_CMD[@]}" "$bench" "${BENCH_ARGS[@]}") ;;
        openmpi) cmd=("${OMPI_CMD[@]}" "$(peer_exe openmpi "$bench")" "${BENCH_ARGS[@]}") ;;
        mpich) cmd=(env "${MPICH_ENV[@]}" mpirun.mpich -np "$NP" "$(peer_exe mpich "$bench")" "${BENCH_ARGS[@]}") ;;
    esac
    echo "\$ ${cmd[*]}" >"$out"
    echo "# load average before the run: $(loadavg)" >>"$out"
    # timeout runs the launcher in its own process group and, after RUN_TIMEOUT seconds, sends
    # SIGTERM to the whole group (launcher and ranks), SIGKILL 30 s later. Ctrl-C on this script is
    # forwarded by the INT/TERM trap below.
    (cd "$ROOT" && exec timeout -k 30 "$RUN_TIMEOUT" "${cmd[@]}") >>"$out" 2>&1 &
    RUN_PID=$!
    local rc=0
    wait "$RUN_PID" || rc=$?
    RUN_PID=
    return "$rc"
}
RUN_PID=
trap 'echo "compare-p2p.sh: interrupted" >&2; if [[ -n $RUN_PID ]]; then kill -TERM "$RUN_PID" 2>/dev/null || true; wait "$RUN_PID" 2>/dev/null || true; fi; exit 130' INT TERM

loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }

# rows FILE: the "size value" data rows of an OSU-format output
rows() { awk '!/^#/ && !/^\$/ && NF == 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { print $1, $2 }' "$1"; }

# --- machine, versions, physical limits ----------------------------------------------------------
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
mkdir -p "$RESULTS_DIR"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

{
    echo "# Date (UTC):   $(date -u '+%Y-%m-%d %H:%M:%S')"
    echo "# Host:         $(hostname) ($(uname -srm)), $NCPU CPUs: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "# Open MPI:     $(mpirun.openmpi --version 2>/dev/null | head -1)"
    echo "# MPICH:        $(mpichversion 2>/dev/null | awk '/^MPICH Version:/ { sub(/^[^:]*:[ \t]*/, ""); v = $0 } /^MPICH Device:/ { sub(/^[^:]*:[ \t]*/, ""); d = $0 } END { print v " (" d ")" }')"
    if ((OURS)); then
        echo "# FT-MPI/J:     $ROOT (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
    fi
    echo "# Load average: $(loadavg) (1/5/15 min, at start; 2 busy-polling ranks need 2 idle CPUs)"
    echo "# Transport:    $TRANSPORT"
    echo "#   FT-MPI/J:   ${OURS_CMD[*]} <benchmark>"
    echo "#   Open MPI:   ${OMPI_CMD[*]} <exe>"
    echo "#   MPICH:      ${MPICH_ENV[*]} mpirun.mpich -np 2 <exe>"
    echo "# Runs:         $RUNS interleaved rounds, per-size median"
    if ((${#BENCH_ARGS[@]})); then echo "# Bench args:   ${BENCH_ARGS[*]}"; fi
} >"$TMP/machine.txt"

log "measuring physical limits"
"$BUILD_DIR/physical-limits" -t 1 >"$TMP/limits.raw" 2>&1 || log "physical-limits failed (see results file)"
{
    echo "# Physical limits of this machine:"
    awk '$1 == "memcpy_1MiB_MBps" { printf "#   memcpy 1 MiB bandwidth:            %12.2f MB/s\n", $2 }
         $1 == "cacheline_oneway_us" { printf "#   cross-core cache-line latency:     %12.4f us one-way\n", $2 }
         $1 == "cacheline_pinned" { printf "#   (threads pinned to %s)\n", $2 }' "$TMP/limits.raw"
} >"$TMP/limits.txt"

# --- merge: per-size medians and ratios ----------------------------------------------------------
# merge BENCH: reads $TMP/<bench>.<impl>.<round>.rows, prints the table
merge() {
    local bench=$1 metric better
    if [[ $bench == latency ]]; then
        metric="one-way latency (us)"; better="LOWER is better; ratio < 1 means FT-MPI/J is faster"
    elif [[ $bench == allreduce || $bench == barrier ]]; then
        metric="average latency over $NP ranks (us)"; better="LOWER is better; ratio < 1 means FT-MPI/J is faster"
        [[ " ${BENCH_ARGS[*]-} " == *" --median "* ]] && metric="each rank's median call, averaged over $NP ranks (us)"
    else
        [[ $bench == bw ]] && metric="bandwidth (MB/s, 1 MB = 10^6 B)" || metric="bi-directional bandwidth (MB/s, 1 MB = 10^6 B)"
        [[ " ${BENCH_ARGS[*]-} " == *" --median "* ]] && metric="median window's $metric"
        better="HIGHER is better; ratio > 1 means FT-MPI/J is faster"
    fi
    echo "# FT-MPI/J vs peers: $bench, $metric; $better"
    echo "# transport: $TRANSPORT; median of $RUNS interleaved runs; '-' = no data"
    echo "# paired: the median over the rounds of that round's FT-MPI/J / Open MPI ratio (both ran in it, one after the other)"
    local r
    for impl in ours openmpi mpich; do
        for ((r = 1; r <= RUNS; r++)); do
            if [[ -e "$TMP/$bench.$impl.$r.rows" ]]; then sed "s/^/$impl $r /" "$TMP/$bench.$impl.$r.rows"; fi
        done
    done | awk '
        function median(impl, size,    n, i, j, t, a) {
            n = cnt[impl, size]
            if (n == 0) return -1
            for (i = 1; i <= n; i++) a[i] = val[impl, size, i]
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        function fmt(v) { return v < 0 ? sprintf("%14s", "-") : sprintf("%14.2f", v) }
        function ratio(a, b) { return (a < 0 || b <= 0) ? sprintf("%10s", "-") : sprintf("%10.2f", a / b) }
        function paired(size,    n, r, a, i, j, t) { # median of the per-round ours/openmpi ratios
            n = 0
            for (r = 1; r <= rounds; r++) {
                if (((("ours", size, r) in byRound) && (("openmpi", size, r) in byRound)) && byRound["openmpi", size, r] > 0) {
                    a[++n] = byRound["ours", size, r] / byRound["openmpi", size, r]
                }
            }
            if (n == 0) return sprintf("%10s", "-")
            for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return sprintf("%10.2f", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
        }
        {
            val[$1, $3, ++cnt[$1, $3]] = $4; byRound[$1, $3, $2] = $4; if ($2 + 0 > rounds) rounds = $2 + 0
            if (!($3 in seen)) { seen[$3] = 1; sizes[++ns] = $3 }
        }
        END {
            for (i = 2; i <= ns; i++) { t = sizes[i]; for (j = i - 1; j >= 1 && sizes[j] + 0 > t + 0; j--) sizes[j + 1] = sizes[j]; sizes[j + 1] = t }
            printf "%-10s%14s%14s%14s%10s%10s%10s\n", "# Size", "FT-MPI/J", "Open MPI", "MPICH", "FT/OMPI", "paired", "FT/MPICH"
            for (i = 1; i <= ns; i++) {
                s = sizes[i]; o = median("ours", s); p = median("openmpi", s); m = median("mpich", s)
                printf "%-10d%s%s%s%s%s%s\n", s, fmt(o), fmt(p), fmt(m), ratio(o, p), paired(s), ratio(o, m)
            }
        }'
}

# --- run ----------------------------------------------------------------------------------------
IMPLS=(openmpi mpich)
((OURS)) && IMPLS=(ours openmpi mpich)
declare -A NAME=([ours]="FT-MPI/J" [openmpi]="Open MPI" [mpich]="MPICH")
OUTPUTS=()
status=0
for bench in "${BENCH_LIST[@]}"; do
    for ((round = 1; round <= RUNS; round++)); do
        for impl in "${IMPLS[@]}"; do
            out="$TMP/$bench.$impl.$round.out"
            log "$bench: round $round/$RUNS: ${NAME[$impl]}"
            if run_one "$impl" "$bench" "$out"; then
                rows "$out" >"$TMP/$bench.$impl.$round.rows"
                if [[ ! -s "$TMP/$bench.$impl.$round.rows" ]]; then
                    log "${NAME[$impl]} $bench produced no data rows; output:"; sed 's/^/    /' "$out" >&2
                fi
            else
                rc=$?
                rows "$out" >"$TMP/$bench.$impl.$round.rows" || true
                if [[ $impl == ours ]]; then
                    why="exit $rc"
                    if ((rc == 124)); then why="timeout after ${RUN_TIMEOUT}s"; fi
                    log "FT-MPI/J $bench FAILED ($why); its column shows partial data or '-'."
                    log "  command and output:"; sed 's/^/    /' "$out" | tail -n 30 >&2
                elif ((rc == 124)) && [[ -s "$TMP/$bench.$impl.$round.rows" ]]; then
                    # e.g. Debian's MPICH 4.0.2 + UCX 1.13 over TCP, which sometimes hangs in MPI_Finalize
                    log "${NAME[$impl]} $bench timed out after ${RUN_TIMEOUT}s but printed $(wc -l <"$TMP/$bench.$impl.$round.rows") data rows"
                    log "  (hung at exit, e.g. in MPI_Finalize); those rows are used. Output is in the results file."
                else
                    log "${NAME[$impl]} $bench FAILED (exit $rc$( ((rc == 124)) && echo ", timeout after ${RUN_TIMEOUT}s"; true)); output:"; sed 's/^/    /' "$out" | tail -n 30 >&2
                fi
                status=1
            fi
        done
    done
    result="$RESULTS_DIR/$STAMP-$bench.txt"
    merge "$bench" >"$TMP/$bench.table"
    {
        cat "$TMP/machine.txt"
        echo "#"
        cat "$TMP/limits.txt"
        echo
        cat "$TMP/$bench.table"
        echo
        echo "# ---- raw outputs ----"
        for ((round = 1; round <= RUNS; round++)); do
            for impl in "${IMPLS[@]}"; do
                echo "## round $round, ${NAME[$impl]}"
                cat "$TMP/$bench.$impl.$round.out"
                echo
            done
        done
        echo "## physical-limits"
        cat "$TMP/limits.raw"
    } >"$result"
    echo
    cat "$TMP/$bench.table"
    OUTPUTS+=("$result")
done

echo
cat "$TMP/limits.txt"
echo
for f in "${OUTPUTS[@]}"; do echo "# written: ${f#"$ROOT"/}"; done
exit $status
