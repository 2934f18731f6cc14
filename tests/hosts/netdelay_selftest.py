#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""netdelay delays and drops what it claims, between two test hosts:

- TCP round trips a -> b, measured before, with netdelay holding a's
  outgoing packets 100 ms ± 20 ms, and after: the added delay's median
  is 100 ms (±15), no round trip is faster than delay - jitter, and the
  base comes back once the rule is gone;
- 1000 UDP datagrams a -> b with 20 % loss: 200 ± 63 (5 standard
  deviations) are lost, and netdelay's own count agrees with b's.

  netdelay_selftest.py NETDELAY      exit 0 pass, 1 fail, 77 skip"""

import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hostnet  # noqa: E402

ECHO = r"""
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 7000)); s.listen(4)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((sys.argv[1], 7001)); u.settimeout(0.2)
print("ready", flush=True)
import threading
def udp():
    n = 0
    while True:
        try:
            d, _ = u.recvfrom(64)
        except socket.timeout:
            continue
        if d == b"count":
            print("udp %d" % n, flush=True); n = 0
        else:
            n += 1
threading.Thread(target=udp, daemon=True).start()
while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        d = c.recv(64)
        if not d:
            break
        c.sendall(d)
"""

CLIENT = r"""
import socket, sys, time
mode, addr, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "tcp":
    c = socket.create_connection((addr, 7000), timeout=10)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out = []
    for _ in range(n):
        t = time.monotonic(); c.sendall(b"x"); c.recv(64); out.append((time.monotonic() - t) * 1000)
        time.sleep(0.01)
    print(" ".join("%.2f" % x for x in out))
else:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(n):
        u.sendto(b"d", (addr, 7001)); time.sleep(0.001)
    time.sleep(1.0)
"""


def fail(text):
    print("FAIL: " + text)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        print("usage: netdelay_selftest.py NETDELAY", file=sys.stderr)
        return 2
    netdelay = os.path.abspath(sys.argv[1])
    why = hostnet.available()
    if why:
        print("SKIP: " + why)
        return 1 if os.environ.get("CI") == "true" else 77
    hostnet.clean_leftovers()
    net = hostnet.Net()
    procs = []
    try:
        a = net.add_host("a", 1)
        b = net.add_host("b", 2)
        print("hosts a=%s b=%s" % (a, b))
        echo = subprocess.Popen(net.cmd("b", sys.executable, "-c", ECHO, b), stdout=subprocess.PIPE, text=True)
        procs.append(echo)
        if echo.stdout.readline().strip() != "ready":
            fail("echo server did not start")

        def rtts(n=40):
            out = subprocess.run(net.cmd("a", sys.executable, "-c", CLIENT, "tcp", b, str(n)), check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
            return [float(x) for x in out.split()]

        def start_netdelay(*args):
            p = subprocess.Popen(net.cmd("a", netdelay, "--queue", "3", "--seed", "42", *args),
                                 stdout=subprocess.PIPE, text=True)
            procs.append(p)
            if not p.stdout.readline().startswith("netdelay: queue 3"):
                fail("netdelay did not start")
            net.queue("a", 3)
            return p

        def stop_netdelay(p):
            net.heal("a")
            p.terminate()
            out = p.communicate(timeout=10)[0]
            return out

        base = statistics.median(rtts())
        p = start_netdelay("--delay-ms", "100", "--jitter-ms", "20")
        held = rtts()
        stats = stop_netdelay(p)
        after = statistics.median(rtts())
        added = statistics.median(held) - base
        print("TCP round trip: base %.2f ms; with 100 ms ± 20 ms: median %.2f ms (added %.2f), min %.2f, max %.2f;"
              " after %.2f ms" % (base, statistics.median(held), added, min(held), max(held), after))
        print(stats.strip())
        if not 85 <= added <= 115:
            fail("median added delay %.2f ms, expected 100 ± 15" % added)
        if min(held) < 80 - 1:
            fail("a round trip of %.2f ms: faster than delay - jitter (80 ms)" % min(held))
        if after > base + 20:
            fail("the round trip stayed slow after the rule was removed: %.2f ms" % after)

        p = start_netdelay("--delay-ms", "0", "--loss", "20")
        subprocess.run(net.cmd("a", sys.executable, "-c", CLIENT, "udp", b, "1000"), check=True)
        stats = stop_netdelay(p)
        subprocess.run(net.cmd("a", sys.executable, "-c", "import socket; socket.socket(socket.AF_INET,"
                               " socket.SOCK_DGRAM).sendto(b'count', ('%s', 7001))" % b), check=True)
        got = int(echo.stdout.readline().split()[1])
        dropped = int(stats.split("dropped ")[1].split()[0])
        print("UDP: 1000 sent with 20 %% loss: %d arrived, %d lost; netdelay counted %d dropped"
              % (got, 1000 - got, dropped))
        if not 137 <= 1000 - got <= 263:
            fail("%d of 1000 lost, expected 200 ± 63" % (1000 - got))
        if abs(dropped - (1000 - got)) > 5:
            fail("netdelay says %d dropped, %d did not arrive" % (dropped, 1000 - got))
        print("PASS: netdelay delays and drops what it claims")
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        net.destroy()


if __name__ == "__main__":
    sys.exit(main())
