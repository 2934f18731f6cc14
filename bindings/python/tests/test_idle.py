# SPDX-License-Identifier: MIT
"""Tickless idle, stop requests, SIGTERM and wait_fd."""

import errno
import math
import os
import signal
import threading
import time

import pytest

import sdlive
from sdlive import Wake


def test_idle_minute_at_ten_seconds_costs_six_wakeups(armed, fake_sup, clock):
    m = armed(60)
    sup = fake_sup()
    sup.pet()
    m.drain()
    before = clock.wakeups()
    assert sup.idle(60) is Wake.TIMEOUT
    assert clock.wakeups() - before == 6
    assert m.drain() == ["WATCHDOG=1"] * 6


def test_idle_zero_and_unsupervised(clean_env, fake_sup, clock):
    sup = fake_sup()
    before = clock.wakeups()
    assert sup.idle(0) is Wake.TIMEOUT
    assert sup.idle(5) is Wake.TIMEOUT  # not tracked: one sleep
    assert clock.wakeups() - before == 1


def test_pending_stop_returns_at_once(clean_env):
    with sdlive.Supervisor() as sup:
        assert sup.stop_requested is False
        sup.request_stop()
        assert sup.stop_requested is True
        t = time.monotonic()
        assert sup.idle(None) is Wake.STOP
        assert sup.idle(10) is Wake.STOP
        assert time.monotonic() - t < 0.1


def test_stop_from_another_thread_wakes_idle_promptly(clean_env):
    with sdlive.Supervisor() as sup:
        woke = []

        def stopper():
            time.sleep(0.1)
            woke.append(time.monotonic())
            sup.request_stop()
        threading.Thread(target=stopper).start()
        assert sup.idle(None) is Wake.STOP
        # idle(None) has no deadline: it returned for the stop. The bound
        # leaves room for a loaded or sanitised run.
        assert time.monotonic() - woke[0] < 0.5


def test_idle_releases_the_gil(clean_env):
    with sdlive.Supervisor() as sup:
        count = [0]
        done = threading.Event()

        def spin():
            while not done.is_set():
                count[0] += 1
        t = threading.Thread(target=spin)
        t.start()
        time.sleep(0.02)
        before = count[0]
        sup.idle(0.3)
        during = count[0] - before
        done.set()
        t.join()
        assert during > 10000, "the other thread made no progress during idle()"


def test_sigterm_requests_a_stop(clean_env):
    previous = signal.getsignal(signal.SIGTERM)
    sup = sdlive.Supervisor(handle_signals=True)
    try:
        with pytest.raises(sdlive.SdliveError) as e:
            sdlive.Supervisor(handle_signals=True)
        assert e.value.errno == errno.EBUSY
        threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGTERM)).start()
        t = time.monotonic()
        assert sup.idle(10) is Wake.STOP
        assert time.monotonic() - t < 1
        assert sup.stop_requested
    finally:
        sup.close()
    assert signal.getsignal(signal.SIGTERM) == previous
    other = sdlive.Supervisor(handle_signals=True)  # released by close()
    other.close()


def test_wait_fd(clean_env):
    r, w = os.pipe()
    try:
        with sdlive.Supervisor() as sup:
            assert sup.wait_fd(r, seconds_=0.01) is Wake.TIMEOUT
            threading.Timer(0.05, os.write, (w, b"x")).start()
            assert sup.wait_fd(r, seconds_=5) is Wake.FD

            class Wrapper:
                def fileno(self):
                    return r
            assert sup.wait_fd(Wrapper(), seconds_=0) in (Wake.FD, Wake.TIMEOUT)
            with pytest.raises(sdlive.SdliveError) as e:
                sup.wait_fd(-1, seconds_=0)
            assert e.value.errno == errno.EINVAL
            with pytest.raises(ValueError):
                sup.wait_fd(r, events=-1)
            sup.request_stop()
            assert sup.wait_fd(r, seconds_=5) is Wake.STOP
    finally:
        os.close(r)
        os.close(w)


def test_wait_fd_on_a_closed_fd_is_ebadf(clean_env):
    with sdlive.Supervisor() as sup:
        closed = 1000
        with pytest.raises(OSError):
            os.fstat(closed)
        with pytest.raises(sdlive.SdliveError) as e:
            sup.wait_fd(closed, seconds_=1)
        assert e.value.errno == errno.EBADF


@pytest.mark.parametrize("bad,exc", [
    (-1, ValueError), (-0.5, ValueError), (math.nan, ValueError), ("1", TypeError),
    (True, TypeError), (-math.inf, ValueError),
])
def test_idle_rejects_bad_durations(clean_env, bad, exc):
    with sdlive.Supervisor() as sup:
        with pytest.raises(exc):
            sup.idle(bad)


def test_huge_and_infinite_durations_mean_until_stopped(clean_env):
    with sdlive.Supervisor() as sup:
        sup.request_stop()
        assert sup.idle(math.inf) is Wake.STOP
        assert sup.idle(1e30) is Wake.STOP
        assert sup.idle(1 << 70) is Wake.STOP


def test_fake_idle_forever_without_tracking_is_edeadlk(clean_env, fake_sup):
    # The fake clock refuses an endless sleep nothing can end; the binding
    # passes the error on with its errno.
    sup = fake_sup()
    with pytest.raises(sdlive.SdliveError) as e:
        sup.idle(None)
    assert e.value.errno == errno.EDEADLK
