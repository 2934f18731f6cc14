# SPDX-License-Identifier: MIT
"""asyncio: the event loop pets through the watchdog fd; a blocked loop
withholds keepalives. Real clock (the timerfd follows CLOCK_MONOTONIC),
WatchdogSec 120 ms, so a keepalive is due every 20 ms."""

import asyncio
import os
import signal
import threading
import time

import pytest

import sdlive
from sdlive import Wake


class Receiver:
    """Records the arrival time of every WATCHDOG=1, in a thread."""

    def __init__(self, manager):
        self.m = manager
        self.times = []
        self.done = threading.Event()
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        while not self.done.is_set():
            msg = self.m.recv(0.005)
            if msg == "WATCHDOG=1":
                self.times.append(time.monotonic())

    def stop(self):
        self.done.set()
        self.t.join()
        return self.times


def test_idle_async_pets_from_the_loop(armed):
    m = armed(0.12)
    with sdlive.Supervisor() as sup:
        m.drain()
        rx = Receiver(m)
        t0 = time.monotonic()
        assert asyncio.run(sup.idle_async(0.3)) is Wake.TIMEOUT
        elapsed = time.monotonic() - t0
        times = rx.stop()
    assert 0.29 <= elapsed < 1.0
    # 0.3 s / 20 ms = 15 due; a late callback sends one for several (a
    # loaded machine), never more than one per interval.
    assert 3 <= len(times) <= 17, times
    assert not sup._async  # the reader is gone


def test_a_blocked_event_loop_withholds_keepalives(armed):
    m = armed(0.12)
    with sdlive.Supervisor() as sup:
        m.drain()
        rx = Receiver(m)
        blocked = []

        async def blocker():
            await asyncio.sleep(0.1)
            blocked.append(time.monotonic())
            time.sleep(0.3)             # the event loop is stuck here
            blocked.append(time.monotonic())

        async def main():
            await asyncio.gather(sup.idle_async(0.6), blocker())
        asyncio.run(main())
        times = rx.stop()
    start, end = blocked
    during = [t for t in times if start + 0.03 < t < end - 0.01]
    assert during == [], "keepalives went out while the loop was blocked"
    assert any(t < start for t in times) and any(t > end for t in times)


def test_a_helper_thread_cannot_pet_for_a_blocked_loop_with_progress(armed):
    m = armed(0.12)
    with sdlive.Supervisor() as sup:
        m.drain()
        stop = threading.Event()

        def ticker():
            while not stop.is_set():
                sup.pet()
                time.sleep(0.005)

        async def main():
            async with sup.progress("loop", 0.05) as p:
                t = threading.Thread(target=ticker)
                t.start()
                for _ in range(5):
                    await asyncio.sleep(0.02)
                    p.beat()
                m.drain()
                time.sleep(0.3)         # blocked: the ticker keeps petting
                stop.set()
                t.join()
                return m.drain()
        sent = asyncio.run(main())
    # Keepalives for up to the 50 ms limit, then withheld for good.
    stall = [i for i, x in enumerate(sent) if x.startswith("STATUS=") and "'loop'" in x]
    assert stall, sent
    assert sent.count("WATCHDOG=1") <= 4 and "WATCHDOG=1" not in sent[stall[0]:], sent


def test_request_stop_from_a_thread_ends_idle_async(clean_env):
    with sdlive.Supervisor(pet_interval=0.05) as sup:
        threading.Timer(0.1, sup.request_stop).start()
        t0 = time.monotonic()
        assert asyncio.run(sup.idle_async(None)) is Wake.STOP
        assert time.monotonic() - t0 < 0.5
        assert asyncio.run(sup.idle_async(5)) is Wake.STOP  # stays requested


def test_sigterm_through_the_event_loop(clean_env):
    with sdlive.Supervisor(pet_interval=0.05) as sup:
        async def main():
            sup.add_signal_handlers()
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
            try:
                return await sup.idle_async(5)
            finally:
                loop.remove_signal_handler(signal.SIGTERM)
                loop.remove_signal_handler(signal.SIGINT)
        assert asyncio.run(main()) is Wake.STOP


def test_concurrent_idles_share_one_reader_and_attach_loop(armed):
    m = armed(0.12)
    with sdlive.Supervisor() as sup:
        m.drain()

        async def main():
            sup.attach_loop()
            await asyncio.gather(*(sup.idle_async(0.1) for _ in range(4)))
            assert len(sup._async) == 1
            await asyncio.sleep(0.1)  # attached: still petting
            n = len(m.drain())
            sup.detach_loop()
            with pytest.raises(ValueError):
                sup.detach_loop()
            return n
        n = asyncio.run(main())
        assert n >= 5 and not sup._async


def test_unsupervised_idle_async_and_bad_durations(clean_env):
    with sdlive.Supervisor() as sup:
        assert sup.watchdog_fd() is None
        assert asyncio.run(sup.idle_async(0.01)) is Wake.TIMEOUT
        with pytest.raises(ValueError):
            asyncio.run(sup.idle_async(-1))


def test_forked_child_installs_no_reader(armed):
    m = armed(0.12)
    with sdlive.Supervisor() as sup:
        pid = os.fork()
        if pid == 0:
            ok = asyncio.run(sup.idle_async(0.1)) is Wake.TIMEOUT and not sup._async
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert m.drain() == ["READY=1"]  # the child's idle_async sent nothing


def test_request_stop_from_a_python_signal_handler(clean_env):
    import signal as sig
    with sdlive.Supervisor(pet_interval=0.05) as sup:
        previous = sig.signal(sig.SIGUSR1, lambda *_: sup.request_stop())
        try:
            async def main():
                with sup._async_lock:  # the handler runs while it is held
                    os.kill(os.getpid(), sig.SIGUSR1)
                    for _ in range(100):
                        if sup.stop_requested:
                            break
                        time.sleep(0.001)
                return await sup.idle_async(5)
            assert asyncio.run(main()) is Wake.STOP
        finally:
            sig.signal(sig.SIGUSR1, previous)


def test_library_sigterm_handler_ends_idle_async_within_a_pet_interval(clean_env):
    import signal as sig
    with sdlive.Supervisor(handle_signals=True, pet_interval=0.05) as sup:
        async def main():
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, os.kill, os.getpid(), sig.SIGTERM)
            t0 = time.monotonic()
            r = await asyncio.wait_for(sup.idle_async(None), 2.0)  # not forever
            return r, time.monotonic() - t0
        r, waited = asyncio.run(main())
        assert r is Wake.STOP and waited < 1.0
