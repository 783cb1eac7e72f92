"""garmin-ble 0.3.2's own simulated watch (its SimulatedTransport: multi-link handles, COBS-framed
GFDI, protobuf answers, the watch asking for the time), unmodified, behind a thin BlueZ GATT
adapter on an adapter of this machine: a watch nobody here wrote, for tsgateway's Garmin central
to talk to over the real BlueZ stack. The adapter only carries bytes: the central's writes to the
Multi-Link send characteristic (6a4e2820) go to SimulatedTransport.write, and what the simulated
watch sends becomes notifications of the receive characteristic (6a4e2810); a central's first
write or subscription opens the simulated link, its disconnection closes it.

The D-Bus side is Debian's dbus-python on a GLib main loop, as BlueZ's own example peripherals
(which the e2e's standard-services journey runs) are: registered from dbus_fast, bluetoothd read
none of the advertisement's properties (its GetManagedObjects at the advertisement's own path
leaves that object out). garmin-ble's simulated watch runs on an asyncio loop of its own thread;
writes reach it in order, its notifications come back to the GLib thread.

Usage: garmin_ble_watch.py [--adapter hci1] [--profile fenix7] [--seed 0]
Prints "advertising NAME on ADAPTER" once registered, and a line per link event; runs until
SIGINT or SIGTERM, then prints the counts."""
import argparse
import asyncio
import signal
import sys
import threading

# Debian's python3-dbus and python3-gi, beside the client's virtual environment (garmin-ble's own).
sys.path.append("/usr/lib/python3/dist-packages")
import dbus  # noqa: E402
import dbus.mainloop.glib  # noqa: E402
import dbus.service  # noqa: E402
from gi.repository import GLib  # noqa: E402

from garmin_ble.transport.simulated import SimulatedTransport  # noqa: E402

SERVICE = "6a4e2800-667b-11e3-949a-0800200c9a66"
RECEIVE = "6a4e2810-667b-11e3-949a-0800200c9a66"
SEND = "6a4e2820-667b-11e3-949a-0800200c9a66"
ROOT = "/org/tsgateway/garminble"
BLUEZ = "org.bluez"
PROPERTIES = "org.freedesktop.DBus.Properties"
GATT_SERVICE = "org.bluez.GattService1"
GATT_CHARACTERISTIC = "org.bluez.GattCharacteristic1"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"


def say(text):
    print(text, flush=True)


