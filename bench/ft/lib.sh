# Shell functions shared by the bench/ft/*.sh scripts (sourced, not run).

# median < numbers, one per line: the median ("n/a" for none)
median() {
    sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# field KEY < RESULT lines: the value after KEY on each line
field() {
    awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}
