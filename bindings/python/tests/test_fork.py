# SPDX-License-Identifier: MIT
"""The fork rule in Python children: os.fork and multiprocessing."""

import multiprocessing
import os

import pytest

import sdlive


def child_report(sup, clock):
    clock.advance(100)
    return (sup.owned, sup.supervised(), sup.watchdog_enabled(), sup.pet(), sup.ready(),
            sup.status("child"), sup.watchdog_trigger())


def test_os_fork_child_speaks_for_nobody(armed, fake_sup, clock):
    m = armed(6)
    sup = fake_sup()
    sup.pet()
    m.drain()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.write(w, repr(child_report(sup, clock)).encode())
            sup.close()
        finally:
            os._exit(0)
    os.close(w)
    report = os.read(r, 4096).decode()
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    assert report == repr((False, False, None, False, False, False, False))
    assert m.drain() == []
    clock.advance(1)
    assert sup.pet() is True and m.drain() == ["WATCHDOG=1"]


def _mp_child(sup, queue):
    from conftest import FakeClock
    queue.put(child_report(sup, FakeClock()))
    # a new Supervisor in the child does speak for the service
    fresh = sdlive.Supervisor()
    queue.put(fresh.status("fresh child"))
    fresh.close()


def test_multiprocessing_fork_child(armed, fake_sup, clock):
    m = armed(6)
    sup = fake_sup()
    sup.pet()
    m.drain()
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_mp_child, args=(sup, q))
    p.start()
    report, fresh = q.get(timeout=10), q.get(timeout=10)
    p.join(10)
    assert p.exitcode == 0
    assert report == (False, False, None, False, False, False, False)
    assert fresh is True
    assert m.drain() == ["STATUS=fresh child"]


def test_stop_in_the_child_stops_only_the_child(clean_env):
    with sdlive.Supervisor() as sup:
        pid = os.fork()
        if pid == 0:
            sup.request_stop()
            code = 0 if sup.idle(10) == sdlive.Wake.STOP else 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert sup.stop_requested is False
        assert sup.idle(0.01) is sdlive.Wake.TIMEOUT


def test_a_pickled_supervisor_is_refused():
    import pickle
    with sdlive.Supervisor() as sup:
        with pytest.raises(TypeError):
            pickle.dumps(sup)
