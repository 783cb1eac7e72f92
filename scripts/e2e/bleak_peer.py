#!/usr/bin/env python3
"""A second central for the e2e figures: bleak (BlueZ over D-Bus, from PyPI) speaking protocol
v1 through the project's Python codec (scripts/v1/v1_codec.py), doing what `tsgateway info` and
`tsgateway sleep sync --since Nd` do on their own link, so the harness can time both against the
same simulated watch in the same VM.

    bleak_peer.py --adapter hci0 --address AA:BB:CC:DD:EE:FF info
    bleak_peer.py --adapter hci0 --address AA:BB:CC:DD:EE:FF sync --since-days 7 --db /tmp/peer.sqlite

Like tsgateway, it connects to a device BlueZ already knows (paired) without scanning; sends
HELLO, DEVICE_INFO, reads the Device Information strings when the watch offers that service and
sets the watch's clock (TIME_SET); `info` then reads BATTERY; `sync` queries with window 8, acks
every ceil(window/2) pages and the last, stores each page in SQLite in its own transaction (WAL,
synchronous=FULL, unique on start and stage, as tsgateway's store) and sends SLEEP_COMMIT for
what it stored. Prints one JSON object: the result and monotonic timings in ms from the start of
the connect (phases: connected, servicesResolved, notificationsAcquired, firstByte, ready,
firstPage, lastPage, committed).
"""

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "v1"))
import v1_codec as v1  # noqa: E402

from bleak_peer_base import PeerLink, ProtocolFailure, Run, acquire_mtu, connect_known, main, open_store  # noqa: E402
SERVICE = "54530001-6777-4e3b-9c2a-7473676174e5"
WRITE = "54530002-6777-4e3b-9c2a-7473676174e5"
NOTIFY = "54530003-6777-4e3b-9c2a-7473676174e5"
DEVICE_INFORMATION = "0000180a-0000-1000-8000-00805f9b34fb"
DEVICE_INFORMATION_STRINGS = [0x2A29, 0x2A24, 0x2A25, 0x2A27, 0x2A26, 0x2A28]
WINDOW = 8
RESPONSE_TIMEOUT = 2.0
PAGE_TIMEOUT = 2.0


