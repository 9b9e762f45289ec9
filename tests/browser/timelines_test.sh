#!/usr/bin/env bash
# Timeline pictures of several schedules, written by ppsim as SVG and HTML, opened in headless
# Chromium: screenshots for a person to look at, and a layout check in the real browser (boxes,
# legend and axis present; no labels overlapping; every microbatch number inside its box).
#
#   timelines_test.sh PPSIM OUT_DIR       exit 0 ok, 1 a check failed, 77 Chromium missing
set -euo pipefail
ppsim=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
costs=(--f 1ms --activation 1GiB --message-bytes 32MiB)
"$ppsim" run --schedule 1F1B --pp 16 --microbatches 64 "${costs[@]}" --b 2ms \
  --platform dgx-h100 --nodes 2 --timeline "$out/1f1b-16x64.svg" >/dev/null
"$ppsim" run --schedule 1F1B --pp 16 --microbatches 64 "${costs[@]}" --b 2ms \
  --platform dgx-h100 --nodes 2 --timeline "$out/1f1b-16x64.html" >/dev/null
"$ppsim" run --schedule Interleaved1F1B --pp 4 --microbatches 8 "${costs[@]}" --b 2ms \
  --timeline "$out/interleaved.html" >/dev/null
"$ppsim" run --schedule ZB-V --pp 4 --microbatches 8 "${costs[@]}" --i 1ms --w 1ms \
  --timeline "$out/zb-v.svg" >/dev/null
"$ppsim" run --schedule DualPipeV --pp 4 --microbatches 10 "${costs[@]}" --i 1ms --w 1ms \
  --timeline "$out/dualpipev.html" >/dev/null
"$ppsim" run --schedule ZB-H1 --pp 4 --microbatches 8 "${costs[@]}" --i 1ms --w 1ms \
  --grad-bytes 1GiB --dp 2 --timeline "$out/zb-h1-dp2.svg" >/dev/null
exec "$here/../../scripts/screenshot-timelines" "$out/shots" "$out"/*.svg "$out"/*.html
