#!/usr/bin/env bash
# Timeline pictures of several schedules, written by ppsim as SVG and HTML, opened in headless
# Chromium: screenshots for a person to look at, and a layout check in the real browser (boxes,
# legend and axis present; no labels overlapping; every microbatch number inside its box). Two
# runs do not fit their GPUs (oom-*): their pictures must show the OOM flag and a capacity line on
# each rank's memory lane. Pages (opened 1280 px wide) must open on the whole iteration, keep
# their legend inside the window, draw the transfers (DualPipe's; a MoE run's all-to-alls) and
# show the dependencies as arrows when their checkbox is ticked.
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
# 2 ranks, 10 GiB of activations per microbatch and 20 GiB of gradients per stage on a 40 GiB GPU:
# rank 0 needs 52 GiB. llama3-70b on 4 H100s needs several times their 80 GiB.
oom_costs=(--f 1ms --b 2ms --activation 10GiB --grad-bytes 20GiB --memory-limit 40GiB)
"$ppsim" run --schedule 1F1B --pp 2 --microbatches 4 "${oom_costs[@]}" \
  --timeline "$out/oom-small.svg" >/dev/null
"$ppsim" run --schedule 1F1B --pp 2 --microbatches 4 "${oom_costs[@]}" \
  --timeline "$out/oom-small.html" >/dev/null
"$ppsim" run --schedule 1F1B --pp 4 --microbatches 16 --model llama3-70b --platform h100-node \
  --timeline "$out/oom-70b.html" >/dev/null
# DualPipe's wide legend and long iteration; a MoE run with all three kinds of transfer.
"$ppsim" run --schedule DualPipe --pp 8 --microbatches 16 --model llama3-8b --platform h100-node \
  --timeline "$out/dualpipe.html" >/dev/null
"$ppsim" run --schedule DualPipe --model mixtral-8x7b --platform dgx-h100 --nodes 2 --pp 2 --dp 8 \
  --ep 8 --microbatches 8 --timeline "$out/moe.html" >/dev/null
status=0
verdicts=$("$here/../../scripts/screenshot-timelines" "$out/shots" "$out"/*.svg "$out"/*.html) ||
  status=$?
echo "$verdicts"
[[ $status -eq 77 ]] && exit 77
# Each OOM picture: the flag rendered and visible, a capacity line per rank (2 and 4 ranks).
for expected in "oom-small.svg:2" "oom-small.html:2" "oom-70b.html:4"; do
  file=${expected%:*}
  if ! grep -q "^$file: ok .* capacity-lines=${expected#*:} oom-flag=visible " <<<"$verdicts"; then
    echo "$file: FAIL: expected the OOM flag visible and ${expected#*:} capacity lines"
    status=1
  fi
done
# Pages open on the whole iteration with the legend inside a 1280 px window; transfers are drawn
# (DualPipe: sends and receives; MoE: also all-reduces and all-to-alls, three lanes).
# Their "dependencies" checkbox draws the flows: 1F1B on 16 ranks sends 2 (p - 1) m = 1920
# transfers, each with an arrow in from its producer and out to its consumer.
for file in dualpipe.html moe.html 1f1b-16x64.html; do
  if ! grep -q "^$file: ok .* xfers=[1-9][0-9]* legend=inside view=whole flows=[1-9][0-9]*," \
      <<<"$verdicts"; then
    echo "$file: FAIL: expected transfers, the legend inside the window, the whole iteration and"
    echo "  the dependencies on demand"
    status=1
  fi
done
if ! grep -q "^1f1b-16x64.html: ok .* flows=3840," <<<"$verdicts"; then
  echo "1f1b-16x64.html: FAIL: expected 3840 dependency arrows (2 per transfer, 2 (p - 1) m = 1920)"
  status=1
fi
if [[ $(grep -o 'class="xfer"[^>]*fill="#[0-9a-f]*"' "$out/moe.html" | grep -o 'fill="#[0-9a-f]*"' |
      sort -u | wc -l) -ne 3 ]]; then
  echo "moe.html: FAIL: expected transfers of three kinds (p2p, collective, all-to-all)"
  status=1
fi
exit "$status"
