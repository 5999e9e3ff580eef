#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries BINARY loads (ldd, then dpkg -S), one
# a line: what an image that runs kiln installs, derived from the build so the two cannot drift.
#   runtime_packages.sh BINARY
set -euo pipefail
ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r library; do
  # dpkg knows a library by the path its package installed, which may differ from ldd's by a
  # symlinked directory (/lib against /usr/lib).
  dpkg -S "$(realpath "$library")" 2>/dev/null || dpkg -S "$library"
done | cut -d: -f1 | tr -s ", " "\n" | sort -u
