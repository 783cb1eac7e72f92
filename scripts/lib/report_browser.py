#!/usr/bin/env python3
"""Opens a tsgateway sleep report in headless Chromium and says what the browser made of it.

Drives Debian's `chromium` over the DevTools protocol on a pipe (--remote-debugging-pipe: no
port, no network), with the Python standard library only. It loads the page with light and
with dark colours preferred, and prints one JSON object on standard output:

  consoleErrors   console errors, uncaught exceptions and browser log errors while loading
  requests        every URL the page asked for besides itself (must stay empty: no network)
  charts          counts of svg.chart elements by kind (night, nap, daytime, stage-bars, trend, total, …)
  untitled        charts without a role="img", an aria-label or a <title> first
  unrendered      charts the layout gave no area
  background      the body's background colour with light and with dark preferred
  screenshots     the PNG files written (full page, light; and dark with --dark-png)

Exit status 0 when the page loaded (whatever it holds; the caller judges), 2 when the browser
could not be started or did not load the page in time.

  scripts/lib/report_browser.py REPORT.html --png OUT.png [--dark-png OUT-dark.png] [--width 1100]
"""
import argparse
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    """Chromium with the DevTools protocol on file descriptors 3 (commands) and 4 (replies)."""

    def __init__(self, executable, profile):
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        arguments = [
            executable, "--headless", "--remote-debugging-pipe", f"--user-data-dir={profile}",
            "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--force-color-profile=srgb",
        ]
        # Chromium refuses to run as root without this; CI runs as root.
        if os.geteuid() == 0:
            arguments.append("--no-sandbox")

        def child_setup():
            # Out of the way first, so that neither end lands on the other's number.
            commands, replies = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                        pass_fds=(3, 4), preexec_fn=child_setup)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self.receive(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def receive(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], 0.2)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser closed its DevTools pipe")
                self.buffer += chunk
            elif self.process.poll() is not None:
                raise RuntimeError(f"the browser exited with status {self.process.returncode}")
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method, session, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self.events.remove(event)
                    return event
            self.events.append(self.receive(deadline))

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


INSPECT = """JSON.stringify((() => {
  const charts = [...document.querySelectorAll('svg.chart')];
  const count = {};
  for (const chart of charts) for (const name of chart.classList) if (name !== 'chart') count[name] = (count[name] || 0) + 1;
  return {
    charts: Object.assign({all: charts.length}, count),
    untitled: charts.filter(c => c.getAttribute('role') !== 'img' || !c.getAttribute('aria-label')
                               || !c.firstElementChild || c.firstElementChild.tagName !== 'title').length,
    unrendered: charts.filter(c => { const box = c.getBoundingClientRect(); return box.width < 10 || box.height < 10; }).length,
    background: getComputedStyle(document.body).backgroundColor,
    height: Math.ceil(document.documentElement.scrollHeight),
  };
})())"""


def main():
    parser = argparse.ArgumentParser(description="Load a sleep report in headless Chromium.")
    parser.add_argument("report")
    parser.add_argument("--png", required=True, help="full-page screenshot, light colours")
    parser.add_argument("--dark-png", help="the same with dark colours preferred")
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--max-height", type=int, default=0, help="crop the screenshots to this height (0: the whole page)")
    parser.add_argument("--browser", default=os.environ.get("CHROMIUM", "chromium"))
    options = parser.parse_args()

    executable = shutil.which(options.browser)
    if not executable:
        print(f"report_browser: {options.browser} is not installed (scripts/bootstrap installs Debian's chromium)", file=sys.stderr)
        return 2
    url = pathlib.Path(options.report).resolve().as_uri()
    result = {"consoleErrors": [], "requests": [], "screenshots": [], "background": {}}
    with tempfile.TemporaryDirectory(prefix="tsgateway-chromium-") as profile:
        browser = Browser(executable, profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.send(f"{domain}.enable", session=session)
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": options.width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
            pages = [("light", options.png)] + ([("dark", options.dark_png)] if options.dark_png else [])
            for scheme, png in pages:
                browser.send("Emulation.setEmulatedMedia",
                             {"features": [{"name": "prefers-color-scheme", "value": scheme}]}, session=session)
                browser.events.clear()
                browser.send("Page.navigate", {"url": url}, session=session)
                browser.wait_for("Page.loadEventFired", session, timeout=60)
                # Let the console and network events of the load arrive.
                browser.send("Runtime.evaluate", {"expression": "1"}, session=session)
                for event in browser.events:
                    method, params = event.get("method"), event.get("params", {})
                    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                        text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                        result["consoleErrors"].append(f"{scheme}: console.{params['type']}: {text}")
                    elif method == "Runtime.exceptionThrown":
                        details = params["exceptionDetails"]
                        text = details.get("exception", {}).get("description") or details.get("text", "exception")
                        result["consoleErrors"].append(f"{scheme}: {text}")
                    elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                        entry = params["entry"]
                        result["consoleErrors"].append(f"{scheme}: {entry.get('text', '')} {entry.get('url', '')}".rstrip())
                    elif method == "Network.requestWillBeSent" and params["request"]["url"] != url:
                        result["requests"].append(params["request"]["url"])
                found = json.loads(browser.send("Runtime.evaluate", {"expression": INSPECT, "returnByValue": True},
                                                session=session)["result"]["value"])
                result["background"][scheme] = found.pop("background")
                height = found.pop("height")
                if options.max_height:
                    height = min(height, options.max_height)
                result.update(found)
                shot = browser.send("Page.captureScreenshot", {
                    "format": "png", "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": options.width, "height": height, "scale": 1},
                }, session=session, timeout=60)
                pathlib.Path(png).parent.mkdir(parents=True, exist_ok=True)
                pathlib.Path(png).write_bytes(base64.b64decode(shot["data"]))
                result["screenshots"].append(str(pathlib.Path(png).resolve()))
        except (RuntimeError, TimeoutError, KeyError) as error:
            print(f"report_browser: {error}\n--- chromium's output ---\n{browser.output()[-4000:]}", file=sys.stderr)
            browser.close()
            return 2
        browser.close()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
