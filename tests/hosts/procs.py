# SPDX-License-Identifier: MIT
"""The processes of a run, each on its own test host: cluster members
(sdlive-cluster on the PostgreSQL store, coordinating workers over TCP
with TLS), workers (sdlive-worker dialling every member), and a lease
watcher on each PostgreSQL host. Each is a plain process started with
`ip netns exec`; its output and its notify messages go to the history."""

import os
import signal
import subprocess
import threading

from history import LineRecorder, NotifyRecorder

COORDINATOR_PORT = 7400


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_pki(root, members, workers):
    """A throwaway CA, a server certificate per member naming its address,
    a client certificate per worker naming the worker."""
    pki = os.path.join(root, "pki")
    os.makedirs(pki, mode=0o700)
    old = os.umask(0o077)
    try:
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-days", "2", "-subj", "/CN=hosts-ca", "-keyout", pki + "/ca.key", "-out", pki + "/ca.pem",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
        leaves = [(m, "serverAuth", "IP:" + addr) for m, addr in members.items()]
        leaves += [(w, "clientAuth", "DNS:" + w) for w in workers]
        for name, eku, san in leaves:
            ext = os.path.join(pki, name + ".ext")
            with open(ext, "w") as f:
                f.write("extendedKeyUsage=%s\nsubjectAltName=%s\n" % (eku, san))
            openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                    "/CN=" + name, "-keyout", "%s/%s.key" % (pki, name), "-out", "%s/%s.csr" % (pki, name))
            openssl("x509", "-req", "-in", "%s/%s.csr" % (pki, name), "-CA", pki + "/ca.pem", "-CAkey",
                    pki + "/ca.key", "-CAcreateserial", "-days", "2", "-extfile", ext,
                    "-out", "%s/%s.pem" % (pki, name))
    finally:
        os.umask(old)
    for f in os.listdir(pki):
        if f.endswith(".pem"):
            os.chmod(os.path.join(pki, f), 0o644)
    return pki


class Proc:
    """One daemon on one host; `argv` is what runs inside the namespace."""

    def __init__(self, run, host, src, argv, env=None, time_offset_s=0):
        self.run, self.host, self.src = run, host, src
        self.argv, self.env = argv, dict(env or {})
        self.time_offset_s = time_offset_s
        self.p = None
        self.notify = None
        self.starts = 0
        self.expected_exit = False

    def start(self):
        h = self.run.history
        root = self.run.root
        path = os.path.join(root, "notify-%s-%d" % (self.src, self.starts))
        self.notify = NotifyRecorder(h, self.src, path)
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "STATE_DIRECTORY",
                            "SDLIVE_STORE", "SDLIVE_NODE", "INVOCATION_ID", "CREDENTIALS_DIRECTORY")}
        env.update(self.env)
        env["NOTIFY_SOCKET"] = path
        argv = list(self.argv)
        if self.time_offset_s:
            # A time namespace: this process's CLOCK_MONOTONIC (and
            # CLOCK_BOOTTIME) read offset from everyone else's.
            argv = ["unshare", "--time", "--monotonic", str(self.time_offset_s),
                    "--boottime", str(self.time_offset_s), "--"] + argv
        # systemd starts services with SIGPIPE ignored (IgnoreSIGPIPE=yes,
        # the default): so do we, unless --sigpipe-default asks for the
        # disposition a plain shell gives (Python ignores SIGPIPE itself;
        # restore_signals puts it back to the default in the child).
        self.p = subprocess.Popen(self.run.net.cmd(self.host, *argv), env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  start_new_session=True, restore_signals=self.run.args.sigpipe_default)
        LineRecorder(h, self.src, self.p.stdout, os.path.join(root, self.src + ".log"))
        h.add("proc", src=self.src, what="start", pid=self.p.pid, host=self.host)
        self.starts += 1
        self.expected_exit = False
        threading.Thread(target=self.reap, args=(self.p,), daemon=True).start()

    def reap(self, p):
        """A process that ends without being told to is recorded: the
        checker fails the run on it (status < 0: killed by that signal)."""
        status = p.wait()
        if not self.expected_exit:
            self.run.history.add("proc", src=self.src, what="died", status=status)
            self.run.history.note("%s exited on its own: status %d" % (self.src, status))

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.p.pid, sig)
            self.run.history.add("proc", src=self.src, what="signal", sig=int(sig))

    def stop(self, timeout=5):
        if not self.alive():
            return self.p.returncode if self.p else None
        self.expected_exit = True
        os.kill(self.p.pid, signal.SIGCONT)
        os.kill(self.p.pid, signal.SIGTERM)
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.p.pid, signal.SIGKILL)
            self.p.wait()
        self.run.history.add("proc", src=self.src, what="exit", status=self.p.returncode)
        self.notify.close()
        return self.p.returncode

    def kill(self):
        if self.alive():
            self.expected_exit = True
            os.kill(self.p.pid, signal.SIGKILL)
            self.p.wait()
            self.run.history.add("proc", src=self.src, what="killed")
            self.notify.close()


