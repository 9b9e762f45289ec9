#!/usr/bin/env bash
# The README's Slurm job-array recipe on a real Slurm: this script starts its own munged,
# slurmctld and slurmd (Debian's slurm-wlm and munge) under WORKDIR, with a generated slurm.conf,
# ports of its own and nothing from /etc, and stops them when it ends. It
#   1. shards tests/slurm/study.yaml over a job array of 4 tasks (sbatch --array=0-3), where task 1
#      is killed (SIGKILL, through PPSIM_SWEEP_KILL_AFTER) after journaling one point;
#   2. resubmits task 1 with --resume, which keeps the journaled point and runs the rest;
#   3. joins the 4 shards with `ppsim merge`;
#   4. checks that the merged CSV and JSON lines are byte-identical to a local unsharded sweep,
#      wall time aside.
#
#   slurm_test.sh PPSIM WORKDIR     exit 0 pass, 1 fail, 77 skip (no Slurm installed)
set -euo pipefail
ppsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
  if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
    echo "slurm_test: $tool not found; scripts/install-deps installs slurm-wlm and munge" >&2
    exit 77
  fi
done
PATH=$PATH:/usr/sbin

rm -rf "$work"
mkdir -p "$work/state" "$work/spool" "$work/run"
work=$(cd "$work" && pwd)
# munged refuses a socket whose folders, up to /, not everyone can enter (a build folder may sit in
# a private one), and a key others can read: its files get a folder of their own under /tmp.
munge=$(mktemp -d /tmp/ppsim-munge.XXXXXX)
chmod 711 "$munge"
dd if=/dev/urandom of="$munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$munge/munge.key"

# Ports of this run's own, so that a Slurm on the machine (or another test) is left alone.
base_port=$((20000 + ($$ % 20000)))
user=$(id -un)
cat >"$work/slurm.conf" <<CONF
ClusterName=ppsimtest
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$base_port
SlurmdPort=$((base_port + 1))
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=ppsimnode NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=2 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF=$work/slurm.conf

# Stops the daemons and waits until each has exited before removing munged's folder: munged writes
# its seed file there as it exits, so an early removal races it ("Directory not empty").
stop() {
  local status=$? pids=() pid
  scontrol shutdown >/dev/null 2>&1 || true
  sleep 1
  for pid_file in "$work/slurmctld.pid" "$work/slurmd.pid" "$munge/munged.pid"; do
    if [ -f "$pid_file" ]; then
      pid=$(cat "$pid_file" 2>/dev/null || true)
      [ -n "$pid" ] && kill "$pid" 2>/dev/null && pids+=("$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  done
  rm -rf "$munge" 2>/dev/null || { sleep 1; rm -rf "$munge" 2>/dev/null; } ||
    echo "slurm_test: could not remove $munge" >&2
  exit $status
}
fail() {
  echo "slurm_test: $*" >&2
  for log in slurmctld.log slurmd.log; do
    [ -f "$work/$log" ] && { echo "--- $log (last lines)" >&2; tail -n 15 "$work/$log" >&2; }
  done
  exit 1
}
trap stop EXIT

munged --socket="$munge/munge.socket" --key-file="$munge/munge.key" \
  --pid-file="$munge/munged.pid" --log-file="$work/munged.log" --seed-file="$munge/munge.seed" ||
  fail "munged did not start"
slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N ppsimnode || fail "slurmd did not start"
for _ in $(seq 1 60); do
  state=$(sinfo -h -n ppsimnode -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "the node is not idle after 30 s (state '$state')"

cd "$work/run"
cp "$here/study.yaml" .
# The README's recipe, for 4 tasks; task 1 dies once it has journaled a point when KILL_TASK is it.
cat >array.sh <<JOB
#!/bin/bash
if [ "\${KILL_TASK:-}" = "\$SLURM_ARRAY_TASK_ID" ]; then export PPSIM_SWEEP_KILL_AFTER=1; fi
exec "$ppsim" sweep study.yaml -o shard-\$SLURM_ARRAY_TASK_ID.csv -j 1 \
  --shard \$SLURM_ARRAY_TASK_ID/4 \${RESUME:-}
JOB
chmod +x array.sh

status=0
KILL_TASK=1 timeout 300 sbatch --wait --array=0-3 --cpus-per-task=1 -o 'task-%a.out' \
  --export=ALL,KILL_TASK=1 array.sh >/dev/null || status=$?
[ $status -ne 0 ] || fail "the array with a killed task reported success"
[ -f shard-1.csv.partial ] || fail "task 1 left no journal (shard-1.csv.partial)"
[ ! -f shard-1.csv ] || fail "task 1 wrote shard-1.csv although it was killed"
[ "$(wc -l <shard-1.csv.partial)" -eq 2 ] || fail "task 1's journal is not its header and one point"
for t in 0 2 3; do [ -f "shard-$t.csv" ] || fail "task $t wrote no shard-$t.csv"; done

timeout 300 sbatch --wait --array=1 --cpus-per-task=1 -o 'task-%a-resumed.out' \
  --export=ALL,RESUME=--resume array.sh >/dev/null || fail "the resumed task 1 failed: $(cat task-1-resumed.out)"
grep -q "1 resumed" task-1-resumed.out || fail "task 1 did not resume its journaled point: $(cat task-1-resumed.out)"
[ ! -f shard-1.csv.partial ] || fail "the resumed task 1 left its journal"

"$ppsim" merge shard-0.csv shard-1.csv shard-2.csv shard-3.csv -o merged.csv >/dev/null
"$ppsim" sweep study.yaml -o local.csv -j 2 >/dev/null 2>local.err

# wall_s is the one value that differs: the last CSV column and the JSON lines' own field.
mask() { sed -E -e 's/"wall_s": [-0-9.e+]+/"wall_s": W/' -e '2,$ s/,[-0-9.e+]*$/,W/' "$1"; }
for f in csv jsonl; do
  if ! cmp -s <(mask "merged.$f") <(mask "local.$f"); then
    diff <(mask "merged.$f") <(mask "local.$f") | head -n 10 >&2
    fail "merged.$f differs from the local sweep's local.$f"
  fi
done
echo "slurm_test: 4 array tasks, task 1 killed and resumed, merged = local sweep ($(($(wc -l <merged.csv) - 1)) points)"
