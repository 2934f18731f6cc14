# SPDX-License-Identifier: MIT
"""PostgreSQL on test hosts: a primary listening on its namespace address
and a streaming replica on another host (pg_basebackup, primary_conninfo),
promotable with pg_ctl promote. Replication is synchronous
(synchronous_standby_names names the replica: a commit returns once the
replica has flushed it) or asynchronous.

PostgreSQL refuses to run as root: the servers run as the `postgres`
system user, which owns their directories. Authentication is `trust`
for the test subnet only; the server listens on its namespace address and
on a unix socket in its own directory, nowhere else."""

import glob
import os
import shutil
import subprocess
import time

from hostnet import SUBNET, NETMASK

PORT = 5432
STANDBY_NAME = "standby1"


def bindir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
    if not dirs:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql")
    return dirs[-1]


class Server:
    def __init__(self, net, host, root):
        self.net, self.host = net, host
        self.addr = net.hosts[host]
        self.dir = os.path.join(root, "pg-" + host)
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.dir)
        shutil.chown(self.dir, "postgres", "postgres")
        self.bin = bindir()

    def as_postgres(self, *cmd, check=True):
        """Runs cmd as postgres on this host, from /: the test's own
        directory may be one postgres cannot enter (a clone under /root),
        and psql's complaint would join the answer."""
        argv = self.net.cmd(self.host, "runuser", "-u", "postgres", "--") + list(cmd)
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd="/")
        if check and r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), r.stdout.strip()[-2000:]))
        return r.stdout

    def conf(self, sync):
        return "\n".join([
            "listen_addresses = '%s'" % self.addr,
            "unix_socket_directories = '%s'" % self.dir,
            "port = %d" % PORT,
            "max_connections = 80",
            "wal_level = replica",
            "max_wal_senders = 5",
            "hot_standby = on",
            "wal_keep_size = '256MB'",
            # PostgreSQL's defaults, said aloud: a replica that stops
            # answering is noticed within a minute. Shorter ones (5 s here
            # once) livelock a lossy link: a receiver that times out
            # restarts from the start of its WAL segment, and with 400 ms
            # round trips and 5 % loss that resend outlasted 5 s every time,
            # so the synchronous standby never caught up again and every
            # commit waited for it (docs/store.md, "Replication").
            "wal_sender_timeout = '60s'",
            "wal_receiver_timeout = '60s'",
            "synchronous_standby_names = '%s'" % (STANDBY_NAME if sync else ""),
            "fsync = off",
            "full_page_writes = off",
            "log_line_prefix = '%m [%p] '",
            ""])

    def hba(self):
        return ("local all all trust\n"
                "host all all %s.0/%d trust\n"
                "host replication all %s.0/%d trust\n") % (SUBNET, NETMASK, SUBNET, NETMASK)

    def write_as_postgres(self, name, text, append=False):
        path = os.path.join(self.data, name)
        with open(path, "a" if append else "w") as f:
            f.write(text)
        shutil.chown(path, "postgres", "postgres")

    def pg_ctl(self, *args, check=True):
        return self.as_postgres(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l",
                                os.path.join(self.dir, "server.log"), "-w", "-t", "60", *args,
                                check=check)

    def init_primary(self, sync):
        self.as_postgres(os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres",
                         "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
        # Synchronous only once the replica exists: until then a commit
        # would wait for it.
        self.write_as_postgres("postgresql.conf", self.conf(False), append=True)
        self.write_as_postgres("pg_hba.conf", self.hba())
        self.pg_ctl("start")
        self.as_postgres(os.path.join(self.bin, "createdb"), "-h", self.dir, "-p", str(PORT),
                         "-U", "postgres", "sdlive")

    def init_replica(self, primary, sync):
        conninfo = "host=%s port=%d user=postgres application_name=%s" % (primary.addr, PORT, STANDBY_NAME)
        self.as_postgres(os.path.join(self.bin, "pg_basebackup"), "-d", conninfo, "-D", self.data,
                         "-R", "-X", "stream", "-c", "fast", "--no-sync")
        # The copy carries the primary's settings: this host's address instead.
        self.write_as_postgres("postgresql.conf", self.conf(sync), append=True)
        self.pg_ctl("start")

    def set_sync(self, sync):
        """Synchronous replication to the replica on, or off; reloaded."""
        self.write_as_postgres("postgresql.conf", "synchronous_standby_names = '%s'\n"
                               % (STANDBY_NAME if sync else ""), append=True)
        self.pg_ctl("reload")

    def wait_streaming(self, timeout=30):
        """Until the replica streams from this primary."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").strip() not in ("", "0"):
                return
            time.sleep(0.2)
        raise RuntimeError("no replica streaming from %s within %d s" % (self.host, timeout))

    def kill(self):
        """The primary is lost: SIGKILL the postmaster (no shutdown
        checkpoint, nothing more sent to the replica)."""
        pidfile = os.path.join(self.data, "postmaster.pid")
        try:
            with open(pidfile) as f:
                pid = int(f.readline())
            os.kill(pid, 9)
        except (OSError, ValueError):
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and os.path.exists("/proc/%d" % pid):
            time.sleep(0.05)

    def promote(self):
        self.pg_ctl("promote")

    def stop(self):
        self.pg_ctl("stop", "-m", "immediate", check=False)

    def psql(self, sql, host=None):
        """Run sql on this server (from its own host, over its address)."""
        return self.as_postgres("psql", "-X", "-q", "-At", "-F", "\t", "-h", self.addr, "-p", str(PORT),
                                "-U", "postgres", "-d", "sdlive", "-c", sql)


def store_url(servers):
    """The members' store: every server in one libpq multi-host string,
    the one that takes writes chosen at each connect."""
    hosts = ",".join(s.addr for s in servers)
    ports = ",".join(str(PORT) for _ in servers)
    return ("postgresql:host=%s port=%s dbname=sdlive user=postgres target_session_attrs=read-write"
            % (hosts, ports))
