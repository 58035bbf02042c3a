# Shell functions shared by the bench/ft/*.sh scripts (sourced, not run).

# median < numbers, one per line: the median ("n/a" for none)
median() {
    sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# field KEY < RESULT lines: the value after KEY on each line
field() {
    awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

# recover_kill steady|jit: sets the arrays recover_inject (ftmpirun's --inject) and recover_args
# (the bench program's arguments: ft-recover and its own) of a recovery-time job. steady (the default of the
# scripts since session 21): rank 1 is SIGKILLed 300 calls after every rank's JIT compiler went
# quiet (after 20 000 one-int allReduces), as a long run fails; jit: at its call 300, while the
# JIT compiles the loop it has just found hot (the scripts' figure before session 21).
recover_kill() {
    case $1 in
        steady) recover_inject=(--inject rank=1,at-call=20300); recover_args=(ft-recover 21000 20000) ;;
        jit) recover_inject=(--inject rank=1,at-call=300); recover_args=(ft-recover) ;;
        *) echo "--kill-at expects steady or jit, got '$1'" >&2; return 2 ;;
    esac
}
