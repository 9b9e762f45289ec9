#!/usr/bin/env bash
# The explorer in headless Chromium: `ppsim serve` on a free port, the page opened on a view given
# in its address (1F1B, pp 4, 8 microbatches of F 1 ms and B 2 ms on the ideal platform), then one
# field changed as typing would (microbatches 16, by the page's #then: hook). The page must show
# the first result, then the changed one, each the closed form (m + p - 1)(f + b): 33 ms, then
# 57 ms; the address must hold the changed view; a screenshot stays in OUT_DIR for a person.
#
#   serve_test.sh PPSIM OUT_DIR       exit 0 ok, 1 a check failed, 77 Chromium missing
set -euo pipefail
ppsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/serve-browser.XXXXXX")
# shellcheck source=scripts/chromium.sh
source "$here/../../scripts/chromium.sh"
if ! find_chromium; then
  echo "serve_test: chromium not found; skipped"
  exit 77
fi

"$ppsim" serve --port 0 >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  grep -q "ppsim serve: http" "$work/serve.log" && break
  sleep 0.1
done
url=$(sed -n 's|^ppsim serve: \(http://[^ ]*\) .*|\1|p' "$work/serve.log")
[[ -n $url ]] || { echo "serve_test: the server did not start"; cat "$work/serve.log"; exit 1; }

view="?schedule=1F1B&pp=4&microbatches=8&f=1ms&b=2ms&platform=ideal"
run_chromium "$work/chromium.log" --window-size=1400,1600 --virtual-time-budget=20000 \
  --dump-dom "$url$view#then:microbatches=16" >"$work/dom.html" || {
  echo "serve_test: Chromium failed"; cat "$work/chromium.log"; exit 1; }
run_chromium "$work/chromium-shot.log" --window-size=1400,1600 --virtual-time-budget=20000 \
  --screenshot="$out/explorer.png" "$url$view" || true

code=0
fail() { echo "serve_test: FAIL: $1"; code=1; }
grep -q 'data-state="ready"' "$work/dom.html" || fail "the page never showed a result"
grep -q 'data-first="[^"]*makespan33.00 ms' "$work/dom.html" ||
  fail "the first result is not makespan 33.00 ms ((8 + 3) x 3 ms)"
grep -q '>makespan</td><td>57.00 ms</td>' "$work/dom.html" ||
  fail "after microbatches 16 the result is not makespan 57.00 ms ((16 + 3) x 3 ms)"
# Megatron's bubble (p - 1)/m: 3/8 first, then 3/16.
grep -q 'data-first="[^"]*bubble over ideal37.5%' "$work/dom.html" ||
  fail "the first bubble over ideal is not 3/8 = 37.5%"
grep -q '>bubble over ideal</td><td>18.8%</td>' "$work/dom.html" ||
  fail "after the change bubble over ideal is not 3/16 = 18.8%"
grep -q 'microbatches=16' <(grep -o 'data-url="[^"]*"' "$work/dom.html") ||
  fail "the address does not hold the changed view"
grep -q 'id="timeline" title="timeline" srcdoc=' "$work/dom.html" || fail "no timeline drawn"
grep -q 'id="error" class="error" hidden' "$work/dom.html" || fail "the page shows an error"
# The form is the run request's: every schedule offered, a field of each group.
for name in GPipe 1F1B ZB-V DualPipe; do
  grep -q "value=\"$name\"" "$work/dom.html" || fail "schedule $name not offered"
done
for field in pp microbatches model platform tp recompute_modules megatron torchtitan profile; do
  grep -q "data-field=\"$field\"" "$work/dom.html" || fail "field $field missing"
done
cp "$work/dom.html" "$out/explorer.dom.html"
[[ $code == 0 ]] && echo "serve_test: ok (33.00 ms, then 57.00 ms after the change)"
exit $code
