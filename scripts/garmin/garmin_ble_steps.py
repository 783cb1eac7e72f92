"""garmin-ble 0.3.2 (PyPI, AGPL-3.0; scripts/garmin/e2e-client-requirements.txt), a Garmin central
this project did not write, against the simulated watch over the real BlueZ stack: it connects
(CLOSE_ALL, GFDI registered), takes the watch's DEVICE_INFORMATION, answers the watch's time
requests, and sends TIME_UPDATED (its sync_time) until the watch asks again and is answered; reads
its battery (a PROTOBUF request); then streams the watch's live heart rate (multi-link service 6)
for three readings. Prints one JSON object: the name, model and firmware garmin-ble read, the
battery, whether a time request after its sync_time was answered, and the heart rates it read. Usage: garmin_ble_steps.py ADDRESS"""
import asyncio
import json
import sys

from garmin_ble import Watch
from garmin_ble import events as ev
from garmin_ble.errors import ConnectionFailed, RequestTimeout
from garmin_ble.metrics import HEART_RATE


async def main(address):
    """Up to three connects when bluetoothd drops the new link during service discovery (bleak:
    "failed to discover services, device disconnected"; BlueZ 5.66's, docs/testing.md), as a
    person would try again; once connected nothing is retried."""
    for attempt in (1, 2, 3):
        connected = []
        try:
            return await steps(address, connected)
        except ConnectionFailed as error:
            if connected or attempt == 3 or "failed to discover services" not in str(error):
                raise
            print(f"connect attempt {attempt}: {error}; trying again", file=sys.stderr, flush=True)
            await asyncio.sleep(2)


async def steps(address, connected):
    async with Watch.at(address, heartbeat=None, reconnect="off", connect_timeout=30) as watch:
        connected.append(True)
        # DEVICE_INFORMATION upgrades watch.info in place shortly after the handshake.
        for _ in range(100):
            if watch.info.firmware != "unknown":
                break
            await asyncio.sleep(0.1)
        answered = asyncio.Event()

        async def listen():
            async for event in watch.events():
                if isinstance(event, ev.TimeSyncRequested):
                    answered.set()

        listener = asyncio.ensure_future(listen())
        await asyncio.sleep(0.2)
        await watch.sync_time()
        try:
            await asyncio.wait_for(answered.wait(), 15)
        except asyncio.TimeoutError:
            pass
        listener.cancel()
        # The battery (PROTOBUF). garmin-ble acknowledges the answer twice (a RESPONSE and a PROTOBUF
        # status) from two tasks at once, writing each in 20-byte slices that interleave: the watch
        # refuses what that breaks, after the answer was read (docs/testing.md).
        try:
            reading = await watch.battery(timeout=10)
            battery = {"percent": reading.percent, "status": reading.status}
        except RequestTimeout:
            # Under EATT its request's two 20-byte slices can overtake each other and the watch
            # refuses the frame they break (docs/testing.md); the caller decides whether that may be.
            battery = None
        rates = []

        async def take():
            async for reading in watch.stream(HEART_RATE):
                rates.append(reading.bpm)
                if len(rates) == 3:
                    return

        try:
            await asyncio.wait_for(take(), 20)
        except asyncio.TimeoutError:
            pass
        print(json.dumps({"name": watch.info.name, "model": watch.info.model, "firmware": watch.info.firmware,
                          "battery": battery,
                          "timeAnswered": answered.is_set(), "heartRates": rates}))
        return 0 if answered.is_set() and len(rates) == 3 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
