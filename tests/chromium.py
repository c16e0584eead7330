"""Helpers of the browser tests: finding headless Chromium (skipped locally when it is missing,
failed in CI, where scripts/install-system-deps.sh installs it and the test must run), driving one
page over the DevTools protocol (:class:`DevToolsPage`: scripts, waits, keys, clicks, screenshots)
and serving an ASGI app on a free loopback port in a thread (:func:`serve_app`)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

import pytest

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(msg: str, *, module_level: bool = False) -> None:
    """Fail in CI, skip elsewhere."""
    if in_ci():
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg, allow_module_level=module_level)


def find_chromium(purpose: str) -> str:
    """The Chromium binary (``$FINEGRAIN_CHROMIUM`` or the usual names) for ``purpose``."""
    env = os.environ.get("FINEGRAIN_CHROMIUM")
    candidates = [env] if env else list(CANDIDATES)
    for c in candidates:
        found = shutil.which(c) if c else None
        if found:
            return found
    missing(f"headless Chromium is needed for {purpose} and was not found "
            f"(looked for {', '.join(c for c in candidates if c)}); install it with "
            "`bash scripts/install-system-deps.sh` (apt-get install -y chromium) or set FINEGRAIN_CHROMIUM")
    raise AssertionError("unreachable")


class DevToolsPage:
    """Headless Chromium with one page, driven over the DevTools protocol (clicks, scripts, screenshots).

    ``websockets`` (a test dependency) carries the protocol; missing, the test is skipped locally and
    fails in CI. Use as a context manager; the browser's whole process group is killed on exit.
    """

    FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-extensions", "--mute-audio", "--hide-scrollbars", "--remote-debugging-port=0")

    def __init__(self, binary: str, profile: os.PathLike[str] | str, *, width: int = 1280, height: int = 900) -> None:
        import json
        import subprocess
        import time
        import urllib.request
        from pathlib import Path

        try:
            from websockets.sync.client import connect
        except ImportError:
            missing("the browser test drives Chromium with 'websockets': pip install -e '.[test]'")
        self._json = json
        prof = Path(profile)
        prof.mkdir(parents=True, exist_ok=True)
        self.log = (prof.parent / f"{prof.name}.log").open("wb")
        self.proc = subprocess.Popen([binary, *self.FLAGS, f"--window-size={width},{height}",
                                      f"--user-data-dir={prof}", "about:blank"],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        port_file = prof / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                pytest.fail(f"Chromium did not start its DevTools endpoint; see {self.log.name}", pytrace=False)
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10))
        self._id = 0
        self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def __enter__(self) -> DevToolsPage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, method: str, **params: object) -> dict:  # type: ignore[type-arg]
        self._id += 1
        self.ws.send(self._json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = self._json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def eval(self, expression: str) -> object:
        r = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0) -> object:
        """Evaluate ``expression`` until it is truthy; its value. Fails after ``timeout`` seconds."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {expression}")
            time.sleep(0.05)

    def type(self, text: str) -> None:
        """Key presses, one character at a time, into the focused element."""
        for ch in text:
            self.send("Input.dispatchKeyEvent", type="keyDown", key=ch, text=ch, unmodifiedText=ch)
            self.send("Input.dispatchKeyEvent", type="keyUp", key=ch)

    KEYS = {"Enter": ("Enter", 13, "\r"), "ArrowLeft": ("ArrowLeft", 37, None), "ArrowRight": ("ArrowRight", 39, None),
            "ArrowUp": ("ArrowUp", 38, None), "ArrowDown": ("ArrowDown", 40, None), "Escape": ("Escape", 27, None),
            "Tab": ("Tab", 9, None)}

    def press(self, key: str) -> None:
        """Press and release one key: a name of :attr:`KEYS` (``"Enter"``, ``"ArrowLeft"``, ...) or one character."""
        if key in self.KEYS:
            code, vk, text = self.KEYS[key]
            down: dict[str, object] = {"key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
            if text:
                down["text"] = text
            self.send("Input.dispatchKeyEvent", type="keyDown" if text else "rawKeyDown", **down)
            self.send("Input.dispatchKeyEvent", type="keyUp", **{k: v for k, v in down.items() if k != "text"})
        elif len(key) == 1:
            code = f"Digit{key}" if key.isdigit() else f"Key{key.upper()}" if key.isalpha() else ""
            vk = ord(key.upper())
            self.send("Input.dispatchKeyEvent", type="keyDown", key=key, code=code, text=key, unmodifiedText=key,
                      windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)
            self.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, windowsVirtualKeyCode=vk,
                      nativeVirtualKeyCode=vk)
        else:
            raise ValueError(f"unknown key {key!r}; use one character or one of {sorted(self.KEYS)}")

    def press_enter(self) -> None:
        self.press("Enter")

    def goto(self, url: str) -> None:
        import time

        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while self.eval("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not finish loading")
            time.sleep(0.1)

    def click_at(self, x: float, y: float) -> None:
        """A real mouse click (press and release of the left button) at viewport coordinates."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click(self, selector: str) -> None:
        """Scroll the first element matching ``selector`` into view and click its centre with the mouse."""
        box = self.eval(f"(() => {{ const e = document.querySelector({self._json.dumps(selector)}); if (!e) return null;"
                        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                        " return [r.left + Math.min(r.width / 2, 60), r.top + r.height / 2]; })()")
        if not box:
            raise AssertionError(f"nothing matches {selector!r}")
        x, y = box  # type: ignore[misc]
        self.click_at(x, y)

    def screenshot(self, path: os.PathLike[str] | str) -> None:
        import base64
        from pathlib import Path

        Path(path).write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        import signal
        import subprocess

        stack = getattr(self, "_stack", None)
        if stack is not None:
            stack.close()
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


@contextlib.contextmanager
def serve_app(app: object, *, startup_s: float = 20.0) -> Iterator[str]:
    """Serve the ASGI ``app`` with uvicorn on a free port of 127.0.0.1 in a thread; yields its base URL.

    ``uvicorn`` missing: skipped locally, failed in CI. The server stops (lifespan shutdown run) on exit.
    """
    import socket
    import threading
    import time

    try:
        import uvicorn
    except ImportError:
        missing("the browser test serves its page with 'uvicorn': pip install -e '.[test]'")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))  # type: ignore[arg-type]
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_s
    try:
        while not srv.started:
            if time.monotonic() > deadline or not thread.is_alive():
                pytest.fail(f"uvicorn did not start within {startup_s:.0f} s", pytrace=False)
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()
