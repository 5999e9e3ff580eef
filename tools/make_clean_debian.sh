#!/usr/bin/env bash
# Makes a minimal Debian 12 root: debootstrap's minbase, plus PACKAGES (comma-separated) when
# given, from the archive this machine's apt uses. The wheel check installs the wheel into one
# (with python3,python3-venv); the container test imports one as the base image debian:12-slim.
# Does nothing when ROOT was made before; a failed attempt leaves no ROOT/.made behind.
#   make_clean_debian.sh ROOT [PACKAGES]
set -euo pipefail
root=$1 packages=${2:-}
if [ -f "$root/.made" ]; then
  exit 0
fi
rm -rf "$root"
mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Codename: bookworm' 'Component: main' | head -n 1)
debootstrap --variant=minbase ${packages:+--include="$packages"} bookworm "$root" "$mirror" \
  > "$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; exit 1; }
touch "$root/.made"
