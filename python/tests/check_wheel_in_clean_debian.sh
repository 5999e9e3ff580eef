#!/usr/bin/env bash
# Proves the repaired wheel is self-contained: installs it into a venv inside a minimal Debian 12
# (debootstrap's minbase with python3 and python3-venv, none of tools/debian-packages.txt's
# libraries) and generates from the embedded model there. Oracle: the text equals what the kiln
# binary of the build tree prints for the same prompt, greedy.
#   check_wheel_in_clean_debian.sh WHEEL SOURCE_DIR BINARY_DIR
# Needs root (chroot, mounts in a private mount namespace) and Debian's archive. The chroot is
# made once in BINARY_DIR/clean-debian (tools/make_clean_debian.sh) and reused.
set -euo pipefail
wheel=$(realpath "$1") source_dir=$(realpath "$2") binary_dir=$(realpath "$3")
root="$binary_dir/clean-debian"
if [ "$(id -u)" -ne 0 ]; then
  echo "the clean-Debian wheel check needs root (chroot)" >&2
  exit 1
fi
"$source_dir/tools/make_clean_debian.sh" "$root" python3,python3-venv
# Of tools/debian-packages.txt, the clean Debian may hold only what the venv needs.
for package in $(grep -v '^\s*#' "$source_dir/tools/debian-packages.txt"); do
  case "$package" in ca-certificates | python3-venv) continue ;; esac
  if chroot "$root" dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    echo "the clean Debian has $package installed: it would prove nothing about the wheel" >&2
    exit 1
  fi
done

work="$root/wheel-check"
rm -rf "$work"
mkdir -p "$work"
cp "$wheel" "$work/"
cp -r "$source_dir/models/kiln-tiny" "$work/model"
prompt=$'Q: What does mmap do?\nA:'
printf '%s' "$prompt" > "$work/prompt.txt"
expected=$(KILN_LOG_LEVEL=error "$binary_dir/kiln" run --model "$source_dir/models/kiln-tiny" -p "$prompt" -n 24 2>/dev/null)
cat > "$work/generate.py" <<'PY'
import kiln
pipe = kiln.LLMPipeline("/wheel-check/model", "CPU")
prompt = open("/wheel-check/prompt.txt").read()
print(pipe.generate(prompt, max_new_tokens=24, apply_chat_template=False).texts[0])
PY
# /proc and /sys (kiln reads the CPU's caches there) are mounted in a namespace of this command's
# own, so nothing stays mounted when it ends, however it ends.
got=$(unshare --mount --propagation private sh -c '
  set -e
  mount -t proc proc "$1/proc"
  mount --rbind /sys "$1/sys"
  chroot "$1" /bin/sh -c "cd /wheel-check && python3 -m venv venv && venv/bin/pip install -q --no-index *.whl \
    && KILN_LOG_LEVEL=error venv/bin/python generate.py"' sh "$root")
if [ "$got" != "$expected" ]; then
  printf 'the wheel in a clean Debian generated\n%s\nbut kiln run printed\n%s\n' "$got" "$expected" >&2
  exit 1
fi
echo "the repaired wheel generates in a clean Debian 12 what kiln run prints"
