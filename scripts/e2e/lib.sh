# Shared by the guest init and the suite (sourced, bash): the BlueZ stack's processes and the
# suite's step/assert helpers. Everything the suite writes goes to $OUT (the host-visible share).

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
