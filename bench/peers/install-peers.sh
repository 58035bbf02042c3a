#!/usr/bin/env bash
# Installs what the C peer benchmarks need on Debian/Ubuntu: Open MPI and MPICH (runtime + compiler
# wrappers mpicc.openmpi / mpicc.mpich, launchers mpirun.openmpi / mpirun.mpich), a C compiler and
# make. Idempotent: checks dpkg first, runs `apt-get update` once and `apt-get install -y` only for
# missing packages. Needs root, or sudo.
set -euo pipefail

PACKAGES=(openmpi-bin libopenmpi-dev mpich libmpich-dev gcc make)

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-peers.sh: dpkg not found: this script supports Debian/Ubuntu only." >&2
    echo "Install Open MPI and MPICH (with mpicc.openmpi, mpicc.mpich, mpirun.openmpi, mpirun.mpich) by hand." >&2
    exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$p")
    fi
done

if ((${#missing[@]} == 0)); then
    echo "install-peers.sh: all peer packages installed (${PACKAGES[*]})."
else
    if [[ $(id -u) -eq 0 ]]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    elif command -v sudo >/dev/null 2>&1 && [[ -t 0 ]]; then
        SUDO=(sudo)
    else
        echo "install-peers.sh: missing packages: ${missing[*]}" >&2
        echo "Run as root or with sudo:  apt-get update && apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "install-peers.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" apt-get install -y "${missing[@]}"
fi

for tool in mpicc.openmpi mpirun.openmpi mpicc.mpich mpirun.mpich; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install-peers.sh: '$tool' not found after installation (not a Debian-packaged MPI?)" >&2
        exit 1
    fi
done
