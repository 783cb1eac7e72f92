# Sourced first by every journey (scripts/e2e/journeys/*, run by scripts/e2e/suite, one bash each):
# the journey's own state and its teardown, the bounded steps and their checks. A journey starts
# from nothing another journey left: its own data directory and databases on the VM's disk (SQLite
# WAL does not work on the 9p share), its own simulator, its own pairing. Whatever way it ends
# (a step fails, a check does not hold, the runner stops it), its EXIT trap stops what it started,
# forgets the bonds and leaves bluetoothd running with both adapters.
set -uo pipefail
. "$E2E_DIR/lib.sh"
T=$E2E_BIN
J=${E2E_JOURNEY:-$(basename "$0")}
export TZ=$E2E_TZ XDG_DATA_HOME=/root/data-$E2E_MODE-$J
rm -rf "$XDG_DATA_HOME"; mkdir -p "$XDG_DATA_HOME"
steps=$OUT/steps-$E2E_MODE/$J; rm -rf "$steps"; mkdir -p "$steps"
sim_log=$OUT/simulator-$J-$E2E_MODE.log truth_json=$OUT/truth-$J-$E2E_MODE.json
n=0 last="setup" status=0 got= sim_pid= serve_pid= sim_addr= cli_addr=
# The simulator's clock, as in the suite before: the journey's start.
sim_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)

fail() {
  echo "E2E FAIL [$E2E_MODE] $J step $n \"$last\": $*"
  [ -s "$steps/$n.out" ] && { echo "--- its output (last 25 lines)"; tail -n 25 "$steps/$n.out"; }
  [ -s "$sim_log" ] && { echo "--- simulator (last 10 lines)"; tail -n 10 "$sim_log"; }
  exit 1
}

# check NAME ARGS...: an assertion of scripts/e2e/checks.py (what it printed goes to the output).
check() { python3 "$E2E_DIR/checks.py" "$@"; }

# Every step is bounded (E2E_STEP_TIMEOUT, default 300 s; the longest passing step takes about 35);
# one that hangs ends with status 124 and what its processes were doing in its output.
run_step() {
  local t0=$EPOCHREALTIME
  run_bounded "${E2E_STEP_TIMEOUT:-300}" "$steps/$n.out" "$@"; status=$?
  got=$(cat "$steps/$n.out")
  log "[$E2E_MODE] $J $n. $last: status $status, $(printf '%.2f' "$(echo "$EPOCHREALTIME - $t0" | bc)") s"
}
# step NAME CMD...: runs the CLI command; its stdout+stderr are in $steps/N.out and in $got.
# bluetoothd 5.66 with both roles in one daemon sometimes crashes (SIGSEGV) after a link ends
# while its peripheral side still browses the central; that is recorded (bluetoothd-crashes.txt,
# printed by the harness), bluetoothd is started again and the step runs once more.
# Test hook: E2E_FAIL_JOURNEY=NAME makes journey NAME fail at its step E2E_FAIL_STEP (default 2,
# after its simulator started), to show the runner going on past a failed journey.
step() {
  n=$((n + 1)); last=$1; shift
  if [ "${E2E_FAIL_JOURNEY:-}" = "$J" ] && [ "$n" -ge "${E2E_FAIL_STEP:-2}" ]; then
    fail "made to fail by E2E_FAIL_JOURNEY=$J (a test hook of the runner)"
  fi
  run_step "$@"
  if ! bluetoothd_alive; then
    echo "[$E2E_MODE] $J step $n \"$last\": $(tail -n 1 "$OUT/bluetoothd-$E2E_MODE.log")" >> "$OUT/bluetoothd-crashes.txt"
    log "[$E2E_MODE] bluetoothd died during step $n; starting it again and repeating the step"
    $peer_recovery before
    start_bluetoothd || fail "bluetoothd did not come back after it crashed"
    $peer_recovery after
    run_step "$@"
  fi
}
# begin NAME: a step the journey runs itself (a background command, a wait); $steps/N.out is its.
begin() { n=$((n + 1)); last=$1; }
ok() { [ "$status" = 0 ] || fail "exit status $status, expected 0"; }
expect() { grep -qE -- "$1" <<<"$got" || fail "output does not match /$1/"; }
out() { echo "$steps/$n.out"; }

# same_as_truth FROM_ISO [DB]: the database's records equal the simulator's ground truth
# ($truth_json) from FROM_ISO on.
same_as_truth() {
  "$T" sleep export --format json --last 100d --out "$steps/export-$n.json" --force ${2:+--db "$2"} > /dev/null 2>&1 || fail "sleep export failed"
  check sleep-equals-truth "$truth_json" "$steps/export-$n.json" "$1" || fail "the database does not hold exactly the simulator's records (details above)"
}

