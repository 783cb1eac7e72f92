#!/usr/bin/env python3
"""A second central for the e2e figures of TopStep's NPK dialect: bleak (BlueZ over D-Bus, from
PyPI) speaking NPK through the project's independent Python codec (scripts/npk/npk_codec.py, Google's
protobuf runtime), doing what `tsgateway info --dialect npk` and `tsgateway sleep sync --since Nd
--dialect npk` do on their own link, so the harness can time both against the same simulated
watch in the same VM.

    bleak_npk_peer.py --adapter hci0 --address AA:BB:CC:DD:EE:FF info
    bleak_npk_peer.py --adapter hci0 --address AA:BB:CC:DD:EE:FF sync --since-days 7 --db /tmp/peer.sqlite

Like tsgateway, it connects to a device BlueZ already knows (paired) without scanning, switches
notifications on, logs in (03/02, the user id tsgateway binds with; a refused login binds, 03/01,
as tsgateway does), reads the device information
(02/02) and sets the clock (03/05); `info` then reads the battery (03/09); `sync` asks for the
heart-rate history (05/21 type 1: list frames 05/01, then 05/22) and the sleep days (05/21 type
5: list frames 05/05, then 05/22) of the range, stores each day in SQLite in its own transaction
(WAL, synchronous=FULL, unique on start and stage; heart rate unique on time) and takes days in
index order whatever order they arrive in. NPK takes no acknowledgement. Prints one JSON object:
the result and monotonic timings in ms from the start of the connect (phases: servicesResolved,
mtuAcquired, notificationsAcquired, firstByte, ready, firstPage, lastPage, committed).
"""

import asyncio
import calendar
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "npk"))
import npk_codec as npk  # noqa: E402

from bleak_peer_base import PeerLink, ProtocolFailure, Run, acquire_mtu, connect_known, main, open_store  # noqa: E402
# protocol-spec/npk/topstep-npk.md section 1.
SERVICE = "000001ff-3c17-d293-8e48-14fe2e4da212"
WRITE = "0000ff02-0000-1000-8000-00805f9b34fb"
NOTIFY = "0000ff03-0000-1000-8000-00805f9b34fb"
USER_ID = "tsgateway"
SYNC_HEART_RATE, SYNC_SLEEP = 1, 5
RESPONSE_TIMEOUT = 2.0
DAY_TIMEOUT = 5.0
T2000 = calendar.timegm((2000, 1, 1, 0, 0, 0))


class Link(PeerLink):
    """NPK over one bleak connection: frames reassembled from notifications (resynchronising on
    0xAB), one request at a time matched by cmd, key and sequence, everything else queued."""

    def __init__(self, client, mtu, started):
        super().__init__(client, mtu, started, npk.Reassembler(), npk.decode_frame)

    def next_sequence(self):
        self.sequence = self.sequence % 0xFFFF + 1
        return self.sequence

    async def send(self, frame):
        for chunk in npk.chunk(frame, self.mtu - 3):
            await self.client.write_gatt_char(WRITE, chunk, response=False)

    async def receive(self, timeout):
        return await asyncio.wait_for(self.frames.get(), timeout)

    async def request(self, command, body):
        sequence = self.next_sequence()
        cmd, key = npk.COMMANDS[command][:2]
        payload = npk.encode_body(command, "central", body)
        for attempt in range(4):
            flags = npk.FLAG_RETRANSMISSION if attempt else 0
            await self.send(npk.build_frame(cmd, key, sequence, payload, flags))
            deadline = time.monotonic() + RESPONSE_TIMEOUT
            try:
                while True:
                    frame = await self.receive(max(0.0, deadline - time.monotonic()))
                    if (frame["cmd"], frame["key"], frame["sequence"]) == (cmd, key, sequence):
                        return frame, npk.decode_body(command, "watch", frame["payload"])
            except asyncio.TimeoutError:
                continue
        raise ProtocolFailure(f"{command}: no answer after 4 attempts")


def t2000(unix):
    return int(unix) - T2000


def time_model():
    now = time.time()
    return {"timestamp": t2000(now), "zone_offset": time.localtime(now).tm_gmtoff}


