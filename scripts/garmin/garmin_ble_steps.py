"""garmin-ble 0.3.2 (PyPI, AGPL-3.0; scripts/garmin/e2e-client-requirements.txt), a Garmin central
this project did not write, against the simulated watch over the real BlueZ stack: it connects
(CLOSE_ALL, GFDI registered), takes the watch's DEVICE_INFORMATION, answers the watch's time
requests, and sends TIME_UPDATED (its sync_time) until the watch asks again and is answered.
Prints one JSON object: the name, model and firmware garmin-ble read, and whether a time request
after its sync_time was answered. Usage: garmin_ble_steps.py ADDRESS"""
import asyncio
import json
import sys

from garmin_ble import Watch
from garmin_ble import events as ev


async def main(address):
    async with Watch.at(address, heartbeat=None, reconnect="off", connect_timeout=30) as watch:
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
        print(json.dumps({"name": watch.info.name, "model": watch.info.model, "firmware": watch.info.firmware,
                          "timeAnswered": answered.is_set()}))
        return 0 if answered.is_set() else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