class Link:
    """The simulated watch's link, on an asyncio loop of its own thread: opened by the central's
    first write or subscription, closed by its disconnection."""

    def __init__(self, profile, seed):
        self.profile, self.seed = profile, seed
        self.transport = None
        self.receive = None
        self.counts = {"links": 0, "writes": 0, "notifications": 0}
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def call(self, coroutine):
        """Runs `coroutine` on the watch's loop and waits for it: writes reach the watch in order."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=10)

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
        data = bytes(packet)
        GLib.idle_add(lambda: self.receive.send(data) and False)

    async def write(self, data):
        await self.ensure_open()
        self.counts["writes"] += 1
        await self.transport.write(data)

    async def close(self):
        if self.transport is not None and self.transport.is_open:
            await self.transport.close()
            say("the central disconnected")


class Application(dbus.service.Object):
    """The GATT application: its ObjectManager lists the service and its characteristics."""

    def __init__(self, bus, objects):
        super().__init__(bus, ROOT)
        self.objects = objects

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {thing.path: thing.interfaces() for thing in self.objects}


class Service(dbus.service.Object):
    def __init__(self, bus, path):
        super().__init__(bus, path)
        self.path = path

    def interfaces(self):
        return {GATT_SERVICE: {"UUID": SERVICE, "Primary": dbus.Boolean(True)}}


class Characteristic(dbus.service.Object):
    def __init__(self, bus, path, service, uuid, flags, link):
        super().__init__(bus, path)
        self.path, self.service, self.uuid, self.flags, self.link = path, service, uuid, flags, link
        self.value = b""

    def interfaces(self):
        return {GATT_CHARACTERISTIC: {"UUID": self.uuid, "Service": dbus.ObjectPath(self.service),
                                      "Flags": dbus.Array(self.flags, signature="s")}}

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.interfaces()[GATT_CHARACTERISTIC]

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        self.link.call(self.link.write(bytes(value)))

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        return dbus.Array(self.value, signature="y")

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StartNotify(self):
        self.link.call(self.link.ensure_open())

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StopNotify(self):
        pass

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def send(self, packet):
        self.value = packet
        self.PropertiesChanged(GATT_CHARACTERISTIC, {"Value": dbus.Array(packet, signature="y")}, [])
        return True


class Advertisement(dbus.service.Object):
    def __init__(self, bus, name):
        self.path = ROOT + "/advertisement0"
        super().__init__(bus, self.path)
        self.name = name

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": "peripheral", "ServiceUUIDs": dbus.Array([SERVICE], signature="s"),
                "LocalName": self.name, "Discoverable": dbus.Boolean(True)}

    @dbus.service.method(ADVERTISEMENT)
    def Release(self):
        pass


def main(arguments):
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    link = Link(arguments.profile, arguments.seed)
    name = SimulatedTransport(profile=arguments.profile).profile.name
    adapter_path = "/org/bluez/" + arguments.adapter
    adapter = bus.get_object(BLUEZ, adapter_path)
    # The adapter carries the watch's name while this runs (what a central reads as the GAP name).
    dbus.Interface(adapter, PROPERTIES).Set("org.bluez.Adapter1", "Alias", name)

    service = Service(bus, ROOT + "/service0")
    receive = Characteristic(bus, ROOT + "/service0/char0", service.path, RECEIVE, ["notify"], link)
    send = Characteristic(bus, ROOT + "/service0/char1", service.path, SEND, ["write", "write-without-response"], link)
    link.receive = receive
    application = Application(bus, [service, receive, send])
    advertisement = Advertisement(bus, name)
    main_loop = GLib.MainLoop()
    failures = []

    def failed(what):
        def report(error):
            failures.append(f"{what}: {error}")
            say(f"{what} failed: {error}")
            main_loop.quit()
        return report

    dbus.Interface(adapter, "org.bluez.GattManager1").RegisterApplication(
        application, {}, reply_handler=lambda: say("GATT application registered"), error_handler=failed("RegisterApplication"))
    dbus.Interface(adapter, "org.bluez.LEAdvertisingManager1").RegisterAdvertisement(
        advertisement.path, {},
        reply_handler=lambda: say(f"advertising {name} on {arguments.adapter}, service {SERVICE} (garmin-ble {arguments.profile}'s simulated watch)"),
        error_handler=failed("RegisterAdvertisement"))

    # A central's disconnection closes the simulated link: any Device1 on this adapter going Connected=false.
    def properties_changed(interface, changed, invalidated, path=None):
        if interface == "org.bluez.Device1" and path and path.startswith(adapter_path + "/dev_") and "Connected" in changed and not changed["Connected"]:
            link.call(link.close())

    bus.add_signal_receiver(properties_changed, dbus_interface=PROPERTIES, signal_name="PropertiesChanged", bus_name=BLUEZ, path_keyword="path")
    for number in (signal.SIGINT, signal.SIGTERM):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, number, lambda: main_loop.quit() or False)
    main_loop.run()
    try:
        dbus.Interface(adapter, "org.bluez.LEAdvertisingManager1").UnregisterAdvertisement(advertisement.path)
    except dbus.DBusException:
        pass
    link.call(link.close())
    say(f"{link.counts['links']} links: {link.counts['writes']} writes received, {link.counts['notifications']} notifications sent")
    say("stopped")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", default="hci1")
    parser.add_argument("--profile", default="fenix7")
    parser.add_argument("--seed", type=int, default=0)
    sys.exit(main(parser.parse_args()))
