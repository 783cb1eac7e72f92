"""What the bleak peers of the e2e figures share (scripts/e2e/bleak_peer.py for protocol v1,
bleak_npk_peer.py for TopStep's NPK): the command line, the connection to a device BlueZ already
knows, the phase clock, the link's notification side, the SQLite store, and the deadline.

The deadline: a peer that hangs must say where. After PEER_DEADLINE every asyncio task's stack
(the line each one awaits) goes to stderr and the process ends at once with status 3, before the
harness's own limit (E2E_PEER_TIMEOUT) stops it with nothing said. It ends with os._exit because a
hung await (a D-Bus call bluetoothd never answers, say) may not end when cancelled either.
"""

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import time
from importlib import metadata

from bleak import BleakClient
from bleak.backends.device import BLEDevice

PEER_DEADLINE = 180  # seconds; below the harness's E2E_PEER_TIMEOUT, so a hung peer says where it waits
HUNG_STATUS = 3


class ProtocolFailure(Exception):
    pass


async def within(seconds, coroutine):
    task = asyncio.ensure_future(coroutine)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if task in done:
        return task.result()
    print(f"peer: still running after {seconds} s; where each task waits:", file=sys.stderr)
    for each in asyncio.all_tasks():
        if each is not asyncio.current_task():
            each.print_stack(limit=12, file=sys.stderr)
    sys.stderr.flush()
    os._exit(HUNG_STATUS)


class PeerLink:
    """One bleak connection's notification side: chunks fed to the dialect's reassembler, each
    whole frame (through `decode`) queued for the requests; the first byte's time kept."""

    def __init__(self, client, mtu, started, reassembler, decode=lambda frame: frame):
        self.client = client
        self.mtu = mtu
        self.started = started
        self.reassembler = reassembler
        self.decode = decode
        self.frames = asyncio.Queue()
        self.sequence = 0
        self.first_byte = None

    def elapsed_ms(self):
        return round((time.monotonic() - self.started) * 1000, 1)

    def notified(self, _characteristic, data):
        if self.first_byte is None:
            self.first_byte = self.elapsed_ms()
        self.reassembler.feed(bytes(data))
        for frame in self.reassembler.frames:
            self.frames.put_nowait(self.decode(frame))
        self.reassembler.frames.clear()


def open_store(path, heart_rate=False):
    """SQLite as tsgateway's store keeps sleep: WAL, synchronous=FULL, unique on start and stage
    (and heart rate unique on time)."""
    store = sqlite3.connect(path, isolation_level=None)
    store.execute("PRAGMA journal_mode = WAL")
    store.execute("PRAGMA synchronous = FULL")
    store.execute("CREATE TABLE IF NOT EXISTS sleep (start INTEGER NOT NULL, stage INTEGER NOT NULL, "
                  "duration INTEGER NOT NULL, UNIQUE (start, stage))")
    if heart_rate:
        store.execute("CREATE TABLE IF NOT EXISTS heart_rate (time INTEGER NOT NULL UNIQUE, bpm INTEGER NOT NULL)")
    return store


class Run:
    """One command's result and its phase clock (ms since the connect began)."""

    def __init__(self, command):
        self.result = {"command": command, "bleak": metadata.version("bleak"), "phases": {}}
        self.phases = self.result["phases"]
        self.started = time.monotonic()

    def phase(self, name):
        self.phases[name] = round((time.monotonic() - self.started) * 1000, 1)


async def connect_known(arguments, run):
    """Connect to a device BlueZ already knows (paired), without scanning, as tsgateway does."""
    address = arguments.address.upper()
    path = f"/org/bluez/{arguments.adapter}/dev_{address.replace(':', '_')}"
    device = BLEDevice(address, None, {"path": path, "props": {}})
    client = BleakClient(device, bluez={"adapter": arguments.adapter})
    await client.connect()
    run.phase("servicesResolved")
    return client


async def acquire_mtu(client, run):
    """The negotiated MTU, from AcquireWrite as tsgateway takes it: right after the connect
    BlueZ's MTU property may still say 23. bleak's BlueZ backend has this as _acquire_mtu (its
    mtu_size warning points to it)."""
    await client._backend._acquire_mtu()
    run.phase("mtuAcquired")
    return client.mtu_size


def main(description, run, errors, label):
    """`PEER --adapter hciN --address ADDR info | sync --since-days N --db FILE`: one JSON object
    on stdout, or `label: error` on stderr and status 1."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--adapter", default="hci0")
    parser.add_argument("--address", required=True)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info")
    sync_parser = sub.add_parser("sync")
    sync_parser.add_argument("--since-days", type=int, default=7)
    sync_parser.add_argument("--db", required=True)
    arguments = parser.parse_args()
    try:
        result = asyncio.run(within(PEER_DEADLINE, run(arguments)))
    except (ProtocolFailure,) + tuple(errors) as error:
        print(f"{label}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0