async def run(arguments):
    timing = Run(arguments.command)
    result, phases, phase, started = timing.result, timing.phases, timing.phase, timing.started
    client = await connect_known(arguments, timing)
    try:
        if client.services.get_characteristic(WRITE) is None:
            raise ProtocolFailure("the watch does not offer the NPK service")
        mtu = await acquire_mtu(client, timing)
        link = Link(client, mtu, started)
        await client.start_notify(NOTIFY, link.notified)
        phase("notificationsAcquired")
        param = {"user_id": USER_ID, "system": 1, "version": "1", "brand": "tsgateway", "model": "gateway",
                 "auth_code": "", "time": time_model()}
        _, auth = await link.request("login", param)
        phases["firstByte"] = link.first_byte
        if auth["result"] == 1:
            # Bound to nobody or another user id: bind, as tsgateway does when a login is refused;
            # after a bind the sequence starts again from 1.
            _, auth = await link.request("bind", param)
            link.sequence = 0
        if auth["result"] not in (0, 4):
            raise ProtocolFailure(f"login and bind refused with result {auth['result']}")
        _, info = await link.request("deviceInfo", {})
        result["model"] = info.get("model")
        result["mtu"] = mtu
        _, clock = await link.request("timeSet", time_model())
        if clock.get("result", 0) != 0:
            raise ProtocolFailure(f"the clock was refused with result {clock['result']}")
        phase("ready")
        if arguments.command == "info":
            _, battery = await link.request("battery", {})
            result["battery"] = npk.battery_status(battery)
        else:
            await sync(link, arguments, result, phase)
    finally:
        await client.disconnect()
    phase("disconnected")
    return result


async def list_transfer(link, sync_type, element_command, start, end, store_element):
    """05/21 of `sync_type`, then its list frames, stored in index order, until 05/22. Returns
    the number of elements."""
    start_frame, answer = await link.request("syncStart", {"start": t2000(start), "end": t2000(end), "type": sync_type})
    if answer["result"] == 1:
        return 0
    if answer["result"] != 0:
        raise ProtocolFailure(f"the sync of type {sync_type} was refused with result {answer['result']}")
    sequence = start_frame["sequence"]
    cmd, key = npk.COMMANDS[element_command][:2]
    end_cmd, end_key = npk.COMMANDS["syncEnd"][:2]
    waiting, total, taken, ended = {}, None, 0, False
    while not ended or total is None or taken < total:
        try:
            frame = await link.receive(DAY_TIMEOUT)
        except asyncio.TimeoutError:
            raise ProtocolFailure(f"no day for {DAY_TIMEOUT} s: {taken} of {total} taken (type {sync_type})")
        if (frame["cmd"], frame["key"]) == (end_cmd, end_key):
            if npk.decode_body("syncEnd", "watch", frame["payload"]).get("type") == sync_type:
                ended = True
                if total is None:
                    break
            continue
        if (frame["cmd"], frame["key"]) != (cmd, key) or frame["sequence"] != sequence or not frame["flags"] & npk.FLAG_LIST:
            continue
        header, element = npk.split_list_payload(frame["payload"])
        total = header["total"]
        waiting[header["index"]] = element
        # Days that overtook one another (EATT) wait for their turn.
        while taken in waiting:
            store_element(taken, npk.decode_body(element_command, "watch", waiting.pop(taken)))
            taken += 1
    return taken


async def sync(link, arguments, result, phase):
    store = open_store(arguments.db, heart_rate=True)
    end = int(time.time()) + 1
    start = end - 1 - arguments.since_days * 86_400
    counts = {"heartRate": 0, "fetched": 0}

    def store_heart_rate_day(_index, day):
        samples, _rejected = npk.heart_rate_samples(day)
        store.execute("BEGIN")
        store.executemany("INSERT OR IGNORE INTO heart_rate (time, bpm) VALUES (?, ?)",
                          [(s["time"], s["bpm"]) for s in samples if start <= s["time"] < end])
        store.execute("COMMIT")
        counts["heartRate"] += sum(1 for s in samples if start <= s["time"] < end)

    def store_sleep_day(index, day):
        records, _rejected = npk.sleep_day_records(day)
        records = [r for r in records if start <= r["start"] < end]
        store.execute("BEGIN")
        store.executemany("INSERT OR IGNORE INTO sleep (start, stage, duration) VALUES (?, ?, ?)",
                          [(r["start"], npk.STAGES.index(r["stage"]), r["duration"]) for r in records])
        store.execute("COMMIT")
        if index == 0:
            phase("firstPage")
        counts["fetched"] += len(records)

    try:
        result["heartRateDays"] = await list_transfer(link, SYNC_HEART_RATE, "heartRateData", start, end, store_heart_rate_day)
    except ProtocolFailure as error:
        # As tsgateway: a watch that refuses its heart-rate history still hands over its sleep.
        result["heartRateError"] = str(error)
    result["days"] = await list_transfer(link, SYNC_SLEEP, "sleepData", start, end, store_sleep_day)
    phase("lastPage")
    result["fetched"] = counts["fetched"]
    result["heartRateFetched"] = counts["heartRate"]
    # NPK takes no acknowledgement: the last day's commit is the end.
    phase("committed")
    store.close()


if __name__ == "__main__":
    sys.exit(main(__doc__.splitlines()[0], run, [npk.NpkError], "bleak NPK peer"))
