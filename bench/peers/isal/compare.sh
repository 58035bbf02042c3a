#!/usr/bin/env bash
# Reed-Solomon throughput: ISA-L (C, libisal-dev) vs FT-MPI/J (org.ftmpi.ckpt.rs) vs a plain Java
# table-lookup loop, same shapes, 1 MiB shards, single thread, data GB/s = k x shard bytes / time.
# Runs ISA-L and Java alternately for ROUNDS rounds and reports the median of all samples.
#
# usage: bench/peers/isal/compare.sh            (env: ROUNDS=2 REPS=5 MS=200 LEN=1048576 SHAPES=4x2,8x2,16x4 SKIP_BUILD=0)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
ROUNDS=${ROUNDS:-2}; REPS=${REPS:-5}; MS=${MS:-200}; LEN=${LEN:-1048576}; SHAPES=${SHAPES:-4x2,8x2,16x4}
JAVA_HOME_25=${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA="$JAVA_HOME_25/bin/java"

# --- prerequisites (fresh machine) ---
if ! dpkg -s libisal-dev >/dev/null 2>&1; then
  echo "# installing libisal-dev" >&2
  apt-get update -qq && apt-get install -y -qq libisal-dev >&2
fi
command -v gcc >/dev/null || { apt-get update -qq && apt-get install -y -qq gcc >&2; }
[ -x "$JAVA" ] || { echo "JDK 25 not found at $JAVA_HOME_25 (set JAVA_HOME_25)" >&2; exit 1; }

# --- build ---
build="$root/bench/target/isal"
mkdir -p "$build"
gcc -O2 -Wall -o "$build/isal_bench" "$here/isal_bench.c" -lisal
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f "$root/bench/target/benchmarks.jar" ]; then
  (cd "$root" && mvn -q -B -pl ft-core,bench package -DskipTests) >&2
fi

out="$build/compare-$(date -u +%Y%m%dT%H%M%SZ).log"
: > "$out"
for r in $(seq 1 "$ROUNDS"); do
  echo "# round $r/$ROUNDS: ISA-L" >&2
  "$build/isal_bench" "$LEN" "$REPS" "$MS" "$SHAPES" >> "$out"
  echo "# round $r/$ROUNDS: Java" >&2
  "$JAVA" --add-modules=jdk.incubator.vector -Xms1g -cp "$root/bench/target/benchmarks.jar" \
      org.ftmpi.bench.rs.RsHarness "$LEN" "$REPS" "$MS" "$SHAPES" true 2>/dev/null >> "$out"
done

isal_ver=$(dpkg -s libisal-dev 2>/dev/null | awk '/^Version:/{print $2}')
kernel=$(grep -m1 -o 'kernel=[^ ]*' "$out" | cut -d= -f2)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), JDK $("$JAVA" -version 2>&1 | awk -F'"' '/version/{print $2}'), ISA-L $isal_ver, Java kernel $kernel"
echo "# shard $LEN B, medians of $((ROUNDS * REPS)) interleaved samples, data GB/s = k x shard / time; log: $out"

# parity must be byte-identical to ISA-L's (same Cauchy matrix, same field)
awk '/^PARITYHASH/{ key=$2"x"$3; if (!(key in h)) h[key]=$4; else if (h[key]!=$4) bad=bad" "key }
     END { if (bad!="") { print "# PARITY MISMATCH vs ISA-L:" bad; exit 1 } else print "# parity byte-identical to ISA-L for all shapes" }' "$out"

awk '
function median(key,   n, i, j, t, a) {
  n = split(samples[key], a, " ")
  for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
}
/^SAMPLE/ { key = $2 " " $3 " " $4 "x" $5; samples[key] = samples[key] " " $6; if (!($4 "x" $5 in seen)) { seen[$4 "x" $5] = 1; order[++ns] = $4 "x" $5 } }
END {
  printf "| shape (k+m) | op | ISA-L GB/s | ours GB/s | ours/ISA-L | ours scalar GB/s | plain loop GB/s | ours/plain |\n"
  printf "|---|---|---|---|---|---|---|---|\n"
  for (s = 1; s <= ns; s++) {
    sh = order[s]; split(sh, km, "x")
    pl = median("plain encode " sh)
    for (o = 1; o <= 2; o++) {
      op = o == 1 ? "encode" : "decode"
      is = median("isal " op " " sh); us = median("ours " op " " sh); sc = median("scalar " op " " sh)
      printf "| %s+%s | %s%s | %.2f | %.2f | %.2fx | %.2f | %s | %s |\n", km[1], km[2], op, (o == 2 ? " (" km[2] " lost)" : ""), is, us, (is > 0 ? us / is : 0), sc,
        (o == 1 ? sprintf("%.2f", pl) : "-"), (o == 1 && pl > 0 ? sprintf("%.1fx", us / pl) : "-")
    }
  }
}' "$out"
