# Sourced by the scripts that open ppsim's pages in headless Chromium (screenshot-timelines,
# screenshot-report): finding the browser and running it, in one place.
#
#   find_chromium             sets chromium to the browser (CHROMIUM=path picks it); status 1 when
#                             there is none
#   run_chromium LOG ARGS...  headless Chromium with ARGS (at most 120 s), its stderr in LOG, its
#                             profile in $work/profile; status 1 when it fails
find_chromium() {
  chromium=${CHROMIUM:-}
  if [[ -z $chromium ]]; then
    for candidate in chromium chromium-browser google-chrome; do
      if command -v "$candidate" >/dev/null 2>&1; then
        chromium=$(command -v "$candidate")
        break
      fi
    done
  fi
  [[ -n $chromium && -x $chromium ]]
}

run_chromium() {
  local log=$1
  shift
  if ! timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
      --no-first-run --no-default-browser-check --disable-extensions --mute-audio \
      --user-data-dir="$work/profile" "$@" 2>"$log"; then
    return 1
  fi
}