# decode_args: more arguments of its protocol decode steps (a Huami band's --name); replay_args:
# of its protocol replay step (a Huami band's --auth-key).
# captured_sync DIALECT DB SYNC-ARGS...: an HCI capture (tsgateway capture, root in the VM; the
# file 0600) of `sleep sync SYNC-ARGS` into the fresh database DB, which must hold exactly the
# ground truth; protocol decode --btsnoop then finds DIALECT's exchange in it by itself, shows
# every frame (those failing their checks counted: with EATT a frame may be split across
# bearers), the sleep records it decodes are exactly the ones the sync stored, and --to-capture
# writes the exchange as a replayable capture; protocol replay plays that capture to DIALECT's
# own central, which syncs from it into a fresh database as the live sync did: the same count
# fetched, and exactly the ground truth stored. The live sync's clock runs as a person's does
# (NPK's login, time set and sync ranges carry it, seconds apart); the replay is given the sync's
# range and its time-set choice (its -v log says whether the clock was trusted), writes the clock
# the recorded central first wrote, and takes each later one within the recording's duration.
captured_sync() {
  local dialect=$1 db=$2 cap capturer cstatus from export replayable sync_out replay_db time_set=() watch_now now_args pin
  shift 2
  cap=/root/sync-$J-$E2E_MODE.btsnoop replayable=$steps/replay-$J.jsonl
  rm -f "$cap" "$db"*
  begin "$dialect: tsgateway capture records a sync"
  "$T" capture --out "$cap" --adapter hci0 --device "$sim_addr" > "$steps/$n.capture" 2>&1 & capturer=$!
  for _ in $(seq 1 100); do grep -q "capturing" "$steps/$n.capture" && break; kill -0 $capturer 2>/dev/null || break; sleep 0.1; done
  # The live sync's clock runs as a person's does and the replay is given no --now (issue 46): the
  # replay writes the clock the recorded central first wrote and takes each later one within the
  # recording's duration. E2E_CAPTURE_CLOCK=pinned pins it (TSGATEWAY_WATCH_NOW, the replay given
  # it with --now), as CI ran until the running clock passed npk, qring and huami in both modes.
  watch_now=$(date -u +%Y-%m-%dT%H:%M:%SZ) now_args=() pin=()
  [ "${E2E_CAPTURE_CLOCK:-running}" = pinned ] && { now_args=(--now "$watch_now"); pin=(env TSGATEWAY_WATCH_NOW="$watch_now"); }
  run_step ${pin[@]+"${pin[@]}"} "$T" sleep sync "$@" --json -v --db "$db" --device "$sim_addr"
  sleep 1; kill -INT $capturer; reap $capturer; cstatus=$?
  ok; sync_out=$(out)
  [ "$cstatus" = 0 ] || fail "tsgateway capture exited $cstatus: $(cat "$steps/$n.capture")"
  [ "$(stat -c %a "$cap")" = 600 ] || fail "the capture file is mode $(stat -c %a "$cap"), expected 600"
  cp "$cap" "$OUT/"   # kept with the logs if a later step fails
  from=$(check field "$(out)" from) || fail "the captured sync printed no from"
  same_as_truth "$from" "$db"; export=$steps/export-$n.json
  step "$dialect: protocol decode --btsnoop finds the $dialect exchange by itself" "$T" protocol decode --btsnoop "$cap" ${decode_args[@]+"${decode_args[@]}"}; ok
  expect "^dialect $dialect: "
  step "$dialect: protocol decode --btsnoop --json: the decoded sleep records are the synced ones" \
    "$T" protocol decode --btsnoop "$cap" --json --to-capture "$replayable" ${decode_args[@]+"${decode_args[@]}"}; ok
  check capture-sleep-records "$(out)" "$export" "$dialect" "$from" || fail "the sleep records decoded from the capture differ from the records synced"
  check replayable-capture "$replayable" "$(out)" || fail "--to-capture wrote no replayable capture"
  replay_db=${db%.sqlite}-replay.sqlite; rm -f "$replay_db"*
  grep -q "clock is not set at connect" "$sync_out" && time_set=(--no-time-set)
  step "$dialect: protocol replay plays the capture to the $dialect central, which syncs from it" \
    "$T" protocol replay "$replayable" --db "$replay_db" --from "$from" ${now_args[@]+"${now_args[@]}"} ${time_set[@]+"${time_set[@]}"} \
    ${replay_args[@]+"${replay_args[@]}"} --json -v; ok
  [ "$(check field "$(out)" fetched)" = "$(check field "$sync_out" fetched)" ] \
    || fail "the replay fetched $(check field "$(out)" fetched) record(s), the live sync $(check field "$sync_out" fetched)"
  same_as_truth "$from" "$replay_db"
}

