"""A deadline for the bleak peers of the e2e figures (scripts/e2e/bleak_peer.py, bleak_npk_peer.py).

A peer that hangs must say where: after the deadline every asyncio task's stack (the line each one
awaits) goes to stderr and the process ends at once with status 3, before the harness's own limit
(E2E_PEER_TIMEOUT) stops it with nothing said. It ends with os._exit because a hung await (a D-Bus
call bluetoothd never answers, say) may not end when cancelled either.
"""

import asyncio
import os
import sys

HUNG_STATUS = 3


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
