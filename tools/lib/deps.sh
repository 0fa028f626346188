#!/usr/bin/env bash
# Install the Debian packages listed in tools/debian-packages.txt that are missing.
# As root: apt-get. Otherwise: sudo -n apt-get. Otherwise: print the exact command, exit 1.
# Sourced by tools/run and tools/test; safe to run again (installs only what is missing).
#   talus_ensure_packages LIST            the packages before the list's first [section]
#   talus_ensure_packages LIST SECTION    the packages of one [SECTION] (e.g. peers: the
#                                         engines the benchmarks compare Talus with)
set -euo pipefail

talus_ensure_packages() {
    local list="$1" section="${2:-}"
    local wanted=() missing=()
    mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$' |
        awk -v want="$section" '/^\[.*\]$/ { current = substr($0, 2, length($0) - 2); next }
                                 current == want')
    local p
    for p in "${wanted[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "talus: installing missing Debian packages: ${missing[*]}" >&2
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
    if [ "$(id -u)" -eq 0 ]; then
        "${apt[@]}" update -q >&2 || true
        "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" >&2
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n "${apt[@]}" update -q >&2 || true
        sudo -n "${apt[@]}" install -y -q --no-install-recommends "${missing[@]}" >&2
    else
        echo "talus: these Debian packages are missing and I cannot install them (not root, no passwordless sudo)." >&2
        echo "Run, as root:" >&2
        echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
}
