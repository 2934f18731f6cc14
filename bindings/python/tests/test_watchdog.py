# SPDX-License-Identifier: MIT
"""Rate-limited pets on the fake clock; the watchdog environment."""

import errno
import os
import threading
import time

import pytest

import sdlive


def test_armed_interval_is_a_sixth_and_pets_are_rate_limited(armed, fake_sup, clock):
    m = armed(6)
    sup = fake_sup()
    assert sup.watchdog_enabled() == 6.0
    assert sup.pet_interval == 1.0
    assert sup.pet() is True          # due at once after the clock change
    assert sup.pet() is False         # not due again within the interval
    clock.advance(0.999)
    assert sup.pet() is False
    clock.advance(0.001)
    assert sup.pet() is True
    assert m.drain() == ["WATCHDOG=1", "WATCHDOG=1"]
    assert abs(sup.next_due - (clock.now() + 1.0)) < 1e-6
    clock.advance(0.25)
    assert abs(sup.last_pet_age() - 0.25) < 1e-6


def test_microsecond_watchdog_sec(armed, fake_sup, clock):
    m = armed(0.5)  # 500 ms: no integer-second truncation
    sup = fake_sup()
    assert sup.watchdog_enabled() == 0.5
    assert abs(sup.pet_interval - 0.5 / 6) < 1e-6
    sup.pet()
    for _ in range(5):
        clock.advance(0.5 / 6)
        assert sup.pet() is True
    assert m.drain().count("WATCHDOG=1") == 6


