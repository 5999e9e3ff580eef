#!/usr/bin/env bash
# Builds the Dockerfile with podman and serves from the image: the container's /health answers,
# its compile cache was warmed at build time (the first load is a cache hit), and its completion
# equals what the build tree's kiln run prints for the same prompt, greedy.
#   run_container_test.sh SOURCE_DIR BINARY_DIR
# Needs root, podman, runc and debootstrap (tools/debian-packages.txt) and Debian's archive. No
# registry is needed: the base image, debian:12-slim, is a minimal Debian 12 made with debootstrap
# (tools/make_clean_debian.sh) and imported under that name.
set -euo pipefail
src=$(realpath "$1") build=$(realpath "$2")
if [ "$(id -u)" -ne 0 ]; then
  echo "the container test needs root (podman, debootstrap)" >&2
  exit 1
fi
root="$build/container-debian"
"$src/tools/make_clean_debian.sh" "$root"
base=docker.io/library/debian:12-slim image=localhost/kiln-container-test name="kiln-container-test-$$"
tar -C "$root" --exclude=./.made -c . | podman import --quiet - "$base" > /dev/null

# chroot isolation and runc with rlimits no higher than this shell's: inside another container (a
# CI runner) crun cannot drive a hybrid cgroup hierarchy, and without CAP_SYS_RESOURCE podman's
# default limits cannot be set. Neither changes what the image holds.
podman build --quiet --isolation chroot --pull=never -t "$image" "$src" > "$build/container-build.log" 2>&1 \
  || { tail -n 30 "$build/container-build.log" >&2; exit 1; }
trap 'podman rm -f "$name" > /dev/null 2>&1 || true' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
podman --runtime runc run -d --name "$name" --network host --ulimit "nofile=4096:4096" --ulimit "nproc=8192:8192" \
  -e KILN_LOG_LEVEL=info "$image" serve --host=127.0.0.1 --port="$port" --property=CACHE_DIR=/var/cache/kiln > /dev/null

url="http://127.0.0.1:$port"
for _ in $(seq 120); do
  if curl -fsS "$url/health" > /dev/null 2>&1; then break; fi
  if [ "$(podman inspect --format '{{.State.Running}}' "$name")" != true ]; then break; fi
  sleep 0.5
done
if ! curl -fsS "$url/health" > /dev/null; then
  echo "the container's /health did not answer; its log:" >&2
  podman logs "$name" >&2
  exit 1
fi
log=$(podman logs "$name" 2>&1)  # whole, before grep: grep -q would end a pipe early (pipefail)
if ! grep -q 'compiled .* (hit)' <<< "$log"; then
  printf "the container's first load was not a compile-cache hit (the image's cache was not warmed); its log:\n%s\n" \
    "$log" >&2
  exit 1
fi

prompt=$'Q: What does mmap do?\nA:'
expected=$(KILN_LOG_LEVEL=error "$build/kiln" run --model "$src/models/kiln-tiny" -p "$prompt" -n 24 --temperature 0 2>/dev/null)
request=$(python3 -c 'import json, sys; print(json.dumps({"model": "kiln-tiny", "prompt": sys.argv[1], "max_tokens": 24, "temperature": 0}))' "$prompt")
got=$(curl -fsS "$url/v1/completions" -H 'Content-Type: application/json' -d "$request" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["choices"][0]["text"])')
if [ "$got" != "$expected" ]; then
  printf 'the container completed\n%s\nbut kiln run printed\n%s\n' "$got" "$expected" >&2
  exit 1
fi
echo "the image builds with README's steps, starts warm, and serves what kiln run prints"
