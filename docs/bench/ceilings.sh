#!/bin/bash
# The device's ceilings (issue 12, item 2) and a roofline of a few tuned
# shapes against them: on NVIDIA the FMA kernels (vector widths 1..16, 16
# independent chains), half FMAs through fma.rn.f16x2 and the tensor cores
# through mma.sync.m16n8k16 (8 accumulators per warp), on any device the
# copy bandwidth and the FMA ceilings it has.
#
#   docs/bench/ceilings.sh [OUT_DIR]      (from the repository root, after make build)
#
# Writes OUT_DIR/peak.txt and peak.json (every ceiling with the kernel that
# reached it and its raw launches), sweeps a small suite (GEMM f16 and f32,
# GEMV and GER f32) into OUT_DIR/ceilings.db in one run, and draws that run
# against the ceilings as OUT_DIR/roofline.svg and .png.
#
# What to look for on an H200: copy about 4 TB/s; fma_f32 and fma_f64 near
# the FP32 and FP64 peaks (DESIGN.md measured an FFMA loop at about 55
# TFLOP/s), fma_f16 about twice fma_f32, mma_f16 about 646 TFLOP/s; no
# "skipped" line for fma_f16 or mma_f16 (one names the reason the driver
# refused the PTX); no "warning: ... above" line in the reports, and no red
# ring or warning on the chart: every point lies under its roof.
#
# Environment: TLTUNE (default bin/tltune), DEVICE (default NVIDIA: the
# first device whose name has it), FLAGS (more tuning flags, e.g.
# "--budget 48"). NVIDIA's OpenCL: where the ICD loader lists no NVIDIA
# platform, tltune opens libnvidia-opencl.so.1 itself.
set -euo pipefail

tltune=${TLTUNE:-bin/tltune}
device=${DEVICE:-NVIDIA}
out=${1:-ceilings}
read -r -a flags <<<"${FLAGS:-}"
mkdir -p "$out"
db=$out/ceilings.db

"$tltune" version | tee "$out/version.txt"
"$tltune" peak --device "$device" --db "$db" | tee "$out/peak.txt"
"$tltune" peak --device "$device" --no-store --json >"$out/peak.json"
cat >"$out/ceilings.toml" <<'SUITE'
description = "a few shapes from memory- to compute-bound, for a roofline against the ceilings"
strategy = "gp"
budget = 24

[[recipe]]
op = "gemm"
square = "64..256*2"
dtype = ["f16", "f32"]

[[recipe]]
op = "gemv"
square = "256..1024*4"

[[recipe]]
op = "ger"
square = "256..1024*4"
SUITE
"$tltune" sweep "$out/ceilings.toml" --device "$device" --db "$db" --tag ceilings --quiet "${flags[@]}" | tee "$out/sweep.txt"
"$tltune" roofline --db "$db" --run ceilings -o "$out/roofline.svg"
"$tltune" roofline --db "$db" --run ceilings -o "$out/roofline.png"
grep -H "warning:" "$out/sweep.txt" || echo "no point above its roof"
