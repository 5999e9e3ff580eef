#!/usr/bin/env bash
# Makes the minimal Debian 12 that check_wheel_in_clean_debian.sh installs the wheel into:
# debootstrap's minbase with python3 and python3-venv, from the archive this machine's apt uses.
# Does nothing when ROOT was made before; a failed attempt leaves no ROOT/.made behind.
#   make_clean_debian.sh ROOT
set -euo pipefail
root=$1
if [ -f "$root/.made" ]; then
  exit 0
fi
rm -rf "$root"
mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Codename: bookworm' 'Component: main' | head -n 1)
debootstrap --variant=minbase --include=python3,python3-venv bookworm "$root" "$mirror" \
  > "$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; exit 1; }
touch "$root/.made"
