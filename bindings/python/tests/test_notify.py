# SPDX-License-Identifier: MIT
"""Notifications on a real datagram socket; errors carry their errno."""

import errno
import os

import pytest

import sdlive
from conftest import Manager


def test_outside_systemd_every_call_is_a_no_op(clean_env):
    with sdlive.Supervisor() as sup:
        assert sup.supervised() is False
        assert sup.watchdog_enabled() is None
        assert sup.pet() is False
        assert sup.status("x") is False
        assert sup.reloading() is False
        assert sup.barrier(0.01) is False
        assert sup.fdstore([0]) is False
        assert sup.pet_interval is None and sup.next_due is None
        assert sup.last_pet_age() is None and sup.watchdog_fd() is None


def test_context_manager_sends_ready_then_stopping(manager):
    with sdlive.Supervisor() as sup:
        assert sup.supervised() is True
        assert manager.recv(1) == "READY=1"
    assert manager.recv(1) == "STOPPING=1"
    assert sup.handle == sdlive.supervisor.ffi.NULL
    assert sup.ready() is False  # closed: as outside systemd


def test_abstract_socket(clean_env):
    m = Manager(abstract=True)
    clean_env.setenv("NOTIFY_SOCKET", m.address)
    try:
        with sdlive.Supervisor() as sup:
            assert sup.status("abstract") is True
            assert m.drain() == ["READY=1", "STATUS=abstract"]
    finally:
        m.close()


def test_each_message(manager):
    sup = sdlive.Supervisor()
    try:
        assert sup.reloading() is True
        msg = manager.recv(1)
        assert msg.startswith("RELOADING=1\nMONOTONIC_USEC=")
        assert sup.stopping() is True and manager.recv(1) == "STOPPING=1"
        assert sup.notify_errno(errno.EIO) and manager.recv(1) == "ERRNO=%d" % errno.EIO
        assert sup.extend_timeout(1.5) and manager.recv(1) == "EXTEND_TIMEOUT_USEC=1500000"
        assert sup.mainpid(4242) and manager.recv(1) == "MAINPID=4242"
        assert sup.exit_status(3) and manager.recv(1) == "EXIT_STATUS=3"
        assert sup.bus_error("org.example.Error.Broken")
        assert manager.recv(1) == "BUSERROR=org.example.Error.Broken"
        assert sup.notify_access("all") and manager.recv(1) == "NOTIFYACCESS=all"
        assert sup.notify_access(sdlive.NotifyAccess.MAIN) and manager.recv(1) == "NOTIFYACCESS=main"
        assert sup.notify_raw("X_KEY", "value with = sign") and manager.recv(1) == "X_KEY=value with = sign"
        assert sup.notify_raw("EMPTY", "") and manager.recv(1) == "EMPTY="
        assert sup.watchdog_trigger() and manager.recv(1) == "WATCHDOG=trigger"
    finally:
        sup.close()


def test_status_is_one_line_and_bounded(manager):
    with sdlive.Supervisor() as sup:
        manager.drain()
        assert sup.status("line\nREADY=1\rMAINPID=1")
        assert manager.recv(1) == "STATUS=line READY=1 MAINPID=1"
        assert sup.status(b"bytes \xff too")
        assert manager.recv(1).encode("utf-8", "surrogateescape").startswith(b"STATUS=bytes ")
        assert sup.status("%s %d %n")  # never a format string
        assert manager.recv(1) == "STATUS=%s %d %n"
        assert sup.status("\u00e9" * 5000)
        long = manager.recv(1)
        assert len(long.encode()) <= 4096 and long.startswith("STATUS=\u00e9")
        with pytest.raises(ValueError):
            sup.status("nul\0byte")
        with pytest.raises(TypeError):
            sup.status(42)


