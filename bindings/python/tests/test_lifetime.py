# SPDX-License-Identifier: MIT
"""No sequence of Python calls may crash the interpreter: peers and
progress loops that outlive their Supervisor, close() racing threads that
pet, beat or wait, close() from a signal handler in the middle of a call,
and the shipped example daemon stopping while its helper thread pets.

Each case runs in an interpreter of its own, so that a crash (a segfault,
or an ASan report under the binding's sanitized run, whose runtime
SDLIVE_PYTHON_PRELOAD names) fails that case instead of ending pytest."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDAEMON = os.path.join(HERE, "..", "examples", "sdlive-pydaemon")


def child_env(**extra):
    env = dict(os.environ)
    for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(key, None)
    if os.environ.get("SDLIVE_PYTHON_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["SDLIVE_PYTHON_PRELOAD"]
    env.update(extra)
    return env


def run_python(code, timeout=60, **env):
    """Runs code in a fresh interpreter; its stdout, or a failure that
    shows how it ended (a signal, an ASan report)."""
    r = subprocess.run([sys.executable, "-c", "import sdlive\n" + textwrap.dedent(code)],
                       env=child_env(**env), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        how = ("signal %s" % signal.Signals(-r.returncode).name if r.returncode < 0
               else "status %d" % r.returncode)
        pytest.fail("the interpreter ended with %s\nstdout:\n%s\nstderr:\n%s"
                    % (how, r.stdout, r.stderr[-4000:]))
    return r.stdout


def test_peer_of_a_temporary_supervisor_keeps_it_alive():
    out = run_python("""
        timeout = sdlive.Supervisor().peer(timeout=30, heartbeat=10).poll_timeout()
        peer = sdlive.Supervisor().peer(timeout=5)
        import gc; gc.collect()
        peer.received()
        print(timeout, peer.expired, peer.poll_timeout() <= 5.0)
    """)
    assert out.split() == ["10.0", "False", "True"]


def test_peer_after_its_supervisor_closed_raises():
    out = run_python("""
        import errno
        sup = sdlive.Supervisor()
        peer = sup.peer(timeout=5)
        sup.close()
        for call in (peer.received, peer.sent, peer.poll_timeout,
                     lambda: peer.expired, lambda: peer.heartbeat_due):
            try:
                call()
                print("no error")
            except sdlive.SdliveError as e:
                print(errno.errorcode[e.errno])
        peer.close()
        try:
            sup.peer()
        except sdlive.SdliveError as e:
            print("new", errno.errorcode[e.errno])
    """)
    assert out.split() == ["EBADF"] * 5 + ["new", "EBADF"]


def test_closed_peer_raises_and_closes_twice():
    out = run_python("""
        sup = sdlive.Supervisor()
        with sup.peer() as peer:
            pass
        try:
            peer.poll_timeout()
        except sdlive.SdliveError as e:
            print(e)
        peer.close()
        print(sup.handle != sdlive.supervisor.ffi.NULL)
    """)
    assert out.splitlines() == ["sdlive: the Peer is closed: Bad file descriptor", "True"]


def test_progress_after_its_supervisor_closed_does_nothing():
    out = run_python("""
        sup = sdlive.Supervisor()
        loop = sup.progress("scan", 5).register()
        @sup.progress("call", 5)
        def handle():
            return 1
        handle()
        sup.close()
        loop.beat(); loop.park()
        print(loop.registered, loop.age())
        loop.unregister()
        try:
            handle()
        except RuntimeError as e:
            print("call:", e)
        try:
            with sup.progress("late", 5):
                pass
        except RuntimeError as e:
            print("with:", e)
    """)
    assert out.splitlines() == [
        "False (None, False)",
        "call: sdlive.progress('call'): its Supervisor is closed",
        "with: sdlive.progress('late'): its Supervisor is closed",
    ]


RACE = """
    import threading, time
    rounds, errors = %d, []

    def use(sup, loop, peer, stop):
        # Every kind of call that reaches the handle or an object made
        # from it, as fast as the thread can, until told to stop.
        while not stop.is_set():
            try:
                sup.pet(); sup.stalled(); sup.last_pet_age(); sup.status("busy")
                sup.watchdog_enabled(); sup.stop_requested; sup.next_due
                loop.beat(); loop.park(); loop.age()
                peer.received(); peer.poll_timeout()
            except sdlive.SdliveError as e:
                if e.errno != 9:  # EBADF: the peer closed, as documented
                    errors.append(repr(e))
            except RuntimeError as e:
                errors.append(repr(e))

    for _ in range(rounds):
        sup = sdlive.Supervisor(pet_interval=0.001)
        loop, peer, stop = sup.progress("work", 5).register(), sup.peer(), threading.Event()
        threads = [threading.Thread(target=use, args=(sup, loop, peer, stop)) for _ in range(3)]
        for t in threads:
            t.start()
        time.sleep(0.002)
        sup.close()          # while the threads call
        time.sleep(0.001)    # and they go on after it
        stop.set()
        for t in threads:
            t.join()
    print("rounds", rounds, "errors", len(errors), errors[:3])
