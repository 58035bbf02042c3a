# FT-MPI/J: shared set-up for bin/ftmpirun and bin/mpijavac. Sourced, not executed.
# Sets FTMPI_ROOT, FTMPI_JDK (a JDK >= 25) and FTMPI_LIB_CP (the library class path).

ftmpi_die() {
    printf '%s\n' "$*" >&2
    exit 1
}

# Resolves a path through symbolic links without GNU readlink -f (works on macOS too).
ftmpi_resolve() {
    local p=$1 dir target
    while [ -L "$p" ]; do
        dir=$(cd -P "$(dirname "$p")" && pwd)
        target=$(readlink "$p")
        case $target in
            /*) p=$target ;;
            *) p=$dir/$target ;;
        esac
    done
    dir=$(cd -P "$(dirname "$p")" && pwd)
    printf '%s/%s\n' "$dir" "$(basename "$p")"
}

# Prints the major Java version of a JDK home (from its release file), or nothing.
ftmpi_jdk_major() {
    local home=$1 v
    [ -f "$home/release" ] && [ -x "$home/bin/java" ] || return 1
    v=$(sed -n 's/^JAVA_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$home/release" | head -n 1)
    [ -n "$v" ] || return 1
    case $v in
        1.*) v=${v#1.} ;;
    esac
    v=${v%%[!0-9]*}
    [ -n "$v" ] || return 1
    printf '%s\n' "$v"
}

FTMPI_LOOKED_AT=""

ftmpi_try_jdk() {
    local home=${1%/} major
    [ -n "$home" ] || return 1
    major=$(ftmpi_jdk_major "$home") || {
        FTMPI_LOOKED_AT="$FTMPI_LOOKED_AT
  $home (no JDK release file or bin/java)"
        return 1
    }
    if [ "$major" -ge 25 ] 2>/dev/null; then
        FTMPI_JDK=$home
        return 0
    fi
    FTMPI_LOOKED_AT="$FTMPI_LOOKED_AT
  $home (Java $major, too old)"
    return 1
}

# Finds a JDK >= 25 the way Maven's toolchains discovery does.
ftmpi_find_jdk() {
    local c
    if [ -n "${FTMPI_JAVA_HOME:-}" ]; then
        ftmpi_try_jdk "$FTMPI_JAVA_HOME" && return 0
        ftmpi_die "ftmpi: FTMPI_JAVA_HOME=$FTMPI_JAVA_HOME is not a JDK >= 25"
    fi
    if [ -n "${JAVA_HOME:-}" ]; then
        ftmpi_try_jdk "$JAVA_HOME" && return 0
    fi
    if [ -f "$HOME/.m2/toolchains.xml" ]; then
        while IFS= read -r c; do
            ftmpi_try_jdk "$c" && return 0
        done <<EOT
$(sed -n 's:.*<jdkHome>[[:space:]]*\([^<]*[^<[:space:]]\)[[:space:]]*</jdkHome>.*:\1:p' "$HOME/.m2/toolchains.xml")
EOT
    fi
    for c in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/* \
             /Library/Java/JavaVirtualMachines/*/Contents/Home; do
        [ -d "$c" ] || continue
        ftmpi_try_jdk "$c" && return 0
    done
    ftmpi_die "FT-MPI/J needs a JDK 25 or newer and found none.
Looked at, in order: \$FTMPI_JAVA_HOME (${FTMPI_JAVA_HOME:-unset}), \$JAVA_HOME (${JAVA_HOME:-unset}),
jdkHome entries of $HOME/.m2/toolchains.xml, /usr/lib/jvm/*, /opt/java/*, /opt/jdk*,
$HOME/.sdkman/candidates/java/*, /Library/Java/JavaVirtualMachines/*/Contents/Home.
Candidates seen:${FTMPI_LOOKED_AT:- none}
Install a JDK >= 25 or set FTMPI_JAVA_HOME to one."
}

# Library class path: module jars (or target/classes when FTMPI_DEV_CLASSES=1 or no jar), then
# target/lib/*.jar and */target/lib/*.jar.
ftmpi_build_cp() {
    local m jar found cp="" have_core=""
    for m in ddt-engine ft-core shm-transport rdma-transport collectives-tuner bench examples; do
        found=""
        if [ "${FTMPI_DEV_CLASSES:-0}" != 1 ]; then
            for jar in "$FTMPI_ROOT/$m/target/$m"-*.jar; do
                [ -f "$jar" ] || continue
                case $jar in
                    *-sources.jar|*-tests.jar|*-javadoc.jar|*/benchmarks.jar) continue ;;
                esac
                found=$jar
                break
            done
        fi
        if [ -z "$found" ] && [ -d "$FTMPI_ROOT/$m/target/classes/org" ]; then
            found=$FTMPI_ROOT/$m/target/classes
        fi
        if [ -n "$found" ]; then
            cp=${cp:+$cp:}$found
            [ "$m" = ft-core ] && have_core=1
        fi
    done
    [ -n "$have_core" ] || ftmpi_die "FT-MPI/J is not built yet: run \`mvn -B package -DskipTests\` in $FTMPI_ROOT"
    # Third-party runtime jars: target/lib/ of the root, then each module's target/lib/ (for
    # example shm-transport's Chronicle Bytes, copied there by `mvn package`).
    for jar in "$FTMPI_ROOT"/target/lib/*.jar "$FTMPI_ROOT"/*/target/lib/*.jar; do
        [ -f "$jar" ] && cp=$cp:$jar
    done
    FTMPI_LIB_CP=$cp
}

FTMPI_ROOT=$(cd -P "$(dirname "$(ftmpi_resolve "$FTMPI_SCRIPT")")/.." && pwd)
ftmpi_find_jdk
ftmpi_build_cp
