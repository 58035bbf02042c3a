#!/usr/bin/env bash
# Builds the Open MPI peer (pack_bench.c) and the Java engine harness, runs both ROUNDS times
# interleaved (C, Java, C, Java, ...) on the same layouts, and prints per layout the median MB/s
# of pack and unpack for each, the ratio ours/Open MPI, and ours vs memcpy of the same byte count
# (C memcpy), and ours vs the Java harness's own bulk copy of the same byte count in the same JVM
# ("Java copy": MemorySegment.copy from the user array into the same packed buffer; a control for
# effects of where the buffers landed in memory, which move that copy and pack together).
# Usage: bench/peers/ddt/compare.sh [rounds]   (default 2; ~1 min per round)
# JAVA_OPTS adds JVM options to the Java side, e.g. JAVA_OPTS=-XX:+UseTransparentHugePages (2 MiB
# pages for the heap: steadier longrun figures, see docs/datatypes.md "session 7"); JAR=path runs
# another build of the harness (e.g. main's, for an A/B; implies no rebuild).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
ROUNDS="${1:-2}"
OUT="${OUT:-$ROOT/bench/target/ddt-compare}"
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

export OMPI_MCA_btl=self OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
: > "$OUT/c.txt"; : > "$OUT/java.txt"
for r in $(seq 1 "$ROUNDS"); do
    echo "round $r/$ROUNDS: Open MPI" >&2
    "$OUT/pack_bench" >> "$OUT/c.txt"
    echo "round $r/$ROUNDS: Java" >&2
    # one JVM per layout, as JMH forks per parameter: each layout gets clean JIT type profiles
    for l in col64 col256 col1024 longrun indexed struct93x21 struct93x171; do
        # shellcheck disable=SC2086 # JAVA_OPTS is a list of options
        "$JAVA" ${JAVA_OPTS:-} --enable-native-access=ALL-UNNAMED -cp "$JAR" \
            org.ftmpi.bench.ddt.DdtPackHarness "$l" >> "$OUT/java.txt"
    done
done

echo "Open MPI $(dpkg -s libopenmpi-dev | awk '/^Version/{print $2}'), $("$JAVA" -version 2>&1 | head -1), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), median of $ROUNDS interleaved runs"
python3 - "$OUT/c.txt" "$OUT/java.txt" <<'PY'
import sys, statistics
def load(p):
    d = {}
    for line in open(p):
        f = line.split()
        if not f or f[0] != "layout":
            continue
        kv = dict(zip(f[2::2], f[3::2]))
        d.setdefault(f[1], []).append({k: float(v) for k, v in kv.items()})
    return d
c, j = load(sys.argv[1]), load(sys.argv[2])
med = lambda rows, k: statistics.median(r[k] for r in rows)
print("| layout | bytes | OMPI pack MB/s | ours pack MB/s | pack ours/OMPI | OMPI unpack MB/s | ours unpack MB/s | unpack ours/OMPI | memcpy MB/s | ours pack/memcpy | Java copy MB/s | ours pack/Java copy |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name in c:
    if name not in j:
        continue
    cp, cu, cm = med(c[name], "pack_MBps"), med(c[name], "unpack_MBps"), med(c[name], "memcpy_MBps")
    jp, ju, jm = med(j[name], "pack_MBps"), med(j[name], "unpack_MBps"), med(j[name], "memcpy_MBps")
    b = int(c[name][0]["bytes"])
    print(f"| {name} | {b} | {cp:.0f} | {jp:.0f} | {jp/cp:.2f} | {cu:.0f} | {ju:.0f} | {ju/cu:.2f} | {cm:.0f} | {jp/cm:.2f} | {jm:.0f} | {jp/jm:.2f} |")
PY
