# SPDX-License-Identifier: MIT
"""Peer liveness on the fake clock: only received frames reset the
inactivity window; the heartbeat schedule; the poll timeout."""

import errno
import math

import pytest

import sdlive


def test_only_received_frames_keep_a_peer_alive(clean_env, fake_sup, clock):
    sup = fake_sup()
    with sup.peer(timeout=3, heartbeat=1) as peer:
        assert not peer.expired and not peer.heartbeat_due
        assert peer.poll_timeout() == 1.0
        clock.advance(1)
        assert peer.heartbeat_due
        assert peer.poll_timeout() == 0.0
        peer.sent()                       # our heartbeat proves nothing
        assert not peer.heartbeat_due
        clock.advance(2)
        assert peer.expired
        peer.received()
        assert not peer.expired
        clock.advance(2.5)
        assert not peer.expired
        assert peer.poll_timeout() == 0.0  # a heartbeat is owed
        peer.sent()
        assert abs(peer.poll_timeout() - 0.5) < 1e-3  # the inactivity deadline


def test_defaults_and_never_heartbeat(clean_env, fake_sup, clock):
    sup = fake_sup()
    peer = sup.peer()
    assert peer.poll_timeout() == 10.0     # 30 s timeout, 10 s heartbeat
    peer.close()
    peer.close()
    with pytest.raises(sdlive.SdliveError) as e:  # closed: a use is a bug, said at once
        peer.poll_timeout()
    assert e.value.errno == errno.EBADF
    quiet = sup.peer(timeout=5, heartbeat=math.inf)
    clock.advance(4)
    assert not quiet.heartbeat_due and abs(quiet.poll_timeout() - 1.0) < 1e-3
    quiet.close()


def test_bad_peer_arguments(clean_env):
    with sdlive.Supervisor() as sup:
        for bad in (0, -1, math.nan):
            with pytest.raises(ValueError):
                sup.peer(timeout=bad)
        with pytest.raises(ValueError):
            sup.peer(heartbeat=0)
    closed = sdlive.Supervisor()
    closed.close()
    with pytest.raises(sdlive.SdliveError) as e:
        closed.peer()
    assert e.value.errno == errno.EBADF
