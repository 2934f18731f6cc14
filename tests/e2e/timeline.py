#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draws one SVG timeline per fault an end-to-end run injected.

Reads <log dir>/events.tsv (timeline-recorder.py: every line of the
manager's log, the units' logs and the death records, stamped when it was
written, and every fault switch created) and writes, for each fault (faults
within 1 s of each other share a picture), <log dir>/timeline-<n>.svg and a
text twin timeline-<n>.txt with the same events. One lane per unit involved;
times in ms from the fault. Marked: the fault, each keepalive (the last one
before the kill named), the manager's watchdog timeout and kill, the exit,
the scheduled restart, READY=1 again, the lease released, and a standby
that starts leading, and the fault switch removed. Prints the paths of the
SVG files.

The SVG is built with xml.etree.ElementTree; every coordinate comes from
one time scale and one lane layout. The logs are input, not trusted: every
control character and every character XML refuses is drawn as \\xHH; a
keepalive or READY=1 is only the notification field it is (never text
inside STATUS=); a daemon's event only a line that starts with it. The work
grows as n log n in the lines read: labels are placed by a sweep over their
left edges, and each picture reads only the marks in its window.

    timeline.py <log dir> [--title TEXT]
"""
import bisect
import heapq
import os
import re
import sys
import xml.etree.ElementTree as ET

GROUP_MS = 1000      # faults this close share one picture
BEFORE_MS = 1000     # shown before the fault
AFTER_MS = 700       # shown after the last recovery step
DEFAULT_SPAN_MS = 8000
MAX_SPAN_MS = 30000

NOTIFY = re.compile(r"^(\S+\.service): Got notification message from PID (\d+) \((.*)\)$")
MANAGER = re.compile(r"^(\S+\.service): (.*)$")
# The manager logs a notification's fields joined by ", ". Fields whose
# value is a number or a flag cannot hold ", "; STATUS= and the other free
# text fields can, so the fields after one of them cannot be told from
# its text and are not read.
FIXED_FIELD = re.compile(r"^(READY|RELOADING|STOPPING|WATCHDOG|FDSTORE|FDPOLL|BARRIER|MAINPID|ERRNO|"
                         r"WATCHDOG_USEC|EXTEND_TIMEOUT_USEC|MONOTONIC_USEC|EXIT_STATUS|NOTIFYACCESS)=[A-Za-z0-9_-]*$")
# Characters drawn as \xHH: controls (C0, DEL, C1) and what XML 1.0 refuses.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")

# (pattern over a manager line's message, marker kind, label)
MANAGER_EVENTS = [
    (re.compile(r"^Watchdog timeout \(limit (.*)\)!"), "timeout", "watchdog timeout ({0})"),
    (re.compile(r"^Killing process \d+ \(.*\) with signal (SIGABRT|SIGKILL)\."), "kill", "manager sends {0}"),
    (re.compile(r"^Main process exited, code=(\w+), status=(\S+)"), "exit", "exited ({0}, {1})"),
    (re.compile(r"^Scheduled restart job, restart counter is at (\d+)\."), "restart", "restart {0} scheduled"),
    (re.compile(r"^Changed \S+ -> start$"), "start", "started"),
]
# (pattern over the start of a unit's log line, after its <N> priority)
UNIT_EVENTS = [
    (re.compile(r"fault injected: .*(main loop|executor)"), "seen", "daemon hits the wedge"),
    (re.compile(r"health gate closed"), "gate", "health gate closed"),
    (re.compile(r"lease generation (\d+) released: "), "release", "lease released (health gate)"),
    (re.compile(r"lease (\S+) generation (\d+) of \S+ released after its holder's death"), "release",
     "lease released (ExecStopPost)"),
    (re.compile(r"elected: leading with generation (\d+)"), "leads", "leads (generation {0})"),
]
PRIORITY = re.compile(r"^<\d>")

COLORS = {"fault": "#c62828", "timeout": "#6a1b9a", "kill": "#6a1b9a", "exit": "#000000",
          "restart": "#ef6c00", "start": "#ef6c00", "ready": "#2e7d32", "release": "#1565c0",
          "leads": "#2e7d32", "gate": "#1565c0", "seen": "#c62828", "last": "#0277bd",
          "unfault": "#c62828"}
STATE_FILL = {"up": "#e8f5e9", "starting": "#fff8e1", "down": "#ffebee"}


class Unit:
    def __init__(self, name):
        self.name = name
        self.keepalives = []   # times (us)
        self.marks = []        # (time us, kind, label)
        self.index()

    def index(self):
        """Sorts the marks and keepalives by time, for between()."""
        self.keepalives.sort()
        self.marks.sort(key=lambda m: m[0])
        self.times = [m[0] for m in self.marks]
        self.changes = sorted((t, k) for t, k, _ in self.marks if k in ("exit", "start", "ready"))

    def between(self, a, b):
        """The marks with a <= time <= b, in time order."""
        return self.marks[bisect.bisect_left(self.times, a):bisect.bisect_right(self.times, b)]


def printable(text):
    """text with every control character and every character XML refuses
    written as \\xHH (its code point, \\uHHHH past U+00FF)."""
    return UNSAFE.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100
                      else "\\u%04x" % ord(m.group()), text)


def notify_fields(content):
    """The fields of a notification as the manager logged it, up to the
    first whose text could hold ", " (STATUS= and the like)."""
    fields = []
    for field in content.split(", "):
        if not FIXED_FIELD.match(field):
            break
        fields.append(field)
    return fields


def read_events(log_dir):
    units, faults, limits = {}, [], set()

    def unit(name):
        return units.setdefault(name, Unit(name))

    with open(os.path.join(log_dir, "events.tsv"), encoding="utf-8", errors="replace") as f:
        for raw in f:
            parts = raw.rstrip("\n").split("\t", 2)
            if len(parts) != 3 or not parts[0].isdigit():
                continue
            t, source, text = int(parts[0]), printable(parts[1]), printable(parts[2])
            if source == "fault-switch":
                action, _, name = text.partition(" ")
                unit_name, dot_service, switch = name.partition(".service")
                if action == "create" and dot_service:
                    what = {"": "main loop wedged", ".executor": "executor hangs"}.get(switch, switch.lstrip("."))
                    faults.append((t, unit_name + dot_service, "fault: " + what))
                elif action == "delete" and dot_service:
                    unit(unit_name + dot_service).marks.append((t, "unfault", "fault switch removed"))
            elif source == "scenario":
                name, _, label = text.partition(": ")
                if label.startswith("fault"):
                    faults.append((t, name, label))
                else:
                    unit(name).marks.append((t, "scenario", label))
            elif source == "manager.log":
                m = NOTIFY.match(text)
                if m:
                    fields = notify_fields(m.group(3))
                    if "WATCHDOG=1" in fields:
                        unit(m.group(1)).keepalives.append(t)
                    if "READY=1" in fields:
                        unit(m.group(1)).marks.append((t, "ready", "READY=1"))
                    continue
                m = MANAGER.match(text)
                if not m:
                    continue
                for pattern, kind, label in MANAGER_EVENTS:
                    x = pattern.match(m.group(2))
                    if x:
                        unit(m.group(1)).marks.append((t, kind, label.format(*x.groups())))
                        if kind == "timeout":
                            limits.add(x.group(1))
            elif source.endswith(".service.log"):
                message = PRIORITY.sub("", text, count=1)
                for pattern, kind, label in UNIT_EVENTS:
                    x = pattern.match(message)
                    if x:
                        unit(source[:-len(".log")]).marks.append((t, kind, label.format(*x.groups())))
    for u in units.values():
        u.index()
    # A SIGKILL exit no watchdog asked for is a crash someone injected.
    fault_times = {}
    for ft, n, _ in faults:
        fault_times.setdefault(n, []).append(ft)
    for u in units.values():
        asked = [t for t, k, _ in u.marks if k in ("timeout", "kill")]
        near = sorted(fault_times.get(u.name, []))
        for t, kind, label in u.marks:
            if kind == "exit" and "KILL" in label:
                i = bisect.bisect_left(asked, t - 10_000_000)
                j = bisect.bisect_right(near, t - 2_000_000)
                if not (i < len(asked) and asked[i] <= t) and not (j < len(near) and near[j] < t + 2_000_000):
                    faults.append((t, u.name, "fault: SIGKILL (crash)"))
                    bisect.insort(near, t)
    faults.sort()
    return units, faults, limits


def group_faults(faults):
    groups = []
    for fault in faults:
        if groups and fault[0] - groups[-1][-1][0] <= GROUP_MS * 1000:
            groups[-1].append(fault)
        else:
            groups.append([fault])
    return groups


def window(units, group, next_t0):
    """[start, end] in us, and the lanes, for one group of faults: up to the
    faulted units' READY=1 after their restart, the first lease release and
    the first unit to lead after the fault, and never into the next group."""
    t0 = group[0][0]
    limit = min(next_t0 - 1000, t0 + MAX_SPAN_MS * 1000)

    def first(u, kinds, after=None):
        """The time of u's first mark of one of kinds in [t0, limit) (and
        after `after`), as a list of at most one."""
        for t, k, _ in u.between(t0, limit):
            if k in kinds and t < limit and (after is None or t > after):
                return [t]
        return []

    ends = []
    faulted = [name for _, name, _ in group]
    for name in faulted:
        u = units.get(name)
        if not u:
            continue
        exits = first(u, ("exit",))
        if exits:
            ends += first(u, ("ready",), exits[0]) or exits
    for kind in ("leads", "release"):
        ends += sorted(t for u in units.values() for t in first(u, (kind,)))[:1]
    end = max(ends) + AFTER_MS * 1000 if ends else t0 + DEFAULT_SPAN_MS * 1000
    end = min(end, limit)
    start = t0 - BEFORE_MS * 1000
    lanes = list(dict.fromkeys(faulted))
    for u in sorted(units.values(), key=lambda x: x.name):
        if u.name not in lanes and any(k in ("leads", "release", "exit") for _, k, _ in u.between(t0, end)):
            lanes.append(u.name)
    return start, end, lanes


def lane_marks(u, group, start, end):
    marks = list(u.between(start, end))
    marks += [(t, "fault", label) for t, name, label in group if name == u.name]
    # The last keepalive before each exit (or before the window ends), once.
    since = start
    for t_exit in [t for t, k, _ in marks if k == "exit"] or [end]:
        lo = bisect.bisect_left(u.keepalives, since)
        hi = bisect.bisect_right(u.keepalives, t_exit)
        if hi > lo and (t_exit != end or any(k == "fault" for _, k, _ in marks)):
            marks.append((u.keepalives[hi - 1], "last", "last keepalive"))
        since = t_exit
    return sorted(marks, key=lambda m: m[0])


def states(u, start, end):
    """(from, to, state) intervals: up, down (exit to start), starting (start to READY=1)."""
    state_of = {"exit": "down", "start": "starting", "ready": "up"}
    i = bisect.bisect_left(u.changes, (start,))
    state = state_of[u.changes[i - 1][1]] if i else "up"
    out, since = [], start
    for t, k in u.changes[i:bisect.bisect_right(u.changes, (end, "~"))]:
        new = state_of[k]
        if new != state:
            out.append((since, t, state))
            state, since = new, t
    out.append((since, end, state))
    return out


def place_labels(spans):
    """Rows for labels spanning (x0, x1) each: a label goes in the lowest
    row where it touches no label already there. A sweep over the left
    edges, O(n log n): rows whose last label ends before this one starts
    are free again, and the lowest free row is taken."""
    rows = [0] * len(spans)
    busy, free, n_rows = [], [], 0   # busy: (right edge, row); free: rows
    for i in sorted(range(len(spans)), key=lambda i: spans[i][0]):
        x0, x1 = spans[i]
        while busy and busy[0][0] < x0:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            row = heapq.heappop(free)
        else:
            row, n_rows = n_rows, n_rows + 1
        rows[i] = row
        heapq.heappush(busy, (x1, row))
    return rows


def nice_step(span_ms):
    for step in (100, 200, 250, 500, 1000, 2000, 5000):
        if span_ms / step <= 12:
            return step
    return 10000


def draw(units, group, next_t0, limits, title, path_svg, path_txt):
    start, end, lanes = window(units, group, next_t0)
    t0 = group[0][0]
    left, right, top, width = 230, 30, 70, 1180
    plot = width - left - right

    def x(t):
        return left + (t - start) * plot / (end - start)

    def ms(t):
        return (t - t0) // 1000

    layout, y, text_lines = [], top, []
    for name in lanes:
        u = units.get(name) or Unit(name)
        marks = lane_marks(u, group, start, end)
        labels, spans = [], []
        for t, kind, label in marks:
            text = "%s %+d ms" % (label, ms(t))
            # Right of the mark, or left of it where it would leave the plot.
            flip = x(t) + 6.6 * len(text) + 6 > width - 4
            spans.append((x(t) - 6.6 * len(text) - 6, x(t) + 3) if flip else (x(t) - 3, x(t) + 6.6 * len(text) + 6))
            labels.append((t, kind, text, flip))
            text_lines.append((t, name, text))
        rows = [(t, kind, text, row, flip) for (t, kind, text, flip), row in zip(labels, place_labels(spans))]
        n_rows = max([r[3] for r in rows], default=-1) + 1
        height = 40 + 16 * n_rows
        layout.append((name, u, y, height, rows))
        y += height + 14
    total_h = y + 60

    svg = ET.Element("svg", xmlns="http://www.w3.org/2000/svg", width=str(width), height=str(int(total_h)),
                     viewBox="0 0 %d %d" % (width, total_h), style="font-family:sans-serif;font-size:12px")
    ET.SubElement(svg, "title").text = title
    ET.SubElement(svg, "rect", x="0", y="0", width=str(width), height=str(int(total_h)), fill="white")
    ET.SubElement(svg, "text", x="16", y="26", style="font-size:16px;font-weight:bold").text = title
    sub = "; ".join(label.replace("fault: ", "") + " (" + name + ")" for _, name, label in group)
    if limits:
        sub += "; WatchdogSec=" + ", ".join(sorted(limits))
    ET.SubElement(svg, "text", x="16", y="46", fill="#444").text = "time 0 = " + sub
    step = nice_step((end - start) / 1000)
    axis_y = y + 4
    first = -(BEFORE_MS // step) * step
    for tick in range(first, (end - t0) // 1000 + 1, step):
        tx = x(t0 + tick * 1000)
        if tx < left or tx > width - right:
            continue
        ET.SubElement(svg, "line", x1=str(tx), y1=str(top - 6), x2=str(tx), y2=str(axis_y),
                      stroke="#000" if tick == 0 else "#e0e0e0", **{"stroke-width": "1"})
        ET.SubElement(svg, "text", x=str(tx), y=str(axis_y + 16), fill="#333",
                      **{"text-anchor": "middle"}).text = "%+d ms" % tick if tick else "0"
    for name, u, ly, height, rows in layout:
        ET.SubElement(svg, "text", x="12", y=str(ly + 22), style="font-weight:bold").text = name
        for a, b, state in states(u, start, end):
            ET.SubElement(svg, "rect", x=str(x(a)), y=str(ly + 8), width=str(max(x(b) - x(a), 0.5)), height="20",
                          fill=STATE_FILL[state])
            if x(b) - x(a) > 60:
                ET.SubElement(svg, "text", x=str(x(a) + 4), y=str(ly + 22), fill="#888",
                              style="font-size:10px").text = state
        for k in u.keepalives[bisect.bisect_left(u.keepalives, start):bisect.bisect_right(u.keepalives, end)]:
            ET.SubElement(svg, "line", x1=str(x(k)), y1=str(ly + 10), x2=str(x(k)), y2=str(ly + 26),
                          stroke="#0277bd", **{"stroke-width": "1.5"})
        for t, kind, text, row, flip in rows:
            color = COLORS.get(kind, "#555")
            label_y = ly + 44 + 16 * row
            ET.SubElement(svg, "line", x1=str(x(t)), y1=str(ly + 4), x2=str(x(t)), y2=str(label_y - 4),
                          stroke=color, **{"stroke-width": "2" if kind in ("fault", "exit", "last") else "1",
                                           "stroke-dasharray": "none" if kind != "start" else "3,2"})
            ET.SubElement(svg, "circle", cx=str(x(t)), cy=str(ly + 4), r="3.5", fill=color)
            ET.SubElement(svg, "text", x=str(x(t) - 3 if flip else x(t) + 3), y=str(label_y), fill=color,
                          **{"text-anchor": "end" if flip else "start"}).text = text
    legend = [("#0277bd", "keepalive (WATCHDOG=1)"), (STATE_FILL["up"], "up"),
              (STATE_FILL["starting"], "starting (until READY=1)"), (STATE_FILL["down"], "down")]
    lx = left
    for color, text in legend:
        ET.SubElement(svg, "rect", x=str(lx), y=str(total_h - 22), width="14", height="12", fill=color,
                      stroke="#999")
        ET.SubElement(svg, "text", x=str(lx + 20), y=str(total_h - 12)).text = text
        lx += 40 + 7 * len(text)
    ET.indent(svg)
    ET.ElementTree(svg).write(path_svg, encoding="utf-8", xml_declaration=True)
    with open(path_txt, "w", encoding="utf-8") as f:
        f.write(title + "\n" + "time 0 = " + sub + "\n")
        for t, name, text in sorted(text_lines, key=lambda m: m[0]):
            f.write("%8d ms  %-30s %s\n" % (ms(t), name, text.rsplit(" ", 2)[0]))


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    log_dir, title = args[0], None
    if len(args) == 3 and args[1] == "--title":
        title = printable(args[2])
    units, faults, limits = read_events(log_dir)
    groups = group_faults(faults)
    for n, group in enumerate(groups, 1):
        next_t0 = groups[n][0][0] if n < len(groups) else float("inf")
        kinds = sorted({label.replace("fault: ", "") for _, _, label in group})
        name = title or "%s: %s" % (", ".join(kinds), ", ".join(dict.fromkeys(u for _, u, _ in group)))
        svg = os.path.join(log_dir, "timeline-%d.svg" % n)
        draw(units, group, next_t0, limits, name, svg, os.path.join(log_dir, "timeline-%d.txt" % n))
        print(svg, flush=True)


if __name__ == "__main__":
    main()
