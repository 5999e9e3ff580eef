#!/usr/bin/env bash
# kiln's GPU measurement, prepared to run in a few minutes on a machine with a GPU and its OpenCL
# runtime: decode (TPOT) and prefill of the 1.24B Llama-shaped int4 model on GPU.0 and on the CPU,
# decode as a share of the GPU's memory-bandwidth roofline; and where the host CPU has AMX, kiln's
# AMX kernel tests (they have run nowhere else on silicon) and the same prefill on the CPU.
#
#   bench/gpu/measure_gpu.sh [BUILD_DIR] [WORK_DIR]
#
# BANDWIDTH_GBS=<GB/s> gives the roofline's bandwidth for a GPU the table below does not know.
# KILN_BENCH_MODEL=<dir> measures that model instead of making the 1.24B one, PROMPT_TOKENS sets
# the prompt (default 512): a dry run, on a small model.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=${2:-/tmp/kiln-gpu-bench}
mkdir -p "$work"

if [ ! -x "$build/kiln" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF > /dev/null
  cmake --build "$build"
fi
kiln="$build/kiln"

echo "== host"
lscpu | grep -E "^(Model name|CPU\(s\)|L3 cache)" || true
amx=no
grep -q amx_tile /proc/cpuinfo && amx=yes
echo "AMX: $amx"
echo "== GPU devices"
"$kiln" devices | sed -n '/^GPU/,/^properties/p' | grep -v "^properties" | grep -v "extensions"

model=${KILN_BENCH_MODEL:-}
if [ -z "$model" ]; then
  [ -d "$work/llama1b" ] || "$kiln" synth --like llama-3.2-1b -q "$work/llama1b"
  [ -d "$work/llama1b-int4" ] || "$kiln" export -m "$work/llama1b" --weight-format int4 --sym --group-size 128 \
    --ratio 1.0 -q "$work/llama1b-int4"
  model="$work/llama1b-int4"
fi

# 512 prompt tokens (prefill) then 128 new (decode), greedy; the compile cache holds the CPU's
# packed weights and the GPU's program binaries, so the measured runs load warm.
for device in GPU CPU; do
  echo "== $device"
  "$kiln" bench -m "$model" --device "$device" --property "CACHE_DIR=$work/cache" --prompt-tokens "${PROMPT_TOKENS:-512}" \
    --new-tokens 128 --warmup 1 --runs 3 --json "$work/$device.json" | grep -E "TTFT|TPOT|prefill|load"
done

python3 - "$work" "$model" <<'PY'
import json, os, re, subprocess, sys
work, model = sys.argv[1], sys.argv[2]
gpu, cpu = (json.load(open(os.path.join(work, f"{d}.json"))) for d in ("GPU", "CPU"))
# Decode reads every weight once per token: the weight files' bytes (the tied head included).
bytes_per_token = sum(os.path.getsize(os.path.join(model, f)) for f in os.listdir(model)
                      if f == "model.bin" or f.endswith(".safetensors"))
name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                      text=True).stdout.strip() if subprocess.run(["which", "nvidia-smi"], capture_output=True).returncode == 0 else ""
# Peak memory bandwidth, GB/s, from the vendors' data sheets.
table = {"H200": 4800, "H100 NVL": 3900, "H100 PCIe": 2000, "H100": 3350, "A100-SXM4-80GB": 2039,
         "A100-PCIE-80GB": 1935, "A100": 1555, "L40S": 864, "L4": 300}
bandwidth = float(os.environ.get("BANDWIDTH_GBS", 0)) or next((v for k, v in table.items() if k in name), 0)
tpot = gpu["tpot_ms"]["mean"]
print(f"== summary ({name or 'GPU'}; {bytes_per_token / 1e6:.0f} MB read per token)")
print(f"GPU decode {1000 / tpot:.1f} tok/s (TPOT {tpot:.2f} ms), prefill {gpu['prefill_tokens_per_s']['mean']:.0f} tok/s")
print(f"CPU decode {1000 / cpu['tpot_ms']['mean']:.1f} tok/s, prefill {cpu['prefill_tokens_per_s']['mean']:.0f} tok/s")
if bandwidth:
    roofline_ms = bytes_per_token / (bandwidth * 1e9) * 1000
    print(f"GPU decode roofline at {bandwidth:.0f} GB/s: {roofline_ms:.3f} ms a token; kiln reaches "
          f"{100 * roofline_ms / tpot:.1f}% of it")
else:
    print("roofline: unknown bandwidth (set BANDWIDTH_GBS)")
PY

if [ "$amx" = yes ]; then
  echo "== AMX kernel tests on this CPU"
  if [ -f "$build/CTestTestfile.cmake" ]; then
    cmake --build "$build" > /dev/null
    ctest --test-dir "$build" -R "Amx|amx" --output-on-failure | tail -5
  fi
fi