class Link(PeerLink):
    """Protocol v1 over one bleak connection: requests one at a time with retransmission,
    frames reassembled from notifications, event acknowledgements."""

    def __init__(self, client, mtu, started):
        super().__init__(client, mtu, started, v1.Reassembler())

    def next_sequence(self):
        sequence = self.sequence
        self.sequence = (self.sequence + 1) & 0xFF
        return sequence

    async def send(self, frame):
        for chunk in v1.fragment(frame, self.mtu):
            await self.client.write_gatt_char(WRITE, chunk, response=False)

    async def receive(self, timeout):
        """The next decoded frame that is not an event (events are acknowledged here)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise asyncio.TimeoutError()
            frame = await asyncio.wait_for(self.frames.get(), remaining)
            kind, sequence, body = v1.decode_message(frame)
            if kind.endswith(".event"):
                await self.send(v1.frame_for(kind.replace(".event", ".eventAck"), sequence, {}))
                continue
            return kind, sequence, body

    async def request(self, kind, body):
        sequence = self.next_sequence()
        frame = v1.frame_for(kind, sequence, body)
        wanted = kind.replace(".request", ".response")
        for _attempt in range(4):
            await self.send(frame)
            try:
                while True:
                    got, got_sequence, got_body = await self.receive(RESPONSE_TIMEOUT)
                    if got_sequence != sequence:
                        continue
                    if got == wanted:
                        return got_body
                    if got.startswith("error."):
                        raise ProtocolFailure(f"{kind}: {got_body['status']}: {got_body['message']}")
            except asyncio.TimeoutError:
                continue
        raise ProtocolFailure(f"{kind}: no response after 4 attempts")


async def run(arguments):
    timing = Run(arguments.command)
    result, phases, phase, started = timing.result, timing.phases, timing.phase, timing.started
    client = await connect_known(arguments, timing)
    link = None
    try:
        if client.services.get_characteristic(WRITE) is None:
            raise ProtocolFailure("the watch does not offer protocol v1")
        mtu = await acquire_mtu(client, timing)  # HELLO tells the watch the central's MTU
        link = Link(client, mtu, started)
        await client.start_notify(NOTIFY, link.notified)
        phase("notificationsAcquired")
        hello = await link.request("hello.request", {"minVersion": 1, "maxVersion": 1, "attMTU": mtu, "maxPayload": 2048})
        phases["firstByte"] = link.first_byte
        info = await link.request("deviceInfo.request", {})
        result["model"] = info["model"]
        result["mtu"] = mtu
        result["maxWindow"] = hello["maxWindow"]
        # A BlueZ peripheral shows bluetoothd's own Device Information service (no strings) beside
        # the application's, so get_service(uuid) refuses ("Multiple Services with this UUID"):
        # read the strings of every such service, as tsgateway does.
        services = [s for s in client.services if s.uuid.lower() == DEVICE_INFORMATION]
        if services:
            strings = {}
            wanted = {f"0000{uuid:04x}-0000-1000-8000-00805f9b34fb" for uuid in DEVICE_INFORMATION_STRINGS}
            for service in services:
                for characteristic in service.characteristics:
                    if characteristic.uuid.lower() in wanted:
                        value = await client.read_gatt_char(characteristic)
                        strings[characteristic.uuid[4:8].upper()] = bytes(value).decode("utf-8", "replace")
            result["deviceInformation"] = strings
        now = time.time()
        offset = time.localtime(now).tm_gmtoff
        zone = os.environ.get("TZ", "")
        await link.request("timeSet.request", {"utc": int(now), "utcOffset": offset, "zone": zone if len(zone.encode()) <= 64 else ""})
        phase("ready")
        if arguments.command == "info":
            battery = await link.request("battery.request", {})
            result["battery"] = battery
        else:
            await sync(link, arguments, result, phase)
    finally:
        await client.disconnect()
    phase("disconnected")
    return result


async def sync(link, arguments, result, phase):
    store = open_store(arguments.db)
    start = int(time.time()) - arguments.since_days * 86_400
    header = await link.request("sleepQuery.request", {"start": start, "window": WINDOW})
    transfer, total, per_page, window = header["transferId"], header["total"], header["recordsPerPage"], header["window"]
    pages = -(-total // per_page) if total else 0
    ack_every = (window + 1) // 2
    expected, received, last_start, timeouts = 0, 0, None, 0
    last_retransmit = {}
    while expected < pages:
        try:
            kind, _sequence, body = await link.receive(PAGE_TIMEOUT)
        except asyncio.TimeoutError:
            timeouts += 1
            if timeouts > 5:
                raise ProtocolFailure(f"no sleep page for {PAGE_TIMEOUT} s, 5 times; {received} of {total} records received")
            await link.send(v1.frame_for("sleepPageAck.request", link.next_sequence(),
                                         {"transferId": transfer, "nextExpected": expected, "retransmit": True}))
            continue
        if kind != "sleepPage.stream" or body["transferId"] != transfer:
            continue
        timeouts = 0
        if body["page"] != expected:
            if body["page"] > expected and time.monotonic() - last_retransmit.get(expected, 0) > 1.0:
                last_retransmit[expected] = time.monotonic()
                await link.send(v1.frame_for("sleepPageAck.request", link.next_sequence(),
                                             {"transferId": transfer, "nextExpected": expected, "retransmit": True}))
            continue
        records = body["records"]
        store.execute("BEGIN")
        store.executemany("INSERT OR IGNORE INTO sleep (start, stage, duration) VALUES (?, ?, ?)",
                          [(r["start"], v1.STAGES.index(r["stage"]), r["duration"]) for r in records])
        store.execute("COMMIT")
        if expected == 0:
            phase("firstPage")
        expected += 1
        received += len(records)
        last_start = records[-1]["start"]
        if expected % ack_every == 0 or body["last"]:
            await link.send(v1.frame_for("sleepPageAck.request", link.next_sequence(),
                                         {"transferId": transfer, "nextExpected": expected, "retransmit": False}))
    phase("lastPage")
    result["fetched"] = received
    if received != total:
        raise ProtocolFailure(f"the transfer ended after {received} of {total} records")
    if last_start is not None:
        end = last_start + 1
        (count,) = store.execute("SELECT COUNT(*) FROM sleep WHERE start >= ? AND start < ?", (start, end)).fetchone()
        committed = await link.request("sleepCommit.request", {"start": start, "end": end, "count": count})
        result["deleted"] = committed["deleted"]
        phase("committed")
    store.close()


if __name__ == "__main__":
    sys.exit(main(__doc__.splitlines()[0], run, [v1.DecodeError], "bleak peer"))
