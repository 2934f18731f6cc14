# SPDX-License-Identifier: MIT
"""Progress loops gate keepalives: context manager, decorator, iterate."""

import asyncio
import errno
import threading

import pytest

import sdlive


@pytest.fixture
def gated(armed, fake_sup, clock):
    """(sup, manager) armed at 6 s (pets every 1 s), first pet sent."""
    m = armed(6)
    sup = fake_sup()
    assert sup.pet()
    m.drain()
    return sup, m


def test_a_stalled_loop_withholds_keepalives_and_is_named(gated, clock):
    sup, m = gated
    with sup.progress("scan", 2) as loop:
        assert loop.registered
        clock.advance(1)
        assert sup.pet() is True           # silent 1 s of 2: fine
        clock.advance(1.5)
        assert sup.pet() is False          # silent 2.5 s: withheld
        assert sup.stalled() == "scan"
        msgs = m.drain()
        assert "WATCHDOG=1" in msgs[:1] and any(
            x.startswith("STATUS=") and "scan" in x for x in msgs)
        clock.advance(1)
        assert sup.pet() is False          # still withheld, another thread or not
        from_thread = []
        t = threading.Thread(target=lambda: from_thread.append(sup.pet()))
        t.start()
        t.join()                           # before the beat: withheld too
        assert from_thread == [False]
        loop.beat()
        assert sup.pet() is True           # recovers at once on the beat
        assert sup.stalled() is None
    assert not loop.registered


def test_iterate_beats_per_item_and_a_stuck_item_stops_them(gated, clock):
    sup, m = gated
    with sup.progress("items", 2) as loop:
        for i in loop.iterate(range(10)):
            clock.advance(1)
            assert sup.pet() is True       # 1 s per item < 2 s
        age, parked = loop.age()
        assert age == 0 and parked is False
        for i in loop.iterate(range(3)):
            if i == 1:
                clock.advance(3)           # one stuck item
                assert sup.pet() is False
                break
    m.drain()
    clock.advance(1)
    assert sup.pet() is True               # unregistered: no longer gates


def test_decorator_beats_on_entry_and_parks_between_calls(gated, clock):
    sup, m = gated
    step = sup.progress("step", 2)

    @step
    def work(seconds):
        clock.advance(seconds)
        return seconds

    assert work.progress is step and not step.registered
    assert work(0.5) == 0.5
    assert step.registered and step.age()[1] is True    # parked after the call
    clock.advance(10)                                   # idle between calls: fine
    assert sup.pet() is True
    work(3)                                             # one call too long
    # the call ended (parked), but while it ran it was stalled:
    assert sup.pet() is True

    @step
    def stuck():
        clock.advance(3)
        return sup.pet()
    assert stuck() is False                             # withheld inside the call
    assert sup.stalled() is None                        # parked again
    sup.close()
    assert not step.registered
    step.beat()                                         # harmless after close


def test_decorated_generator_beats_per_item(gated, clock):
    sup, m = gated

    @sup.progress("gen", 2)
    def items():
        for i in range(5):
            yield i

    got = []
    for i in items():
        clock.advance(1.5)
        got.append(sup.pet())
    assert got == [True, True, True, True, True]
    g = items()
    next(g)
    clock.advance(3)
    assert sup.pet() is False
    g.close()


def test_coroutines_and_async_generators(gated, clock):
    sup, m = gated
    loop_p = sup.progress("aio", 2)

    @loop_p
    async def step():
        clock.advance(3)
        return sup.pet()

    @sup.progress("agen", 2)
    async def agen():
        for i in range(3):
            yield i

    async def main():
        assert await step() is False
        out = []
        async for _ in agen():
            clock.advance(1.5)
            out.append(sup.pet())
        async with sup.progress("ctx", 2) as ctx:
            async def source():
                for i in range(3):
                    yield i
            async for _ in ctx.aiterate(source()):
                clock.advance(1.5)
                out.append(sup.pet())
        return out
    assert asyncio.run(main()) == [True, True, True, True, True, True]


def test_module_level_progress_binds_to_the_current_supervisor(gated, clock):
    sup, m = gated
    dangling = sdlive.progress("late", 2)

    @dangling
    def f():
        return 1
    with pytest.raises(RuntimeError, match="no Supervisor"):
        f()
    with sup:
        assert sdlive.Supervisor.current() is sup
        assert f() == 1 and dangling.registered
    assert sdlive.Supervisor.current() is None
    assert not dangling.registered


def test_registration_limits_and_bad_arguments(gated):
    sup, m = gated
    loops = [sup.progress("l%d" % i, 5).register() for i in range(32)]
    with pytest.raises(sdlive.SdliveError) as e:
        sup.progress("one too many", 5).register()
    assert e.value.errno == errno.ENOSPC
    loops[0].unregister()
    sup.progress("fits again", 5).register()
    with pytest.raises(ValueError):
        sup.progress("", 5)
    with pytest.raises(ValueError):
        sup.progress("zero", 0)
    with pytest.raises(ValueError):
        sup.progress("nul\0", 1)
    with pytest.raises(ValueError):
        sup.progress("forever", None)
    with pytest.raises(TypeError):
        sup.progress(None, 1)
    assert "l1" in repr(loops[1])


def test_long_names_are_cut_to_the_library_limit(gated, clock):
    sup, m = gated
    with sup.progress("n" * 100, 1):
        clock.advance(2)
        sup.pet()
        assert sup.stalled() == "n" * 31


def test_trigger_on_stall(armed, fake_sup, clock):
    m = armed(6)
    sup = fake_sup(trigger_on_stall=True)
    sup.pet()
    m.drain()
    with sup.progress("t", 1):
        clock.advance(2)
        assert sup.pet() is False
        assert "WATCHDOG=trigger" in m.drain()


def test_progress_age_and_park(gated, clock):
    sup, m = gated
    p = sup.progress("age", 5)
    assert p.age() == (None, False)
    with p:
        clock.advance(0.25)
        age, parked = p.age()
        assert abs(age - 0.25) < 1e-6 and not parked
        p.park()
        clock.advance(10)
        assert p.age()[1] is True and sup.pet() is True