def member(run, name, cfg, time_offset_s=0):
    pki = run.pki
    addr = run.net.hosts[name]
    argv = [run.bin("sdlive-cluster"), "--store", run.store_url, "--node", name,
            "--lease", "%dms" % cfg.lease_ms, "--election-poll", "%dms" % cfg.poll_ms,
            "--lease-record", "",
            "--maintenance-interval", "1s", "--maintenance-rate", str(cfg.maintenance_rate),
            "--coordinator-tcp", "%s:%d" % (addr, COORDINATOR_PORT),
            "--coordinator-tls-cert", "%s/%s.pem" % (pki, name), "--coordinator-tls-key",
            "%s/%s.key" % (pki, name), "--coordinator-tls-ca", pki + "/ca.pem",
            "--job-run", str(cfg.jobs), "--job-payload", "spin %d" % cfg.job_usec]
    if not cfg.shipped_defaults:  # scaled: workers reaped within cfg.peer_timeout_ms
        argv += ["--worker-timeout", "%dms" % cfg.peer_timeout_ms,
                 "--worker-heartbeat", "%dms" % (cfg.peer_timeout_ms * 3 // 10)]
    if cfg.seed_inventory and name == run.members_order[0]:
        argv += ["--seed-inventory", str(cfg.seed_inventory)]
    env = {"WATCHDOG_USEC": str(cfg.watchdog_ms * 1000)} if cfg.watchdog_ms else {}
    return Proc(run, name, name, argv, env, time_offset_s)


def worker(run, name, cfg):
    pki = run.pki
    argv = [run.bin("sdlive-worker")]
    for m in run.members_order:
        argv += ["--coordinator", "%s:%d" % (run.net.hosts[m], COORDINATOR_PORT)]
    argv += ["--identity", name, "--tls-cert", "%s/%s.pem" % (pki, name), "--tls-key",
             "%s/%s.key" % (pki, name), "--tls-ca", pki + "/ca.pem"]
    if not cfg.shipped_defaults:
        argv += ["--coordinator-timeout", "%dms" % cfg.peer_timeout_ms,
                 "--heartbeat", "%dms" % (cfg.peer_timeout_ms * 3 // 10), "--reconnect-max", "300ms"]
    return Proc(run, name, name, argv)


WATCH_SQL = (
    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, pg_is_in_recovery(),"
    " coalesce((SELECT coalesce(nullif(holder, ''), '-') || ' ' || generation || ' ' ||"
    " (extract(epoch FROM expires) * 1000000)::bigint FROM leases WHERE name = 'cluster'), '- 0 0'),"
    " (SELECT coalesce(sum(done_count), 0) FROM runs),"
    " (SELECT count(*) FROM jobs WHERE status = 'done')")


class LeaseWatcher:
    """psql on a PostgreSQL host, asking its own server every 100 ms for the
    lease row and the job counts, on the server's clock. Rows from a server
    in recovery say what that replica has replayed."""

    def __init__(self, run, server):
        self.run, self.server = run, server
        self.p = None

    def start(self):
        s = self.server
        argv = self.run.net.cmd(s.host, "runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-At",
                                "-F", " ", "-h", s.addr, "-p", "5432", "-U", "postgres", "-d", "sdlive")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, cwd="/")  # as pgstore's psql
        self.p.stdin.write("\\pset pager off\n" + WATCH_SQL + " \\watch 0.1\n")
        self.p.stdin.flush()
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        h = self.run.history
        for line in self.p.stdout:
            f = line.split()
            if len(f) != 7 or not f[0].isdigit():
                if line.strip():
                    h.add("log", src="watch-" + self.server.host, text=line.rstrip())
                continue
            h.add("lease", server=self.server.host, store_us=int(f[0]), primary=f[1] == "f",
                  holder=f[2], generation=int(f[3]), expires_us=int(f[4]), done_count=int(f[5]),
                  done_jobs=int(f[6]))

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class GarbageFeeder:
    """psql on the primary's host, over its unix socket (no packet of it
    passes a nemesis), adding `per_second` unreferenced blobs every second:
    work the leader's maintenance pass always has, so its fenced write rate
    before and during a latency nemesis measures the leader, not how much
    garbage a run happened to have left."""

    def __init__(self, run, server, per_second):
        self.run, self.server, self.per_second = run, server, per_second
        self.p = None

    def start(self):
        s = self.server
        s.psql("CREATE SEQUENCE IF NOT EXISTS test_garbage START 1000000000")
        argv = self.run.net.cmd(s.host, "runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-At",
                                "-h", s.dir, "-p", "5432", "-U", "postgres", "-d", "sdlive")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, cwd="/")  # as pgstore's psql
        self.p.stdin.write("INSERT INTO blobs (id, refcount, deleted) SELECT nextval('test_garbage'), 0, false"
                           " FROM generate_series(1, %d) \\watch 1\n" % self.per_second)
        self.p.stdin.flush()
        self.run.history.note("garbage feeder: %d unreferenced blobs a second on %s" % (self.per_second, s.host))
        threading.Thread(target=self.loop, daemon=True).start()

    def loop(self):
        for line in self.p.stdout:
            if line.strip():
                self.run.history.add("log", src="feeder-" + self.server.host, text=line.rstrip())

    def stop(self):
        if self.p and self.p.poll() is None:
            self.p.kill()
            self.p.wait()

