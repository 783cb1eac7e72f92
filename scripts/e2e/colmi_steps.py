# Today's steps from a QRing ring, read through colmi-r02-client 0.1.0's own library: that release
# (the only one on PyPI) has no get-steps CLI command, but it ships the steps request
# (steps.GET_TODAY_STEPS_PACKET, command 0x43) and its parser (steps.SportDetailParser), which its
# Client dispatches through COMMAND_HANDLERS. This driver, written for tsgateway's e2e suite
# (scripts/e2e/journeys/qring), puts a parser instance of its own in that table, sends the request and
# prints what the library parsed as JSON. Run with the colmi venv's python:
#
#   colmi_steps.py ADDRESS [SECONDS]   # {"quarters": [{"year":…, "time_index":…, "steps":…}, …]}
#
# It waits for the answer's last packet (index = count − 1) or "no steps" (0xff), at most SECONDS
# (default 20); a timeout fails.
import asyncio
import dataclasses
import json
import sys

from colmi_r02_client import client, steps


def collecting(parser: steps.SportDetailParser):
    """A COMMAND_HANDLERS entry: the library's parser parses; the details of one answer are
    returned (so the Client queues them) once its last packet has come, or [] when the ring says
    it has none (0xff). The parser clears its details after the last packet, so each packet's new
    detail is taken from the list it was appended to."""
    got: list[steps.SportDetail] = []

    def handle(packet: bytearray):
        none = parser.index == 0 and packet[1] == 0xFF
        details, before = parser.details, len(parser.details)
        parser.parse(packet)
        got.extend(details[before:])
        if not none and (packet[1] == 0xF0 or packet[5] != packet[6] - 1):
            return None
        answer = list(got)
        got.clear()
        return answer

    return handle


async def main(address: str, timeout: float) -> None:
    client.COMMAND_HANDLERS[steps.CMD_GET_STEP_SOMEDAY] = collecting(steps.SportDetailParser())
    async with client.Client(address) as ring:
        await ring.send_packet(steps.GET_TODAY_STEPS_PACKET)
        details = await asyncio.wait_for(ring.queues[steps.CMD_GET_STEP_SOMEDAY].get(), timeout)
    print(json.dumps({"quarters": [dataclasses.asdict(d) for d in details]}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 20))
