#!/usr/bin/env bash
# Reports opened in headless Chromium (scripts/screenshot-report): a results CSV written by hand
# (two of four points out of memory, MFU known, one GPU capacity), a sweep with a model whose
# zipped schedule axis runs some points out of memory, a sweep without a model, and a run's CSV.
# Each must pass the browser check; the hand-written one must show exactly what it holds; the
# swept ones their header of facts, a log axis for 16-128 microbatches, OOM peaks apart in a band
# and equal series all visible.
#
#   report_test.sh PPSIM OUT_DIR       exit 0 ok, 1 a check failed, 77 Chromium missing
set -euo pipefail
ppsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
cd "$out"

# Two schedules over two microbatch counts on 80 GiB GPUs; GPipe's 96 and 128 GiB do not fit.
cat >hand.csv <<'EOF'
point,schedule,microbatches,makespan_s,bubble_over_makespan,bubble_over_ideal,stage_bubble_rate,throughput_microbatches_per_s,samples_per_s,tokens_per_s,mfu,hfu,peak_memory_bytes,static_memory_bytes,memory_capacity_bytes,oom,time_to_train_s,gpu_hours,cost,status,error,wall_s
0,1F1B,8,0.5,0.25,0.3333333333333333,0.25,16,16,131072,0.4,,53687091200,21474836480,85899345920,false,,,,ok,,0.01
1,1F1B,16,0.9,0.1667,0.2,0.1667,17.78,17.78,145635.6,0.44,,53687091200,21474836480,85899345920,false,,,,ok,,0.01
2,GPipe,8,0.5,0.25,0.3333333333333333,0.25,16,16,131072,0.4,,103079215104,21474836480,85899345920,true,,,,ok,,0.01
3,GPipe,16,0.9,0.1667,0.2,0.1667,17.78,17.78,145635.6,0.44,,137438953472,21474836480,85899345920,true,,,,ok,,0.01
EOF
cat >model.yaml <<'EOF'
base: {pp: 4, model: llama3-8b, platform: h100-node}
axes:
  - {field: schedule, values: [1F1B, Interleaved1F1B, GPipe], with: [{field: stages_per_rank, values: ["1", "2", "1"]}]}
  - {field: microbatches, values: ["16", "32", "64", "128"]}
EOF
"$ppsim" sweep model.yaml -o model.csv -j 2 >/dev/null 2>&1
"$ppsim" sweep "$here/../../experiments/examples/microbatch-sweep.json" -o plain.csv -j 2 \
  >/dev/null 2>&1
"$ppsim" run --schedule 1F1B,GPipe --pp 4 --microbatches 8 --model llama3-8b \
  --platform h100-node --format csv >run.csv
for name in hand model plain run; do
  "$ppsim" report "$name.csv" -o "$name.html" >/dev/null
done

code=0
verdicts=$("$here/../../scripts/screenshot-report" shots hand.html model.html plain.html \
           run.html) || code=$?
echo "$verdicts"
[[ $code -ne 77 ]] || exit 77
[[ $code -eq 0 ]] || exit 1
expect() {
  if ! grep -q "^$1: $2" <<<"$verdicts"; then
    echo "report_test: $1 does not start with '$2'"
    exit 1
  fi
}
# 2 OOM points crossed in each of 4 charts, one 80 GiB capacity; 1F1B and GPipe have equal
# throughput, MFU and bubble, and both stay visible; nothing tells the model.
expect hand.html "ok charts=tokens_per_s,mfu,peak_memory_bytes,bubble_over_makespan oom-marks=8 capacity-lines=1 model=not_recorded x-scale=linear band-values=0 series-visible=8/8 definitions=3,"
# 16 to 128 microbatches on a base-2 log axis; GPipe's largest peaks (several times 80 GiB) are
# written in the band above the memory chart; 1F1B and GPipe are equal in throughput.
expect model.html "ok charts=tokens_per_s,mfu,peak_memory_bytes,bubble_over_makespan oom-marks=[1-9][0-9]* capacity-lines=1 model=llama3-8b x-scale=log2 band-values=[1-9] series-visible=12/12 definitions=3,"
expect plain.html "ok charts=samples_per_s,peak_memory_bytes,bubble_over_makespan oom-marks=0 capacity-lines=1 model=not_recorded x-scale=[a-z0-9]* band-values=0 series-visible=\([0-9]*\)/\1 definitions=3,"
expect run.html "ok charts=tokens_per_s,mfu,peak_memory_bytes,bubble_over_makespan oom-marks=[1-9] capacity-lines=1 model=llama3-8b x-scale=bars band-values=0 series-visible=0/0 definitions=3,"
# The header names the experiment's file, the ppsim that swept it and the command.
for fact in "<dt>experiment</dt><dd>model.yaml</dd>" "<dt>simulated with</dt><dd>ppsim " \
            "<dt>command</dt><dd><code>ppsim sweep model.yaml -o model.csv -j 2</code></dd>"; do
  if ! grep -qF "$fact" model.html; then
    echo "report_test: model.html lacks $fact"
    exit 1
  fi
done
echo "report_test: 4 reports checked in Chromium"