# client_attempt CMD...: runs a third-party client (at most 90 s) against the simulated device on
# hci1. Its bleak scans for the address before each connect, and a fresh scan on btvirt gets no
# report of an advertisement already running, so the device advertises anew (SIGUSR1) until a
# central is on its link. It does so only while hci1 has no link: the kernel knows of a link at
# once, the simulator's "a central is on the link" comes later under load, and a SIGUSR1 in
# between made a ring re-advertise under a central still setting up its link (a run with two VMs
# lost one so).
client_attempt() {
  local links pid waited
  links=$(grep -c "a central is on the link" "$sim_log")
  timeout 90 "$@" & pid=$!
  for waited in $(seq 1 30); do
    sleep 2
    kill -0 $pid 2>/dev/null || break
    [ "$(grep -c "a central is on the link" "$sim_log")" -gt "$links" ] && break
    hcitool -i hci1 con 2>/dev/null | grep -q " LE " && continue
    kill -USR1 "$sim_pid"
  done
  wait $pid
}
# bleak_hash_seed PYTHON: a PYTHONHASHSEED (0…50) under which PYTHON's bleak takes hci0: bleak
# connects through the first powered adapter of a Python set, whose order follows the seed.
bleak_hash_seed() {
  local seed
  for seed in $(seq 0 50); do
    PYTHONHASHSEED=$seed "$1" "$E2E_DIR/checks.py" set-order-hci0 2>/dev/null && { echo "$seed"; return 0; }
  done
  return 1
}

# The addresses: hci1 (the simulated peripherals') and hci0 (the CLI's), once hci0 is powered.
adapters_known() {
  "$T" adapter power on --adapter hci0 > "$steps/power.out" 2>&1 || fail "adapter power on: $(cat "$steps/power.out")"
  "$T" adapter list --json > "$steps/adapters.json" 2> "$steps/adapters.err" || fail "adapter list: $(cat "$steps/adapters.err")"
  sim_addr=$(check adapter-address "$steps/adapters.json" hci1) || fail "no hci1 in adapter list"
  cli_addr=$(check adapter-address "$steps/adapters.json" hci0) || fail "no hci0 in adapter list"
}
# Forget whatever hci0 and hci1 bonded before: each journey pairs what it talks to.
forget_bonds() {
  [ -n "$sim_addr" ] && "$T" unpair "$sim_addr" --adapter hci0 > /dev/null 2>&1
  [ -n "$cli_addr" ] && "$T" unpair "$cli_addr" --adapter hci1 > /dev/null 2>&1
  return 0
}

# scan_while_starting NAME TIMEOUT START [ARGS] -- CHECK-ARGS: the scan starts before the
# peripheral advertises (btvirt answers so fast that a report arriving before the kernel marks
# discovery active is dropped, and its duplicate filter never repeats it); START starts it; then
# scripts/e2e/checks.py scan-finds with CHECK-ARGS must hold.
scan_while_starting() {
  local name=$1 timeout=$2 start=() scanner
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do start+=("$1"); shift; done
  shift
  begin "$name"
  if [ "${E2E_FAIL_JOURNEY:-}" = "$J" ] && [ "$n" -ge "${E2E_FAIL_STEP:-2}" ]; then
    fail "made to fail by E2E_FAIL_JOURNEY=$J (a test hook of the runner)"
  fi
  "$T" scan --count 1 --adapter hci0 --timeout "$timeout" --json > "$steps/$n.out" 2>&1 & scanner=$!
  sleep 2; "${start[@]}"
  reap $scanner; status=$?; got=$(cat "$steps/$n.out"); ok
  check scan-finds "$steps/$n.out" "$sim_addr" "$@" 2>/dev/null && return 0
  # A scan that saw no report of the peripheral at all scans once more (scan_once_more=0: not):
  # btvirt reports an advertiser when the scan is enabled or the advertising is, and the kernel may
  # drop a report that comes before it marks discovery active (as for BlueZ's example peripheral in
  # standard-services); with a scan in every journey's setup a run saw one such miss in eleven, and
  # a full att run one in v1-basics' own scan step.
  [ "$scan_once_more" = 1 ] && ! grep -q "\"$sim_addr\"" "$steps/$n.out" || return 1
  log "[$E2E_MODE] $J $n. no report of $sim_addr in $timeout s; scanning once more"
  cp "$steps/$n.out" "$steps/$n.first"
  run_step "$T" scan --count 1 --adapter hci0 --timeout "$timeout" --json; ok
  check scan-finds "$steps/$n.out" "$sim_addr" "$@" 2>/dev/null
}
scan_once_more=1

