#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Test daemons of tests/e2e/python-daemons.sh (not shipped), one per mode:

  asyncio         the event loop pets (attach_loop, idle_async) and
                  nothing else does; once the wedge file exists a callback
                  blocks the loop for good
  asyncio-ticker  as asyncio, plus a helper thread that calls pet() every
                  50 ms and a progress loop beaten by a coroutine: the
                  blocked loop still withholds keepalives
  fork            a child from os.fork() and one from multiprocessing pet
                  and send STATUS= through the inherited Supervisor; the
                  parent wedges 1.5 s after READY=1
  fork-raw        control: the children send WATCHDOG=1 themselves on
                  NOTIFY_SOCKET, which keeps the wedged parent alive

SDLIVE_WEDGE_FILE names the wedge file. Logs to stderr.
"""

import asyncio
import multiprocessing
import os
import socket
import sys
import threading
import time

import sdlive


def log(text):
    sys.stderr.write("<6>e2e-daemon[%d]: %s\n" % (os.getpid(), text))
    sys.stderr.flush()


def wedged():
    path = os.environ.get("SDLIVE_WEDGE_FILE")
    return bool(path) and os.path.exists(path)


def run_asyncio(ticker):
    sup = sdlive.Supervisor()

    async def watch_wedge():
        while not wedged():
            await asyncio.sleep(0.05)
        log("event loop blocked")
        time.sleep(3600)  # blocks the whole event loop

    async def heartbeat(p):
        while True:
            p.beat()
            await asyncio.sleep(0.1)

    def tick():
        while True:
            sup.pet()
            time.sleep(0.05)

    async def main():
        sup.add_signal_handlers()
        sup.attach_loop()
        tasks = [asyncio.ensure_future(watch_wedge())]
        if ticker:
            p = sup.progress("event-loop", 0.3).register()
            tasks.append(asyncio.ensure_future(heartbeat(p)))
            threading.Thread(target=tick, daemon=True).start()
            log("helper thread petting every 50 ms")
        sup.ready()
        sup.status("asyncio daemon running")
        log("ready, watchdog %s" % sup.watchdog_enabled())
        while await sup.idle_async(0.5) != sdlive.Wake.STOP:
            pass
        sup.stopping()
        for t in tasks:
            t.cancel()
    asyncio.run(main())
    sup.close()


def child_loop(sup, raw):
    """Pets for 30 s, as the parent's copy or (raw) on its own socket."""
    target = os.environ.get("NOTIFY_SOCKET", "")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    log("child: supervised=%d watchdog_enabled=%s" % (sup.supervised(), sup.watchdog_enabled()))
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if raw:
            s.sendto(b"WATCHDOG=1", target)
        else:
            sup.pet()
            sup.status("child petting")
        time.sleep(0.05)


def mp_child(sup, raw):
    child_loop(sup, raw)


def run_fork(raw):
    sup = sdlive.Supervisor()
    sup.ready()
    pid = os.fork()
    if pid == 0:
        try:
            child_loop(sup, raw)
        finally:
            os._exit(0)
    mp = multiprocessing.get_context("fork").Process(target=mp_child, args=(sup, raw), daemon=True)
    mp.start()
    log("parent %d: children %d (os.fork) and %d (multiprocessing)" % (os.getpid(), pid, mp.pid))
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        sup.idle(0.1)
    log("parent %d: wedged" % os.getpid())
    time.sleep(3600)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode in ("asyncio", "asyncio-ticker"):
        run_asyncio(mode == "asyncio-ticker")
    elif mode in ("fork", "fork-raw"):
        run_fork(mode == "fork-raw")
    else:
        sys.exit("usage: e2e-daemon.py asyncio|asyncio-ticker|fork|fork-raw")


if __name__ == "__main__":
    main()
