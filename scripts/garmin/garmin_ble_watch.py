"""garmin-ble 0.3.2's own simulated watch (its SimulatedTransport: multi-link handles, COBS-framed
GFDI, protobuf answers, the watch asking for the time), unmodified, behind a thin BlueZ GATT
adapter on an adapter of this machine: a watch nobody here wrote, for tsgateway's Garmin central
to talk to over the real BlueZ stack. The adapter only carries bytes: the central's writes to the
Multi-Link send characteristic (6a4e2820) go to SimulatedTransport.write, and what the simulated
watch sends becomes notifications of the receive characteristic (6a4e2810); a central's first
write or subscription opens the simulated link, its disconnection closes it.

Usage: garmin_ble_watch.py [--adapter hci1] [--profile fenix7] [--seed 0]
Prints "advertising NAME on ADAPTER" once registered, and a line per link event; runs until
SIGINT or SIGTERM, then prints the counts."""
import argparse
import asyncio
import signal
import subprocess
import sys

from dbus_fast import BusType, Message, PropertyAccess, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, dbus_property, method

from garmin_ble.transport.simulated import SimulatedTransport

SERVICE = "6a4e2800-667b-11e3-949a-0800200c9a66"
RECEIVE = "6a4e2810-667b-11e3-949a-0800200c9a66"
SEND = "6a4e2820-667b-11e3-949a-0800200c9a66"
ROOT = "/org/tsgateway/garminble"
#: The advertising instance (none of bluetoothd's clients advertises while this runs).
ADVERTISING_INSTANCE = "1"


def say(text):
    print(text, flush=True)


class Link:
    """The simulated watch's link: opened by the central's first write or subscription."""

    def __init__(self, profile, seed):
        self.profile, self.seed = profile, seed
        self.transport = None
        self.receive = None
        self.counts = {"links": 0, "writes": 0, "notifications": 0}

    async def ensure_open(self):
        if self.transport is not None and self.transport.is_open:
            return
        self.transport = SimulatedTransport(profile=self.profile, seed=self.seed)
        self.transport.on_notify = self.notify
        await self.transport.open()
        await self.transport.start()
        self.counts["links"] += 1
        say("a central is on the link")

    async def notify(self, packet):
        self.counts["notifications"] += 1
        self.receive.send(bytes(packet))

    async def write(self, data):
        await self.ensure_open()
        self.counts["writes"] += 1
        await self.transport.write(bytes(data))

    async def close(self):
        if self.transport is not None and self.transport.is_open:
            await self.transport.close()
            say("the central disconnected")


class Service(ServiceInterface):
    def __init__(self):
        super().__init__("org.bluez.GattService1")

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return SERVICE

    @dbus_property(access=PropertyAccess.READ)
    def Primary(self) -> "b":
        return True


class Characteristic(ServiceInterface):
    def __init__(self, uuid, flags, link):
        super().__init__("org.bluez.GattCharacteristic1")
        self.uuid, self.flags, self.link = uuid, flags, link
        self.value = b""
        self.notifying = False

    @dbus_property(access=PropertyAccess.READ)
    def UUID(self) -> "s":
        return self.uuid

    @dbus_property(access=PropertyAccess.READ)
    def Service(self) -> "o":
        return ROOT + "/service0"

    @dbus_property(access=PropertyAccess.READ)
    def Flags(self) -> "as":
        return self.flags

    @dbus_property(access=PropertyAccess.READ)
    def Value(self) -> "ay":
        return self.value

    @method()
    async def WriteValue(self, value: "ay", options: "a{sv}"):
        await self.link.write(value)

    @method()
    def ReadValue(self, options: "a{sv}") -> "ay":
        return self.value

    @method()
    async def StartNotify(self):
        self.notifying = True
        await self.link.ensure_open()

    @method()
    def StopNotify(self):
        self.notifying = False

    def send(self, packet):
        self.value = packet
        self.emit_properties_changed({"Value": packet})


async def main(arguments):
    link = Link(arguments.profile, arguments.seed)
    name = SimulatedTransport(profile=arguments.profile).profile.name
    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    adapter_path = "/org/bluez/" + arguments.adapter
    service = Service()
    receive = Characteristic(RECEIVE, ["notify"], link)
    send = Characteristic(SEND, ["write", "write-without-response"], link)
    link.receive = receive
    objects = [(ROOT + "/service0", service), (ROOT + "/service0/char0", receive), (ROOT + "/service0/char1", send)]
    for path, obj in objects:
        bus.export(path, obj)
    # GattManager1 reads the application through GetManagedObjects at ROOT: dbus_fast's own answer
    # lists the objects below it, which is the application.

    introspection = await bus.introspect("org.bluez", adapter_path)
    proxy = bus.get_proxy_object("org.bluez", adapter_path, introspection)
    # The adapter carries the watch's name while this runs (what a scan and bluetoothd's cache show).
    properties = proxy.get_interface("org.freedesktop.DBus.Properties")
    await properties.call_set("org.bluez.Adapter1", "Alias", Variant("s", name))
    await proxy.get_interface("org.bluez.GattManager1").call_register_application(ROOT, {})
    # The advertisement goes through the kernel's management interface (btmgmt), not bluetoothd's
    # LEAdvertisingManager1: registered from dbus_fast, bluetoothd advertised an empty,
    # non-connectable set (the e2e's HCI log: Add Ext Adv Params with no flags, no data), as it
    # read none of the advertisement's properties. The name comes from the adapter's alias.
    index = arguments.adapter.removeprefix("hci")
    added = subprocess.run(["btmgmt", "--index", index, "add-adv", "-c", "-g", "-n", "-u", SERVICE, ADVERTISING_INSTANCE],
                           capture_output=True, text=True)
    if added.returncode != 0:
        say(f"btmgmt add-adv failed (status {added.returncode}): {added.stdout.strip()} {added.stderr.strip()}")
        return 1
    say(f"advertising {name} on {arguments.adapter}, service {SERVICE} (garmin-ble {arguments.profile}'s simulated watch)")

    # A central's disconnection closes the simulated link: any Device1 on this adapter going Connected=false.
    def on_message(message):
        if message.member == "PropertiesChanged" and message.path.startswith(adapter_path + "/dev_"):
            interface, changed = message.body[0], message.body[1]
            if interface == "org.bluez.Device1" and "Connected" in changed and not changed["Connected"].value:
                asyncio.ensure_future(link.close())
        return None

    await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
                           member="AddMatch", signature="s",
                           body=["type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"]))
    bus.add_message_handler(on_message)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stop.set)
    await stop.wait()
    subprocess.run(["btmgmt", "--index", index, "rm-adv", ADVERTISING_INSTANCE], stdout=subprocess.DEVNULL)
    await link.close()
    say(f"{link.counts['links']} links: {link.counts['writes']} writes received, {link.counts['notifications']} notifications sent")
    say("stopped")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--profile", default="fenix7")
    parser.add_argument("--seed", type=int, default=0)
    sys.exit(asyncio.run(main(parser.parse_args())))
