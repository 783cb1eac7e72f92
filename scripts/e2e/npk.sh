# Sourced by the NPK journeys (scripts/e2e/journeys/npk*, after journey.sh): the simulated TopStep
# watch speaking NPK (`tsgateway simulate --dialect npk`) on hci1, another seed than the v1 watch's
# so its ground truth differs, and the CLI's link to it.
npk_seed=7 npk_db=/root/npk-$E2E_MODE-$J.sqlite
# With EATT bluetoothd lets notifications overtake one another across its bearers; a frame split
# over two of them fails its CRC and the sync asks again from its cursor (topstep-npk.md section 4):
# the 90-day syncs may ask more often than the CLI's default 5 times.
npk_reconnects=20
npk_service=000001ff-3c17-d293-8e48-14fe2e4da212   # protocol-spec/npk/topstep-npk.md section 1
rm -f "$npk_db"*

start_npk_simulator() {
  start_device "the simulated NPK watch" "$sim_now" --dialect npk --days 90 --seed $npk_seed \
    --ground-truth "$truth_json" ${E2E_NPK_NOTIFICATIONS:+--notification-size $E2E_NPK_NOTIFICATIONS} "$@"
}
# The CLI's own link to the NPK watch: its database, its dialect.
npk() { "$T" "$@" --dialect npk --db "$npk_db"; }

# npk_watch [SIMULATOR-ARGS]: the NPK watch advertising on hci1, found by the scan by NPK's service
# and paired with --dialect npk: the setup of every NPK journey.
npk_watch() {
  adapters_known; forget_bonds
  scan_while_starting "NPK: scan finds the watch by the NPK service" 10 start_npk_simulator "$@" -- --name "TS-Sim NPK" --service "$npk_service" \
    || fail "the simulated NPK watch ($sim_addr, TS-Sim NPK) was not found advertising $npk_service"
  log "[$E2E_MODE] $J $n. $last"
  step "NPK: pair --dialect npk" "$T" pair "$sim_addr" --adapter hci0 --dialect npk --db "$npk_db"; ok
  expect "paired with NPK Simulator \($sim_addr\)"
  grep -q "frames received" "$sim_log" && fail "the simulator stopped"
  return 0
}
