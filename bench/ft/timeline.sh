#!/usr/bin/env bash
# Merges the recovery trace lines of one job (job option ft-trace=true or ft-trace=messages,
# docs/fault-tolerance.md "Where a recovery's time goes") into one timeline: every event of every
# process in time order, in ms after the injected signal (--inject ... at-call=N prints its time
# with ft-trace), else after the first event. System.nanoTime is CLOCK_MONOTONIC, one clock for
# all processes of a host, so the lines of one host's processes compare directly.
#
#   bin/ftmpirun -np 4 --comm-mode shrink --recovery-mode auto --opt ft-trace=messages \
#       --inject rank=1,at-call=300 bench ft-recover 2>&1 | bench/ft/timeline.sh
#   bench/ft/timeline.sh job-output.txt
# Then prints, per survivor, its notice and its "COMM_WORLD rebuilt" (first recovery), and the
# skew between the first and the last survivor's notice.
set -euo pipefail
grep -hE '(ftmpi: trace|ft-recover): rank' "${@:--}" | sed -E 's/^.*(ftmpi: trace|ft-recover): rank ([0-9-]+): t=([0-9]+) (.*)$/\3 \2 \4/' \
    | sort -n -k1,1 | awk '
    { t[NR] = $1; r[NR] = $2; $1 = ""; $2 = ""; e[NR] = substr($0, 3)
      if (origin == "" && e[NR] ~ /^SIG[A-Z]+ requested/) origin = t[NR] }
    END {
        if (NR == 0) { print "timeline.sh: no trace lines (run the job with --opt ft-trace=true)" > "/dev/stderr"; exit 1 }
        if (origin == "") origin = t[1]
        for (i = 1; i <= NR; i++) {
            printf "%9.3f ms  rank %-3s %s\n", (t[i] - origin) / 1e6, r[i], e[i]
            k = r[i]
            if (e[i] ~ /^notice of rank/ && !(k in notice)) notice[k] = t[i]
            if (e[i] ~ /^recovery entered, generation 1$/ && !(k in entered)) entered[k] = t[i]
            if (e[i] ~ /^agreement started, context -4,/ && !(k in agreed0)) agreed0[k] = t[i]
            if (e[i] ~ /^decided/ && (k in agreed0) && !(k in decided)) decided[k] = t[i]
            if (e[i] ~ /^every replacement announced/ && !(k in announced)) announced[k] = t[i]
            if (e[i] ~ /^COMM_WORLD rebuilt, generation 1$/ && !(k in built)) built[k] = t[i]
            if (e[i] ~ /^resumed after the recovery$/ && t[i] > resumed) resumed = t[i]
        }
        first = ""; last = ""
        for (k in notice) {
            if (first == "" || notice[k] < first) first = notice[k]
            if (last == "" || notice[k] > last) last = notice[k]
        }
        print ""
        print "rank  notice(ms after origin)  notice>entered  entered>decided  decided>replacements  >rebuilt  notice>rebuilt"
        for (k in notice) {
            if (!(k in built) || !(k in entered) || !(k in decided)) continue
            rep = (k in announced) ? announced[k] : decided[k]
            printf "%-5s %10.3f %15.3f %16.3f %21.3f %9.3f %15.3f\n", k, (notice[k] - origin) / 1e6,
                (entered[k] - notice[k]) / 1e6, (decided[k] - entered[k]) / 1e6, (rep - decided[k]) / 1e6,
                (built[k] - rep) / 1e6, (built[k] - notice[k]) / 1e6
        }
        if (first != "") printf "notice skew (last survivor told - first): %.3f ms\n", (last - first) / 1e6
        if (resumed != "") printf "every rank through its first allReduce after the recovery (bench ft-recover): %.3f ms after the origin\n", (resumed - origin) / 1e6
    }'
