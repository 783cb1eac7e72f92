# Shared by the guest init and the suites it runs (sourced, bash: scripts/e2e/suite, its journeys, figures-suite
# and what they source): the BlueZ stack's processes, the simulated peripheral's, and the bounded
# steps. Everything a suite writes goes to $OUT (the host-visible share).

log() { echo "E2E[$(cut -d' ' -f1 /proc/uptime)s] $*"; }

# The adapters bluetoothd shows on the system bus, and their number: the object paths that are
# keys of GetManagedObjects' reply (a device's Adapter property is a "variant object path").
adapter_paths() {
  dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>&1 \
    | grep -oE '^ *object path "/org/bluez/hci[0-9]+"$|^Error.*' | tr -s ' \n' ' '
}
adapter_count() {
  dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null \
    | grep -cE '^ *object path "/org/bluez/hci[0-9]+"$'
}

# Waits until bluetoothd shows $1 adapters (default 2), at most $2 seconds (default 20).
wait_adapters() {
  local want=${1:-2} deadline=$((SECONDS + ${2:-20})) n
  while [ $SECONDS -lt $deadline ]; do
    n=$(adapter_count); [ "${n:-0}" -ge "$want" ] && return 0; sleep 0.2
  done
  return 1
}

# bluetoothd with the configuration of ATT mode $E2E_MODE (eatt: BlueZ's default; att: Channels=1).
start_bluetoothd() {
  local conf=/run/e2e-main-$E2E_MODE.conf
  local args=(-n -f "$conf")
  if [ "$E2E_MODE" = att ]; then printf '[GATT]\nChannels = 1\n' > "$conf"; else printf '[GATT]\n' > "$conf"; fi
  [ "${E2E_DEBUG:-0}" = 1 ] && args+=(-d)
  if [ "${E2E_GDB:-0}" = 1 ]; then  # a backtrace in the log if bluetoothd crashes
    gdb -q -batch -ex run -ex bt --args bluetoothd "${args[@]}" >> "$OUT/bluetoothd-$E2E_MODE.log" 2>&1 &
  else
    bluetoothd "${args[@]}" >> "$OUT/bluetoothd-$E2E_MODE.log" 2>&1 &
  fi
  echo $! > /run/bluetoothd.pid
  wait_adapters 2 "${1:-20}"
}

stop_bluetoothd() {
  local pid; pid=$(cat /run/bluetoothd.pid 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null; rm -f /run/bluetoothd.pid
}

bluetoothd_alive() { kill -0 "$(cat /run/bluetoothd.pid 2>/dev/null)" 2>/dev/null; }

# E2E_ANSWER_TIMING=immediate|before-response|late|late:MS: every simulated peripheral a journey
# starts answers so (`simulate --answer-timing`, issue 47); unset, each answers at once.
answer_timing=(); [ -n "${E2E_ANSWER_TIMING:-}" ] && answer_timing=(--answer-timing "$E2E_ANSWER_TIMING")

# The simulated peripheral on hci1, for every runner (suite, figures-suite) and what they source
# (peer-figures, npk-peer-figures); each runner sets $sim_log and $sim_pid and defines fail. These
# were the suite's own until figures-suite's peer-figures called them: "command not found" and
# "peer_recovery: unbound variable" in both VMs (scripts/e2e/selftest checks every call).
stop_simulator() { kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null; }
# start_device WHAT NOW [SIMULATE-ARGS...]: `tsgateway simulate --adapter hci1 SIMULATE-ARGS` with
# the journeys' --answer-timing and its clock at NOW, in the background ($sim_pid), its output
# appended to $sim_log; returns once it says it advertises anew (30 s at most), else fails saying
# WHAT did not and what it printed last. Every journey's simulated device starts so.
start_device() {
  local what=$1 now=$2 before; shift 2
  before=$(grep -c "advertising on" "$sim_log" 2>/dev/null)
  TSGATEWAY_SIMULATOR_NOW=$now "$T" simulate --adapter hci1 "${answer_timing[@]}" "$@" >> "$sim_log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 1 300); do
    [ "$(grep -c "advertising on" "$sim_log" 2>/dev/null)" -gt "${before:-0}" ] && return 0
    kill -0 $sim_pid 2>/dev/null || break; sleep 0.1
  done
  fail "$what did not start advertising: $(tail -n 3 "$sim_log")"
}
# Waits until the simulator has registered with a restarted bluetoothd $1 times in all.
wait_simulator_registered() {
  for _ in $(seq 1 300); do
    [ "$(grep -c 'registered again' "$sim_log")" -ge "$1" ] && return 0; sleep 0.1
  done
  fail "the simulator did not register with the restarted bluetoothd"
}
# How the peer on hci1 comes back after bluetoothd was started again: "$peer_recovery before"
# runs before the new bluetoothd starts, "$peer_recovery after" once it runs. The simulator
# registers again by itself; the suite's example-peer section sets its own.
simulator_recovery() {
  case $1 in
    before) registrations_before=$(grep -c 'registered again' "$sim_log") ;;
    after) wait_simulator_registered $((registrations_before + 1)) ;;
  esac
}
peer_recovery=simulator_recovery

# A process and all its descendants, parents first.
process_tree() {
  local child; echo "$1"
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do process_tree "$child"; done
}

# ends_within LIMIT PID: waits until PID has ended, at most LIMIT seconds; fails if it still runs.
ends_within() { timeout "$1" tail -s 0.2 --pid="$2" -f /dev/null; }

# run_bounded LIMIT OUT CMD...: runs CMD (a program or a shell function) with stdout and stderr in
# OUT and returns its status; if it still runs after LIMIT seconds, appends what its processes were
# doing to OUT, stops the whole tree (TERM, KILL 5 s later) and returns 124 as timeout(1) does.
# timeout(1) cannot run a shell function, and no step may hang the VM until the harness's deadline:
# CI lost a whole run so, with nothing to say which command hung.
run_bounded() {
  local limit=$1 out=$2 pid tree p; shift 2
  "$@" > "$out" 2>&1 &
  pid=$!
  if ends_within "$limit" "$pid"; then wait "$pid"; return; fi
  tree=$(process_tree "$pid" | paste -sd ' ')
  {
    echo "--- e2e: still running after $limit s, stopped; its processes:"
    ps -o pid,ppid,stat,etime,wchan:20,args -p "${tree// /,}" | cut -c1-200
    for p in $tree; do
      # A hung tsgateway's threads (where a lock or a blocking call holds one).
      [ "$(cat /proc/$p/comm 2>/dev/null)" = tsgateway ] || continue
      echo "--- threads of tsgateway $p"
      timeout 60 gdb -q -batch -p "$p" -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)' | head -n 120
    done
  } >> "$out" 2>&1
  kill -TERM $tree 2>/dev/null; sleep 5; kill -KILL $tree 2>/dev/null
  wait "$pid" 2>/dev/null
  return 124
}

# reap PID [LIMIT]: waits for a background job of this shell at most LIMIT seconds (default 60) and
# returns its status; one still running then is killed with its children and counts as 124.
reap() {
  local pid=$1
  if ends_within "${2:-60}" "$pid"; then wait "$pid"; return; fi
  kill -KILL $(process_tree "$pid") 2>/dev/null; wait "$pid" 2>/dev/null
  return 124
}

# The status a journey (scripts/e2e/journeys/*) exits with when it does not apply (a mode it does
# not run in, a peer that could not be installed): the runner (scripts/e2e/suite) lists it skipped.
E2E_SKIPPED=75
