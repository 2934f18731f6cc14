# SPDX-License-Identifier: MIT
"""Test hosts: one network namespace per host, each with a veth link to a
bridge in a namespace of its own. Addresses come from RFC 5737's
198.51.100.0/24 only and exist only on these links; nothing is routed
anywhere else (no default route, no link to the machine's own namespace).

Namespace names are sdlh-<pid>-<host>, <pid> being the test's own process:
two runs cannot collide, and leftovers of a killed run (its pid is gone)
are removed by the next run's start.

Faults are iptables rules (nf_tables backend) inside a host's namespace,
in chains of our own, so healing is flushing them."""

import os
import re
import subprocess
import time

PREFIX = "sdlh"
SUBNET = "198.51.100"
NETMASK = 24


def run(*cmd, check=True, quiet=False):
    r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.stdout


def netns_list():
    out = run("ip", "netns", "list", check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def kill_netns_processes(ns):
    """SIGKILL every process left in one of our namespaces, by pid."""
    for _ in range(20):
        pids = [int(p) for p in run("ip", "netns", "pids", ns, check=False).split()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def clean_leftovers():
    """Remove the namespaces of runs whose process no longer exists."""
    removed = []
    for ns in netns_list():
        m = re.fullmatch(r"%s-(\d+)-[a-z0-9]+" % PREFIX, ns)
        if not m:
            continue
        pid = int(m.group(1))
        if pid != os.getpid() and os.path.exists("/proc/%d" % pid):
            continue
        kill_netns_processes(ns)
        run("ip", "netns", "del", ns, check=False)
        removed.append(ns)
    return removed


def available():
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    try:
        probe = "%s-%d-probe" % (PREFIX, os.getpid())
        run("ip", "netns", "add", probe)
        run("ip", "netns", "del", probe)
    except (RuntimeError, FileNotFoundError) as e:
        return "ip netns unavailable: %s" % e
    for tool in ("iptables", "runuser"):
        if run("sh", "-c", "command -v %s" % tool, check=False).strip() == "":
            return "%s not installed" % tool
    return None


class Net:
    """The bridge and the hosts of one run."""

    def __init__(self):
        self.pid = os.getpid()
        self.bridge = self.ns("br")
        self.hosts = {}  # name -> address
        self.faults = {}  # host -> list of rule descriptions
        run("ip", "netns", "add", self.bridge)
        self.exec_(self.bridge, "ip", "link", "add", "br0", "type", "bridge")
        self.exec_(self.bridge, "ip", "link", "set", "br0", "up")

    def ns(self, host):
        return "%s-%d-%s" % (PREFIX, self.pid, host)

    def exec_(self, ns, *cmd, check=True):
        return run("ip", "netns", "exec", ns, *cmd, check=check)

    def add_host(self, name, last_octet):
        ns = self.ns(name)
        addr = "%s.%d" % (SUBNET, last_octet)
        run("ip", "netns", "add", ns)
        veth = "v-" + name
        self.exec_(self.bridge, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                   "netns", ns)
        self.exec_(self.bridge, "ip", "link", "set", veth, "master", "br0", "up")
        self.exec_(ns, "ip", "link", "set", "lo", "up")
        self.exec_(ns, "ip", "addr", "add", "%s/%d" % (addr, NETMASK), "dev", "eth0")
        self.exec_(ns, "ip", "link", "set", "eth0", "up")
        # Our own chains, jumped to first: a fault is a rule there.
        for chain, hook in (("HOSTS-IN", "INPUT"), ("HOSTS-OUT", "OUTPUT")):
            self.exec_(ns, "iptables", "-N", chain)
            self.exec_(ns, "iptables", "-I", hook, "1", "-j", chain)
        self.hosts[name] = addr
        self.faults[name] = []
        return addr

    def cmd(self, host, *cmd):
        """The argv that runs cmd on host."""
        return ["ip", "netns", "exec", self.ns(host)] + list(cmd)

    # --- faults -----------------------------------------------------------
    def drop(self, host, peer, direction):
        """Drop packets on host to (out) or from (in) peer's address."""
        addr = self.hosts[peer]
        if direction == "out":
            self.exec_(self.ns(host), "iptables", "-A", "HOSTS-OUT", "-d", addr, "-j", "DROP")
        else:
            self.exec_(self.ns(host), "iptables", "-A", "HOSTS-IN", "-s", addr, "-j", "DROP")
        self.faults[host].append("drop %s %s" % (direction, peer))

    def cut(self, a, b):
        """No packet between a and b, either way."""
        self.drop(a, b, "out")
        self.drop(a, b, "in")

    def isolate(self, host):
        for peer in self.hosts:
            if peer != host:
                self.cut(host, peer)

    def queue(self, host, number):
        """Send every packet host sends to another host through NFQUEUE
        `number` (netdelay); bypassed while nothing listens on it."""
        self.exec_(self.ns(host), "iptables", "-A", "HOSTS-OUT", "-d", "%s.0/%d" % (SUBNET, NETMASK),
                   "-j", "NFQUEUE", "--queue-num", str(number), "--queue-bypass")
        self.faults[host].append("queue %d" % number)

    def heal(self, host=None):
        for h in ([host] if host else list(self.hosts)):
            for chain in ("HOSTS-IN", "HOSTS-OUT"):
                self.exec_(self.ns(h), "iptables", "-F", chain)
            self.faults[h] = []

    def destroy(self):
        for name in list(self.hosts) + ["br"]:
            ns = self.ns(name)
            kill_netns_processes(ns)
            run("ip", "netns", "del", ns, check=False)
        self.hosts = {}