@pytest.mark.parametrize("call,args", [
    ("mainpid", (1,)), ("mainpid", (0,)), ("exit_status", (256,)), ("exit_status", (-1,)),
    ("notify_errno", (0,)), ("notify_errno", (-5,)),
    ("bus_error", ("nodots",)), ("bus_error", ("a.1b",)), ("bus_error", ("",)),
    ("notify_access", (7,)),
    ("notify_raw", ("lower", "v")), ("notify_raw", ("", "v")),
    ("notify_raw", ("KEY", "new\nline")), ("notify_raw", ("KEY", "cr\r")),
])
def test_bad_arguments_raise_einval_supervised_or_not(manager, clean_env, call, args):
    for supervised in (True, False):
        if not supervised:
            clean_env.delenv("NOTIFY_SOCKET")
        with sdlive.Supervisor() as sup:
            with pytest.raises(sdlive.SdliveError) as e:
                getattr(sup, call)(*args)
            assert e.value.errno == errno.EINVAL
            assert isinstance(e.value, OSError)
            assert e.value.call.startswith("sdlive_")
            assert "Invalid argument" in str(e.value)
    assert manager.drain() == ["READY=1", "STOPPING=1"]


@pytest.mark.parametrize("key,value", [
    ("FDSTORE", "1"), ("BARRIER", "1"), ("WATCHDOG_USEC", "5"), ("WATCHDOG", "1"),
    ("READY", "1"), ("MAINPID", "0"), ("STATUS", "x"),
])
def test_raw_refuses_fields_with_a_call_of_their_own(manager, clean_env, key, value):
    """The library's own rules cannot be bypassed through notify_raw():
    a field with a typed call is refused with EPERM, supervised or not."""
    for supervised in (True, False):
        if not supervised:
            clean_env.delenv("NOTIFY_SOCKET")
        with sdlive.Supervisor() as sup:
            with pytest.raises(sdlive.SdliveError) as e:
                sup.notify_raw(key, value)
            assert e.value.errno == errno.EPERM
    assert manager.drain() == ["READY=1", "STOPPING=1"]


def test_raw_too_big_is_e2big(manager):
    with sdlive.Supervisor() as sup:
        with pytest.raises(sdlive.SdliveError) as e:
            sup.notify_raw("KEY", "v" * 5000)
        assert e.value.errno == errno.E2BIG


def test_python_level_argument_errors(manager):
    with sdlive.Supervisor() as sup:
        with pytest.raises(ValueError):
            sup.notify_access("sometimes")
        with pytest.raises(TypeError):
            sup.mainpid("12")
        with pytest.raises(OverflowError):
            sup.exit_status(1 << 40)
        with pytest.raises(ValueError):
            sup.extend_timeout(-1)
        with pytest.raises(ValueError):
            sup.extend_timeout(float("inf"))
        with pytest.raises(ValueError):
            sup.notify_raw("KEY", "a\0b")


@pytest.mark.parametrize("value,err", [
    ("relative/path", errno.EAFNOSUPPORT),
    ("/" + "x" * 200, errno.EINVAL),
    ("vsock:", errno.EINVAL),
])
def test_malformed_notify_socket(clean_env, value, err):
    clean_env.setenv("NOTIFY_SOCKET", value)
    with sdlive.Supervisor() as sup:  # a bad environment never fails creation
        with pytest.raises(sdlive.SdliveError) as e:
            sup.supervised()
        assert e.value.errno == err
        assert sup.ready() is False


def test_a_send_that_fails_raises_with_errno(clean_env, tmp_path):
    m = Manager()
    clean_env.setenv("NOTIFY_SOCKET", m.address)
    sup = sdlive.Supervisor()
    m.close()  # nobody listens any more
    try:
        with pytest.raises(sdlive.SdliveError) as e:
            sup.ready()
        assert e.value.errno in (errno.ENOENT, errno.ECONNREFUSED)
    finally:
        sup.close()


def test_close_is_idempotent_and_del_is_safe(manager):
    sup = sdlive.Supervisor()
    sup.close()
    sup.close()
    assert sup.status("after close") is False
    with pytest.raises(sdlive.SdliveError):
        sup.idle(0)
    del sup
    assert manager.drain() == []


def test_pid_and_version():
    assert sdlive.library_version.count(".") == 2
    assert tuple(map(int, sdlive.library_version.split("."))) >= sdlive.MIN_VERSION
    assert sdlive.Supervisor().owned
    assert os.getpid() > 0
