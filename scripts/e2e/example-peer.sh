# Sourced by the journeys that use BlueZ's example peripheral (scripts/e2e/journeys/standard-services,
# probe; after journey.sh): Debian's bluez-test-scripts example-gatt-server and
# example-advertisement, run unmodified with /usr/bin/python3 on hci1, started and stopped, and
# stopped by the journey's teardown whatever way it ends.
examples=/usr/share/doc/bluez-test-scripts/examples
gatt_log=$OUT/example-gatt-server-$E2E_MODE.log adv_log=$OUT/example-advertisement-$E2E_MODE.log
gatt_pid= adv_pid= hider=
# Each script registers on the first adapter in bluetoothd's object list with GattManager1 or
# LEAdvertisingManager1, which is hci0 (bluetoothd lists adapters by path). While they start,
# hci0 is taken from bluetoothd (scripts/e2e/hide-adapter: an HCI user channel on it), so hci1
# is the only adapter; then hci0 comes back and is powered on. Restartable: a later step may
# stop the peer and start it again.
start_example_peer() {
  local gatt_before adv_before
  gatt_before=$(grep -c 'GATT application registered' "$gatt_log" 2>/dev/null) adv_before=$(grep -c 'Advertisement registered' "$adv_log" 2>/dev/null)
  "$T" adapter power off --adapter hci0 > /dev/null || fail "could not power hci0 off to hide it from the example scripts"
  /usr/bin/python3 "$E2E_DIR/hide-adapter" hci0 >> "$OUT/hide-adapter-$E2E_MODE.log" 2>&1 & hider=$!
  for _ in $(seq 1 100); do [ "$(adapter_count)" = 1 ] && break; sleep 0.1; done
  [ "$(adapter_count)" = 1 ] || { kill $hider 2>/dev/null; fail "hci0 did not leave bluetoothd: $(tail -n 2 "$OUT/hide-adapter-$E2E_MODE.log"); bluetoothd lists: $(adapter_paths)"; }
  /usr/bin/python3 -u "$examples/example-gatt-server" >> "$gatt_log" 2>&1 & gatt_pid=$!
  /usr/bin/python3 -u "$examples/example-advertisement" >> "$adv_log" 2>&1 & adv_pid=$!
  for _ in $(seq 1 600); do
    [ "$(grep -c 'GATT application registered' "$gatt_log")" -gt "${gatt_before:-0}" ] && \
      [ "$(grep -c 'Advertisement registered' "$adv_log")" -gt "${adv_before:-0}" ] && break
    sleep 0.1
  done
  kill $hider; wait $hider 2>/dev/null; hider=
  wait_adapters 2 20 || fail "hci0 did not come back to bluetoothd"
  "$T" adapter power on --adapter hci0 > /dev/null || fail "could not power hci0 on again"
  [ "$(grep -c 'GATT application registered' "$gatt_log")" -gt "${gatt_before:-0}" ] || fail "example-gatt-server did not register: $(tail -n 3 "$gatt_log")"
  [ "$(grep -c 'Advertisement registered' "$adv_log")" -gt "${adv_before:-0}" ] || fail "example-advertisement did not register: $(tail -n 3 "$adv_log")"
  dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci1 org.freedesktop.DBus.Properties.Get \
    string:org.bluez.LEAdvertisingManager1 string:ActiveInstances | grep -q 'byte 1' || fail "the example advertisement is not on hci1"
  log "[$E2E_MODE] BlueZ's example GATT server and advertisement registered on hci1"
}
stop_example_peer() {
  kill $gatt_pid $adv_pid 2>/dev/null; wait $gatt_pid $adv_pid 2>/dev/null
  gatt_pid= adv_pid=
}
example_recovery() {
  case $1 in
    before) stop_example_peer ;;
    after) start_example_peer ;;
  esac
}
# Teardown: the peer stops, and hci0 is back with bluetoothd, powered, whatever step failed.
example_teardown() {
  stop_example_peer
  [ -n "$hider" ] && { kill $hider; wait $hider; }
  wait_adapters 2 20; "$T" adapter power on --adapter hci0
}
teardown_also example_teardown
