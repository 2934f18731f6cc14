#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fake etcd v3 JSON gateway on 127.0.0.1, well-behaved or hostile on demand.

    etcd-gateway.py DIR MEMBERS [LIFETIME_S]

Serves MEMBERS endpoints (one port each, all on 127.0.0.1) over one shared
keyspace: the calls sdlive's etcd client makes (/v3/kv/range, /v3/kv/txn,
/v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke, /v3/watch), with
etcd's answers, revisions, lease expiry and DELETE events. It writes its
URLs to DIR/urls (one line, comma-separated) once it listens, and exits by
itself after LIFETIME_S (default 120) or when its parent goes away.

How it behaves is read from DIR/mode.json before every request (write it
whole and rename it into place); every key is optional:

    "members": ["ok", ...]  per endpoint: "ok"; "proxy502" (an HTML 502
                            page, as a proxy gives); "notjson" (200 with an
                            HTML body); "reset" (the connection closed with
                            nothing answered); "silent" (the request held,
                            unanswered, until the member is no longer silent)
    "delay_ms": N           every valid answer sent N ms late
    "grant_ttl": N          grants answer TTL N, whatever was asked
    "keepalive_ttl": N      keep-alives answer TTL N (the lease's own TTL
                            is unchanged)
    "race": true            a range finds the key absent, an acquire finds
                            it held by "other" (the race lost every time)
    "held_by": "NAME"       the leader key (sdlive/cluster/leader) is held by
                            NAME, with no lease (a holder that never goes)
    "txn_unavailable": true a transaction is answered with etcd's own
                            UNAVAILABLE error ("request timed out")
    "watch_flood": true     a watch stream sends PUT events for the key as
                            fast as the reader takes them