def test_threads_send_one_keepalive_per_interval(armed, fake_sup, clock):
    m = armed(60)
    sup = fake_sup()
    sup.pet()
    m.drain()
    sent = []
    start = threading.Barrier(8)

    def petter():
        start.wait()
        sent.append(sum(sup.pet() for _ in range(2000)))

    for _ in range(3):
        clock.advance(10)
        threads = [threading.Thread(target=petter) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sum(sent) == 3
    assert m.drain() == ["WATCHDOG=1"] * 3


def test_watchdog_pid_of_another_process_is_unarmed(armed, fake_sup, clock):
    m = armed(6, pid=os.getpid() + 1)
    sup = fake_sup()
    assert sup.watchdog_enabled() is None
    clock.advance(10)
    assert sup.pet() is False
    assert m.drain() == []


def test_watchdog_pid_of_this_process_is_armed(armed, fake_sup):
    armed(6, pid=os.getpid())
    assert fake_sup().watchdog_enabled() == 6.0


@pytest.mark.parametrize("usec,err", [
    ("abc", errno.EINVAL), ("0", errno.EINVAL), ("-5", errno.EINVAL), (" 5", errno.EINVAL),
    ("5s", errno.EINVAL), ("99999999999999999999999", errno.ERANGE),
    ("infinity", errno.ERANGE), ("5999", errno.ERANGE),
])
def test_bad_watchdog_usec_reports_why_and_stays_unarmed(manager, clean_env, fake_sup,
                                                         clock, usec, err):
    clean_env.setenv("WATCHDOG_USEC", usec)
    sup = fake_sup()
    with pytest.raises(sdlive.SdliveError) as e:
        sup.watchdog_enabled()
    assert e.value.errno == err
    clock.advance(100)
    assert sup.pet() is False
    assert manager.drain() == []


def test_pet_interval_option(armed, clean_env, fake_sup, clock):
    armed(6)
    sup = fake_sup(pet_interval=0.25)
    assert sup.pet_interval == 0.25
    for bad in (0.0005, 6, 7):
        with pytest.raises(sdlive.SdliveError) as e:
            sdlive.Supervisor(pet_interval=bad)
        assert e.value.errno == errno.ERANGE
    with pytest.raises(ValueError):
        sdlive.Supervisor(pet_interval=0)
    with pytest.raises(ValueError):
        sdlive.Supervisor(pet_interval=-1)
    with pytest.raises(TypeError):
        sdlive.Supervisor(pet_interval="1")


def test_pet_interval_tracks_pets_outside_systemd(clean_env, fake_sup, clock):
    sup = fake_sup(pet_interval=1)
    assert sup.supervised() is False and sup.watchdog_enabled() is None
    sup.pet()
    clock.advance(0.5)
    assert abs(sup.last_pet_age() - 0.5) < 1e-6
    clock.advance(0.5)
    assert sup.pet() is False  # tracked, never sent
    assert sup.last_pet_age() == 0


def test_set_watchdog_timeout(manager, fake_sup, clock):
    sup = fake_sup()
    assert sup.watchdog_enabled() is None
    assert sup.set_watchdog_timeout(3) is True
    assert manager.recv(1) == "WATCHDOG_USEC=3000000"
    assert sup.watchdog_enabled() == 3.0 and sup.pet_interval == 0.5
    clock.advance(0.5)
    assert sup.pet() is True
    for bad, err in ((0, errno.EINVAL), (0.005, errno.ERANGE)):
        with pytest.raises(sdlive.SdliveError) as e:
            sup.set_watchdog_timeout(bad)
        assert e.value.errno == err
    with pytest.raises(ValueError):
        sup.set_watchdog_timeout(None)
    overridden = fake_sup(pet_interval=2)
    with pytest.raises(sdlive.SdliveError) as e:
        overridden.set_watchdog_timeout(2)
    assert e.value.errno == errno.ERANGE


def test_unset_watchdog_env(armed, clean_env, fake_sup):
    armed(6, pid=os.getpid())
    sup = fake_sup(unset_watchdog_env=True)
    assert "WATCHDOG_USEC" not in os.environ and "WATCHDOG_PID" not in os.environ
    assert sup.watchdog_enabled() == 6.0


def test_watchdog_fd_polls_readable_when_due(armed):
    import select
    m = armed(0.12)  # real clock: pet interval 20 ms
    with sdlive.Supervisor() as sup:
        fd = sup.watchdog_fd()
        assert isinstance(fd, int) and fd >= 0
        assert sup.watchdog_fd() == fd
        sup.pet()
        m.drain()
        r, _, _ = select.select([fd], [], [], 1.0)
        assert r == [fd]
        assert sup.pet() is True  # re-arms the timer
        r, _, _ = select.select([fd], [], [], 0)
        # Not readable again before the next keepalive is due (a loaded
        # machine may have let that time come meanwhile).
        assert r == [] or time.monotonic() >= sup.next_due
        assert m.drain() == ["WATCHDOG=1"]


def test_shorter_timeout_takes_effect_on_the_next_pet(armed, fake_sup, clock):
    # pet() caches the next keepalive's time: a timeout that moves it
    # earlier must not leave the cached, later time in force.
    m = armed(60)
    sup = fake_sup()
    assert sup.pet() is True          # next due in 10 s
    assert sup.set_watchdog_timeout(6) is True
    clock.advance(1)
    assert sup.pet() is True          # the new 1 s interval, not the old 10 s
    assert m.drain() == ["WATCHDOG=1", "WATCHDOG_USEC=6000000", "WATCHDOG=1"]


def test_unarmed_then_armed_at_run_time(manager, fake_sup, clock):
    sup = fake_sup()
    assert sup.pet() is False         # not tracked
    assert sup.set_watchdog_timeout(0.6)
    clock.advance(0.1)
    assert sup.pet() is True


def test_pets_of_idle_in_another_thread_do_not_double_send(armed, fake_sup, clock):
    m = armed(6)
    sup = fake_sup()
    sup.pet()
    m.drain()
    clock.advance(1)
    t = threading.Thread(target=sup.idle, args=(0,))
    t.start()
    t.join()                          # the idle pets (due), in C
    assert m.drain() == ["WATCHDOG=1"]
    assert sup.pet() is False         # cache was early: asks, nothing due
    clock.advance(0.5)
    assert sup.pet() is False
    clock.advance(0.5)
    assert sup.pet() is True