"""


def test_close_while_threads_pet_beat_and_call_peers():
    out = run_python(RACE % 150, timeout=120)
    assert out.split()[:4] == ["rounds", "150", "errors", "0"], out


def test_close_wakes_a_thread_idling_and_frees_after_it():
    out = run_python("""
        import threading, time
        sup = sdlive.Supervisor()
        woke = []
        t = threading.Thread(target=lambda: woke.append((sup.idle(30), time.monotonic())))
        t.start()
        time.sleep(0.2)
        closed_at = time.monotonic()
        sup.close()
        t.join(5)
        wake, at = woke[0]
        print(wake.name, at - closed_at < 1.0, sup.handle == sdlive.supervisor.ffi.NULL)
        try:
            sup.idle(0)
        except sdlive.SdliveError as e:
            print(e)
    """)
    assert out.splitlines() == ["STOP True True",
                                "sdlive: the Supervisor is closed: Bad file descriptor"]


def test_close_from_a_signal_handler_in_the_middle_of_calls():
    # The handler runs between two bytecodes of the main thread, inside a
    # call's bookkeeping as often as not: it must neither deadlock nor
    # free the handle under the call.
    out = run_python("""
        import signal
        state = {"closes": 0}

        def on_alarm(signum, frame):
            if "sup" in state:
                state["sup"].close()
                state["closes"] += 1

        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
        try:
            for _ in range(200):
                sup = state["sup"] = sdlive.Supervisor(pet_interval=0.001)
                try:
                    loop = sup.progress("work", 5).register()
                except RuntimeError:
                    continue  # closed before the loop registered: as documented
                while sup.handle != sdlive.supervisor.ffi.NULL:
                    sup.pet(); sup.stalled(); loop.beat(); sup.request_stop()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
        print("closes", state["closes"] >= 200)
    """, timeout=120)
    assert out.split() == ["closes", "True"]


def test_the_example_daemon_stops_cleanly_while_its_helper_thread_pets():
    # sdlive-pydaemon's helper thread pets every 200 ms; stopped at a
    # different moment of that each time, five times over, the daemon must
    # exit 0 and say it stopped.
    env = child_env()
    for attempt in range(5):
        with tempfile.TemporaryDirectory(prefix="sdlive-pydaemon.") as state:
            p = subprocess.Popen([sys.executable, PYDAEMON, "--state-dir", state,
                                  "--items", "50", "--item-time", "0.001",
                                  "--pass-interval", "0.05"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
            try:
                lines = []
                for line in p.stderr:  # SIGTERM is the daemon's once it is ready
                    lines.append(line)
                    if "ready;" in line:
                        break
                assert lines and "ready;" in lines[-1], "".join(lines)[-4000:]
                time.sleep(0.3 + 0.07 * attempt)
                p.send_signal(signal.SIGTERM)
                _, err = p.communicate(timeout=30)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            assert p.returncode == 0, "attempt %d: status %d\n%s" % (attempt, p.returncode,
                                                                     err[-4000:])
            assert "stopping" in err
