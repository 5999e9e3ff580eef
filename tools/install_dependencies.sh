#!/usr/bin/env bash
# Installs the Debian packages of tools/debian-packages.txt (as root, or through sudo): what the
# build and the whole test suite need. README's first command and CI both run it.
set -euo pipefail
list="$(dirname "$0")/debian-packages.txt"
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
# shellcheck disable=SC2046  # one package a word
"${sudo[@]}" apt-get install -y -q --no-install-recommends $(grep -v '^\s*#' "$list")
