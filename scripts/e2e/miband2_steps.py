"""miband2 0.1.1 (PyPI, a client this project did not write) against the simulated Huami band:
its own API over its own bleak (0.20.1, BlueZ over D-Bus), one link, one JSON line a step with
what the library returned. The journey (scripts/e2e/journeys/huami-miband2) compares each with
what the simulated band says it did (`checks.py miband2-vs-band`).

    python miband2_steps.py ADDRESS KEY_HEX [ADAPTER]
"""
import asyncio
import calendar
import json
import sys
from datetime import datetime

import bleak
from miband2 import Band2, Key


class RetryingBand2(Band2):
    """bleak's BlueZ backend gives up when the link drops during service discovery ("failed to
    discover services, device disconnected"); in a loaded TCG VM it did once (CI run before stop 41,
    att, step 2). Up to three connects, as a person would try again; nothing else is retried."""

    async def __aenter__(self):
        for attempt in (1, 2, 3):
            try:
                return await super().__aenter__()
            except bleak.exc.BleakError as error:
                if attempt == 3 or "disconnected" not in str(error):
                    raise
                print(f"connect attempt {attempt}: {error}; trying again", file=sys.stderr, flush=True)
                await asyncio.sleep(2)


def say(step, **fields):
    print(json.dumps({"step": step, **fields}, default=str), flush=True)


async def main(address, key_hex, adapter):
    key = Key(key=bytes.fromhex(key_hex))
    wrong = Key(key=bytes(reversed(bytes.fromhex(key_hex))))
    client = bleak.BleakClient(address, adapter=adapter, timeout=30)
    async with RetryingBand2(client) as band:
        say("auth-wrong-key", status=(await band.auth(wrong)).name)
        say("auth", status=(await band.auth(key)).name)

        when = datetime(2026, 1, 2, 3, 4, 5)
        await band.set_datetime(when)
        say("set-datetime", sent=when.isoformat())
        read = await band.get_datetime()
        # miband2 puts the day-of-week byte into the microseconds: only whole seconds are the band's.
        say("get-datetime", read=read.replace(microsecond=0).isoformat())

        battery = await band.get_battery()
        say("get-battery", level=battery["level"], status=battery["status"],
            last_off=battery["last_off"].isoformat(), last_charge=battery["last_charge"].isoformat())

        await band.set_regular_alarm(2, 7, 30, [calendar.MONDAY, calendar.FRIDAY])
        say("set-regular-alarm", slot=2, time="07:30", days="Mon,Fri")
        await band.set_onetime_alarm(3, 22, 15)
        say("set-onetime-alarm", slot=3, time="22:15")
        await band.set_onetime_alarm(4, 5, 0)
        await band.unset_alarm(4)
        say("unset-alarm", slot=4)

        reading = asyncio.get_running_loop().create_future()
        await band.request_heartbeat(lambda bpm: reading.done() or reading.set_result(bpm))
        say("request-heartbeat", bpm=await asyncio.wait_for(reading, 20))
        # The writes above go without response: one read makes sure the band has taken them all
        # before the link ends.
        await band.get_battery()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "hci0"))
