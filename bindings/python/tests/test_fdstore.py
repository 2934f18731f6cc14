# SPDX-License-Identifier: MIT
"""The FD store and BARRIER=1, descriptors passed for real."""

import errno
import os
import socket
import threading

import pytest

import sdlive


def test_fdstore_passes_descriptors(manager):
    a, b = socket.socketpair()
    with a, b, sdlive.Supervisor() as sup:
        manager.drain()
        assert sup.fdstore([a, b.fileno()], name="clients") is True
        text, fds = manager.recv_fds()
        assert text.splitlines() == ["FDSTORE=1", "FDNAME=clients"]
        assert len(fds) == 2
        os.write(fds[0], b"x")
        assert b.recv(1) == b"x"
        for fd in fds:
            os.close(fd)
        assert sup.fdstore(a, poll=False) is True
        text, fds = manager.recv_fds()
        assert "FDPOLL=0" in text.splitlines() and len(fds) == 1
        os.close(fds[0])
        assert sup.fdstore_remove("clients") is True
        assert manager.recv(1).splitlines() == ["FDSTOREREMOVE=1", "FDNAME=clients"]


@pytest.mark.parametrize("fds,name", [
    ([], None), ([0] * 254, None), ([0], "has:colon"), ([0], "x" * 256), ([0], ""),
    ([0], "tab\tname"),
])
def test_fdstore_bad_arguments(manager, fds, name):
    with sdlive.Supervisor() as sup:
        with pytest.raises(sdlive.SdliveError) as e:
            sup.fdstore(fds, name=name)
        assert e.value.errno == errno.EINVAL


def test_fdstore_of_a_closed_descriptor_is_ebadf(manager):
    with sdlive.Supervisor() as sup:
        with pytest.raises(sdlive.SdliveError) as e:
            sup.fdstore([1000])
        assert e.value.errno == errno.EBADF
        with pytest.raises(TypeError):
            sup.fdstore([True])
        with pytest.raises(sdlive.SdliveError) as e:
            sup.fdstore_remove("bad:name")
        assert e.value.errno == errno.EINVAL


def test_barrier_returns_once_the_manager_closes_its_pipe(manager):
    with sdlive.Supervisor() as sup:
        manager.drain()

        def manager_side():
            text, fds = manager.recv_fds(timeout=5)
            assert text == "BARRIER=1"
            for fd in fds:
                os.close(fd)
        t = threading.Thread(target=manager_side)
        t.start()
        assert sup.barrier(5) is True
        t.join()


def test_barrier_times_out(manager):
    with sdlive.Supervisor() as sup:
        with pytest.raises(sdlive.SdliveError) as e:
            sup.barrier(0.05)  # nobody processes it
        assert e.value.errno == errno.ETIMEDOUT
        with pytest.raises(ValueError):
            sup.barrier(-1)