# --- the simulated protocol v1 watch on hci1
service_uuid=54530001-6777-4e3b-9c2a-7473676174e5   # protocol-spec/v1/wire-protocol.md
start_simulator() {
  local extra=()
  [ "${E2E_BREAK:-}" = service-uuid ] && extra+=(--advertise-service 0000180d-0000-1000-8000-00805f9b34fb)
  start_device "the simulated v1 watch" "$sim_now" --days 90 --ground-truth "$truth_json" "${extra[@]}" "$@"
}
# v1_watch [SIMULATOR-ARGS]: the simulated watch advertising on hci1, found by the scan (by its
# service UUID) and paired with the project's agent: the setup of every v1 journey.
v1_watch() {
  adapters_known; forget_bonds
  scan_while_starting "scan finds the watch by its service UUID" 10 start_simulator "$@" -- \
    || { local advertised cause
         advertised=$(grep -m1 -oE 'service [0-9a-f-]{36}' "$sim_log" | cut -d' ' -f2)
         cause="the simulator said: $(grep -m1 advertising "$sim_log")"
         [ -n "$advertised" ] && [ "$advertised" != "$service_uuid" ] && cause="the simulator advertises service $advertised, but tsgateway scans for the watch service $service_uuid"
         fail "the simulated watch ($sim_addr) was not found by its service UUID: $cause"; }
  step "pair with the project's agent" "$T" pair "$sim_addr" --adapter hci0; ok; expect "paired with TS-Sim W10 \($sim_addr\)"
}

# --- tsgateway serve
served() { grep -c "$1" "$serve_log" 2>/dev/null || true; }
# SIGTERM to the daemon; fails if it still runs 20 s later, else $status and $got are its exit.
stop_serve() {
  kill -TERM $serve_pid
  for _ in $(seq 1 200); do kill -0 $serve_pid 2>/dev/null || break; sleep 0.1; done
  kill -0 $serve_pid 2>/dev/null && { kill -9 $serve_pid; fail "tsgateway serve still ran 20 s after SIGTERM"; }
  wait $serve_pid; status=$?; got=$(tail -n 5 "$serve_log"); serve_pid=
}
# wrist_edit_reaches WAIT_FOR CMD...: CMD (alarms watch or events, listening for one change) sees
# an edit made on the watch (SIGUSR1 to the simulator); a second edit if the first was missed.
# WAIT_FOR: a line CMD prints once it listens (the edit is made then), else 8 s. The waits count
# SECONDS, not loop turns: under TCG each turn's sleep costs far more than its 0.1 s.
wrist_edit_reaches() {
  local wait_for=$1 watcher until; shift
  "$@" > "$steps/$n.out" 2>&1 & watcher=$!
  if [ -n "$wait_for" ]; then
    # The edit once it listens: one made before is not an event it can see.
    until=$((SECONDS + 60))
    while ((SECONDS < until)); do grep -q "$wait_for" "$steps/$n.out" && break; kill -0 $watcher 2>/dev/null || break; sleep 0.2; done
  else
    sleep 8   # connect + subscribe (a few seconds under TCG)
  fi
  kill -USR1 "$sim_pid"
  until=$((SECONDS + 30))
  while ((SECONDS < until)); do kill -0 $watcher 2>/dev/null || break; sleep 0.2; done
  if kill -0 $watcher 2>/dev/null; then
    log "[$E2E_MODE] $J $n. the first edit was not seen within 30 s; the watch edits again"
    kill -USR1 "$sim_pid"
    until=$((SECONDS + 20))
    while ((SECONDS < until)); do kill -0 $watcher 2>/dev/null || break; sleep 0.2; done
  fi
  kill $watcher 2>/dev/null; reap $watcher; status=$?; got=$(cat "$steps/$n.out")
  log "[$E2E_MODE] $J $n. $last: status $status"
}

# --- teardown: whatever the journey started, however it ends.
# A journey adds what else it must undo with teardown_also (e.g. stop_example_peer).
teardown_extra=()
teardown_also() { teardown_extra+=("$1"); }
teardown() {
  local rc=$? job f
  trap - EXIT TERM INT
  set +e
  for f in "${teardown_extra[@]}"; do "$f" > /dev/null 2>&1; done
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null
  # Every background job of the journey (simulator, daemon, watchers, scans) and its children.
  # Not a bluetoothd the journey started again (a step's crash recovery, or the journey's own).
  for job in $(jobs -p); do
    [ "$job" = "$(cat /run/bluetoothd.pid 2>/dev/null)" ] && continue
    kill -TERM $(process_tree "$job") 2>/dev/null; reap "$job" 10 > /dev/null 2>&1
  done
  if ! bluetoothd_alive; then
    log "[$E2E_MODE] $J teardown: bluetoothd is not running; starting it again"
    start_bluetoothd || log "[$E2E_MODE] $J teardown: bluetoothd did not show two adapters"
  fi
  forget_bonds
  log "[$E2E_MODE] $J ends (status $rc)"
  exit "$rc"
}
trap teardown EXIT
# Stopped by the runner (its journey deadline): the teardown still runs.
trap 'exit 143' TERM INT
log "[$E2E_MODE] $J begins"