What it saw is in DIR/counts.json, rewritten after every request and every
flood chunk: requests per endpoint, grants, acquires won, flood bytes sent.
"""
import base64
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

directory, n_members = sys.argv[1], int(sys.argv[2])
lifetime = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
parent = os.getppid()

LEADER_KEY = "sdlive/cluster/leader"
lock = threading.Condition()
state = {"revision": 1, "next_lease": 1000}
keys = {}  # key -> {"value", "create", "mod", "lease"}
leases = {}  # id -> {"ttl", "expires"}
events = []  # (revision, "PUT"|"DELETE", key)
counts = {"requests": [0] * n_members, "grants": 0, "acquired": 0, "flood_bytes": 0}
mode_cache = {"mtime": None, "mode": {}}


def mode():
    path = os.path.join(directory, "mode.json")
    try:
        mtime = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return {}
    if mtime != mode_cache["mtime"]:
        with open(path) as f:
            mode_cache["mode"] = json.load(f)
        mode_cache["mtime"] = mtime
    return mode_cache["mode"]


def member_mode(member):
    members = mode().get("members", [])
    return members[member] if member < len(members) else "ok"


def write_counts():
    tmp = os.path.join(directory, "counts.json.tmp")
    with open(tmp, "w") as f:
        json.dump(counts, f)
    os.replace(tmp, os.path.join(directory, "counts.json"))


def b64(text):
    return base64.b64encode(text.encode()).decode()


def header():
    return {"cluster_id": "1", "member_id": "1", "revision": str(state["revision"]), "raft_term": "2"}


def kv_json(key):
    k = keys[key]
    return {"key": b64(key), "create_revision": str(k["create"]), "mod_revision": str(k["mod"]),
            "version": "1", "value": b64(k["value"]), "lease": str(k["lease"])}


def delete_key(key):
    del keys[key]
    state["revision"] += 1
    events.append((state["revision"], "DELETE", key))
    lock.notify_all()


def expire_leases():
    now = time.monotonic()
    for lid in [lid for lid, l in leases.items() if l["expires"] <= now]:
        revoke(lid)


def revoke(lid):
    leases.pop(lid, None)
    for key in [k for k, v in keys.items() if v["lease"] == lid]:
        delete_key(key)


def held_by_other(key, name):
    if key not in keys or keys[key]["value"] != name:
        state["revision"] += 1
        keys[key] = {"value": name, "create": state["revision"], "mod": state["revision"], "lease": 0}


def range_answer(key):
    answer = {"header": header()}
    if key in keys and not mode().get("race"):
        answer.update({"kvs": [kv_json(key)], "count": "1"})
    return answer


def txn(body):
    compare = body["compare"][0]
    key = base64.b64decode(compare["key"]).decode()
    token = int(compare.get("create_revision", "0"))
    current = keys[key]["create"] if key in keys else 0
    if "request_put" in body["success"][0]:  # acquire
        if mode().get("race"):
            held_by_other(key, "other")
            current = keys[key]["create"]
        if current == 0:
            put = body["success"][0]["request_put"]
            lid = int(put["lease"])
            if lid not in leases:
                return 404, {"error": "etcdserver: requested lease not found", "code": 5,
                             "message": "etcdserver: requested lease not found"}
            state["revision"] += 1
            keys[key] = {"value": base64.b64decode(put["value"]).decode(), "create": state["revision"],
                         "mod": state["revision"], "lease": lid}
            events.append((state["revision"], "PUT", key))
            lock.notify_all()
            counts["acquired"] += 1
            return 200, {"header": header(), "succeeded": True,
                         "responses": [{"response_put": {"header": header()}},
                                       {"response_range": {"header": header(), "kvs": [kv_json(key)],
                                                           "count": "1"}}]}
        return 200, {"header": header(),
                     "responses": [{"response_range": {"header": header(), "kvs": [kv_json(key)],
                                                       "count": "1"}}]}
    if current != 0 and current == token:  # release by token
        delete_key(key)
        return 200, {"header": header(), "succeeded": True,
                     "responses": [{"response_delete_range": {"header": header(), "deleted": "1"}}]}
    return 200, {"header": header()}


def answer(path, body):
    expire_leases()
    m = mode()
    if m.get("held_by"):
        held_by_other(LEADER_KEY, m["held_by"])
    if path == "/v3/kv/range":
        return 200, range_answer(base64.b64decode(body["key"]).decode())
    if path == "/v3/kv/txn":
        if m.get("txn_unavailable"):
            return 503, {"error": "etcdserver: request timed out", "code": 14,
                         "message": "etcdserver: request timed out"}
        return txn(body)
    if path == "/v3/lease/grant":
        ttl = int(body["TTL"])
        lid = state["next_lease"]
        state["next_lease"] += 1
        leases[lid] = {"ttl": ttl, "expires": time.monotonic() + ttl}
        counts["grants"] += 1
        return 200, {"header": header(), "ID": str(lid), "TTL": str(m.get("grant_ttl", ttl))}
    if path == "/v3/lease/keepalive":
        lid = int(body["ID"])
        result = {"header": header(), "ID": str(lid)}
        if lid in leases:
            leases[lid]["expires"] = time.monotonic() + leases[lid]["ttl"]
            result["TTL"] = str(m.get("keepalive_ttl", leases[lid]["ttl"]))
        return 200, {"result": result}
    if path == "/v3/lease/revoke":
        lid = int(body["ID"])
        if lid not in leases:
            return 404, {"error": "etcdserver: requested lease not found", "code": 5,
                         "message": "etcdserver: requested lease not found"}
        revoke(lid)
        return 200, {"header": header()}
    return 404, {"error": "Not Found", "code": 5, "message": "Not Found"}


FLOOD_MESSAGE = (json.dumps({"result": {"header": {"revision": "7"}, "events": [
    {"kv": {"key": b64(LEADER_KEY), "create_revision": "7", "mod_revision": "7",
            "value": b64("other")}}]}}, separators=(",", ":")) + "\n").encode()
FLOOD_CHUNK = FLOOD_MESSAGE * (65536 // len(FLOOD_MESSAGE))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        member = self.server.member
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            counts["requests"][member] += 1
            write_counts()
        how = member_mode(member)
        while how == "silent":
            time.sleep(0.05)
            how = member_mode(member)
            if how != "silent":
                self.close_connection = True
                return
        if how == "reset":
            self.close_connection = True
            return
        if how == "proxy502":
            self.send(502, b"<html><head><title>502 Bad Gateway</title></head>"
                           b"<body><center><h1>502 Bad Gateway</h1></center><hr>nginx</body></html>",
                      "text/html")
            return
        if how == "notjson":
            self.send(200, b"<html><body>It works!</body></html>", "text/html")
            return
        time.sleep(mode().get("delay_ms", 0) / 1000)
        if self.path == "/v3/watch":
            self.watch(json.loads(body)["create_request"])
            return
        with lock:
            status, payload = answer(self.path, json.loads(body))
        self.send(status, payload)

    def watch(self, create):
        key = base64.b64decode(create["key"]).decode()
        start = int(create.get("start_revision", "0"))
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        with lock:
            self.wfile.write((json.dumps({"result": {"header": header(), "created": True}}) + "\n").encode())
        self.wfile.flush()
        while True:
            if mode().get("watch_flood"):
                self.wfile.write(FLOOD_CHUNK)
                with lock:
                    counts["flood_bytes"] += len(FLOOD_CHUNK)
                    write_counts()
                continue
            with lock:
                expire_leases()
                seen = [e for e in events if e[0] >= start and e[2] == key]
                if not seen:
                    lock.wait(0.1)
                    continue
            for rev, kind, _ in seen:
                event = {"kv": {"key": b64(key), "mod_revision": str(rev)}}
                if kind == "DELETE":
                    event["type"] = "DELETE"
                else:
                    event["kv"].update({"create_revision": str(rev), "value": b64("x")})
                self.wfile.write((json.dumps({"result": {"header": header(), "events": [event]}}) + "\n").encode())
                self.wfile.flush()
                start = rev + 1


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


def expiry_loop():
    while True:
        time.sleep(0.1)
        with lock:
            expire_leases()


servers = []
for i in range(n_members):
    s = Server(("127.0.0.1", 0), Handler)
    s.member = i
    servers.append(s)
    threading.Thread(target=s.serve_forever, daemon=True).start()
threading.Thread(target=expiry_loop, daemon=True).start()
with lock:
    write_counts()
urls = ",".join("http://127.0.0.1:%d" % s.server_address[1] for s in servers)
with open(os.path.join(directory, "urls.tmp"), "w") as f:
    f.write(urls + "\n")
os.replace(os.path.join(directory, "urls.tmp"), os.path.join(directory, "urls"))
end = time.monotonic() + lifetime
while time.monotonic() < end and os.getppid() == parent:
    time.sleep(0.2)
os._exit(0)
