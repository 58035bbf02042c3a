#!/usr/bin/env bash
# Open MPI's MPI_Pack/MPI_Unpack (pack_bench.c) against the Java engine (DdtPackHarness) on the
# layouts of layouts.h. Both harnesses measure the same way (same buffers: one mmap each, same
# alignment, same page size; same warm-up, rounds and CPU-time clock; see pack_bench.c's header).
# Per round and per layout it runs one Open MPI process and one JVM back to back (which goes first
# alternates by round), so each pair of runs sees the same machine state; one JVM per layout, as
# JMH forks per parameter (clean JIT profiles per layout).
#
# Prints per layout the median over the rounds of each side's MB/s, and the median, min and max
# over the rounds of the paired ratio ours/Open MPI (the two runs of one round); plus ours vs C
# memcpy of the packed byte count and vs the Java harness's own bulk copy of it ("Java copy",
# MemorySegment.copy from the user buffer into the same packed buffer, same JVM: a control for
# where the buffers landed in memory).
#
# Usage: bench/peers/ddt/compare.sh [rounds]        (default 7; ~1 min per round and page size)
# Environment:
#   PAGES="4k" (default) | "huge" | "4k huge"  page size of every buffer on both sides: 4k advises
#          MADV_NOHUGEPAGE and runs the JVM with -XX:-UseTransparentHugePages; huge advises
#          MADV_HUGEPAGE and runs it with -XX:+UseTransparentHugePages (the heap's user arrays).
#          The JVM always runs with a fixed, pre-touched 512 MiB heap.
#          Each run's huge_kB (AnonHugePages of the process) is checked against the choice.
#   LAYOUTS="col64 col256 ..."  a subset of the layouts.
#   JAVA_OPTS   more JVM options for the Java side.
#   JAR=path    run another build of the harness (e.g. main's, for an A/B; implies no rebuild);
#   REBUILD=0   use bench/target/benchmarks.jar as it is.
#   OUT=dir     where the raw per-run lines go (default bench/target/ddt-compare).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
ROUNDS="${1:-7}"
OUT="${OUT:-$ROOT/bench/target/ddt-compare}"
PAGES="${PAGES:-4k}"
LAYOUTS="${LAYOUTS:-col64 col256 col1024 longrun indexed struct93x21 struct93x171}"
mkdir -p "$OUT"

if ! dpkg -s openmpi-bin libopenmpi-dev >/dev/null 2>&1; then
    apt-get install -y openmpi-bin libopenmpi-dev
fi
JAVA="${JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
[ -x "$JAVA" ] || JAVA="$(command -v java)"

mpicc -O2 -o "$OUT/pack_bench" "$HERE/pack_bench.c"
JAR="${JAR:-}"
if [ -z "$JAR" ]; then
    JAR="$ROOT/bench/target/benchmarks.jar"
    if [ ! -f "$JAR" ] || [ "${REBUILD:-1}" = 1 ]; then
        (cd "$ROOT" && mvn -q -B -pl bench -am package -DskipTests)
    fi
fi

# A fixed, pre-touched heap: no page faults during the timing (a growing heap faults in the
# measuring thread, charged to its CPU time; see DdtPackHarness). The C side touches its buffers
# before timing too.
HEAP="-Xms512m -Xmx512m -XX:+AlwaysPreTouch"
export OMPI_MCA_btl=self OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
START="$(date -u '+%Y-%m-%d %H:%M')"
LOAD0="$(cut -d' ' -f1 /proc/loadavg)"
for pages in $PAGES; do
    case "$pages" in
        4k) hflag=""; thp="-XX:-UseTransparentHugePages" ;;
        huge) hflag="-H"; thp="-XX:+UseTransparentHugePages" ;;
        *) echo "PAGES must be 4k and/or huge, not '$pages'" >&2; exit 2 ;;
    esac
    : > "$OUT/c-$pages.txt"; : > "$OUT/java-$pages.txt"
    for r in $(seq 1 "$ROUNDS"); do
        for l in $LAYOUTS; do
            echo "$pages round $r/$ROUNDS: $l" >&2
            c() { "$OUT/pack_bench" $hflag "$l" | sed "s/^/round $r /" >> "$OUT/c-$pages.txt"; }
            # shellcheck disable=SC2086 # JAVA_OPTS is a list of options
            j() { "$JAVA" $thp $HEAP ${JAVA_OPTS:-} --enable-native-access=ALL-UNNAMED -cp "$JAR" \
                      org.ftmpi.bench.ddt.DdtPackHarness $hflag "$l" | sed "s/^/round $r /" >> "$OUT/java-$pages.txt"; }
            if [ $((r % 2)) = 1 ]; then c; j; else j; c; fi
        done
    done
done
LOAD1="$(cut -d' ' -f1 /proc/loadavg)"

echo "Open MPI $(dpkg -s libopenmpi-dev | awk '/^Version/{print $2}'), $("$JAVA" -version 2>&1 | head -1), $(nproc) CPUs, $START - $(date -u '+%H:%M UTC'), load average $LOAD0 at start, $LOAD1 at end; $ROUNDS rounds, ours and Open MPI interleaved per layout"
for pages in $PAGES; do
python3 - "$pages" "$OUT/c-$pages.txt" "$OUT/java-$pages.txt" <<'PY'
import sys, statistics
pages = sys.argv[1]
def load(p):
    d = {}
    for line in open(p):
        f = line.split()
        if len(f) < 4 or f[2] != "layout":
            continue
        kv = {k: float(v) for k, v in zip(f[4::2], f[5::2])}
        d.setdefault(f[3], {})[int(f[1])] = kv
    return d
c, j = load(sys.argv[2]), load(sys.argv[3])
med = statistics.median
print(f"\nPages: {pages} (every buffer of both sides). Ratio columns: median [min-max] of the per-round ours/Open MPI.")
print("| layout | bytes | OMPI pack MB/s | ours pack MB/s | pack ours/OMPI | OMPI unpack MB/s | ours unpack MB/s | unpack ours/OMPI | memcpy MB/s | ours pack/memcpy | Java copy MB/s | ours pack/Java copy |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
bad = []
for name in c:
    if name not in j:
        continue
    rounds = sorted(set(c[name]) & set(j[name]))
    cr, jr = [c[name][r] for r in rounds], [j[name][r] for r in rounds]
    for side, rows in (("Open MPI", cr), ("ours", jr)):
        for r, row in zip(rounds, rows):
            h = row.get("huge_kB", -1)
            if (pages == "huge") != (h > 0):
                bad.append(f"{name} round {r} {side}: AnonHugePages {h:.0f} kB with PAGES={pages}")
    def col(k, rows):
        return med([x[k] for x in rows])
    def ratio(k):
        rs = sorted(b[k] / a[k] for a, b in zip(cr, jr))
        return f"{med(rs):.2f} [{rs[0]:.2f}-{rs[-1]:.2f}]"
    cp, cu, cm = col("pack_MBps", cr), col("unpack_MBps", cr), col("memcpy_MBps", cr)
    jp, ju, jm = col("pack_MBps", jr), col("unpack_MBps", jr), col("memcpy_MBps", jr)
    b = int(cr[0]["bytes"])
    print(f"| {name} | {b} | {cp:.0f} | {jp:.0f} | {ratio('pack_MBps')} | {cu:.0f} | {ju:.0f} | {ratio('unpack_MBps')} | {cm:.0f} | {jp/cm:.2f} | {jm:.0f} | {jp/jm:.2f} |")
for b in bad:
    print("WARNING: page size not as chosen:", b)
PY
done
