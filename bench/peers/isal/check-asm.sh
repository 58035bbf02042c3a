#!/usr/bin/env bash
# Shows which shuffle instructions C2 emits for the Reed-Solomon vector kernel (VectorKernel::dot2,
# the 2-parity loop). No hsdis is needed: without it, -XX:+PrintAssembly-style output
# (CompileCommand=print) prints the machine code as hex, which hex2asm.py feeds to objdump.
#
# usage: bench/peers/isal/check-asm.sh [extra JVM flags...]
#   e.g. check-asm.sh                                   # this CPU's preferred species
#        check-asm.sh -XX:UseAVX=2                      # as on an AVX2-only CPU
#        check-asm.sh -XX:UseAVX=2 -Dftmpi.rs.vectorBits=128
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
JAVA="${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
command -v objdump >/dev/null || { apt-get update -qq && apt-get install -y -qq binutils >&2; }
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3 >&2; }
[ -f "$root/bench/target/benchmarks.jar" ] || (cd "$root" && mvn -q -B -pl ft-core,bench package -DskipTests) >&2
log="$(mktemp)"
"$JAVA" --add-modules=jdk.incubator.vector -XX:+UnlockDiagnosticVMOptions \
  -XX:CompileCommand=quiet -XX:CompileCommand=print,org.ftmpi.ckpt.rs.VectorKernel::dot2 "$@" \
  -cp "$root/bench/target/benchmarks.jar" org.ftmpi.bench.rs.RsAsmProbe 4 2 16384 "${PROBE_SECONDS:-15}" >"$log" 2>&1 || { cat "$log"; exit 1; }
grep '^# probe' "$log"
python3 "$here/hex2asm.py" "$log" > "$log.s"
echo "# instruction mix of the last C2 compilation of VectorKernel::dot2 ($(grep -c '^ ' "$log.s") instructions):"
grep -o -E '\s(v?pshufb|vpermb|vpermi2b|vpermt2b|vpermq|vperm2i128|vpblendvb|vpsrl[dwq]|vpandd?|vpand[q]?|vpxor[dq]?|vpternlog[dq]|vpcmpgtb|vpaddb|vpsubb)\s' "$log.s" | sort | uniq -c | sort -rn
rm -f "$log" "$log.s"
