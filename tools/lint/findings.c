/* SPDX-License-Identifier: MIT */
/* The checks: a unit's liveness settings held against what its binary does. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "findings.h"

#define MS(usec) ((usec) / 1000)

const char *severity_name(enum severity sev) {
        return sev == SEVERITY_ERROR ? "error" : sev == SEVERITY_WARNING ? "warning" : "note";
}

void lint_add(struct lint_subject *s, const char *code, enum severity sev, const char *title, const char *fix,
              const char *format, ...) {
        struct finding *f;
        va_list ap;

        if (s->n_findings >= FINDINGS_MAX)
                return;
        f = &s->findings[s->n_findings++];
        f->code = code;
        f->severity = sev;
        f->title = title;
        snprintf(f->fix, sizeof(f->fix), "%s", fix);
        va_start(ap, format);
        vsnprintf(f->evidence, sizeof(f->evidence), format, ap);
        va_end(ap);
}

/* "SIGABRT", "ABRT" and "6" after "SIG" name the same signal. */
static bool same_signal(const char *a, const char *b) {
        if (!strncasecmp(a, "SIG", 3))
                a += 3;
        if (!strncasecmp(b, "SIG", 3))
                b += 3;
        return !strcasecmp(a, b);
}

bool lint_restarts_after_watchdog(const struct unit *u, char *why, size_t size) {
        static const char *const restarting[] = { "always", "on-failure", "on-abnormal", "on-watchdog" };
        const char *restart = unit_restart(u), *sig = u->watchdog_signal ? u->watchdog_signal : "SIGABRT";
        bool restarts = false;

        for (size_t i = 0; i < sizeof(restarting) / sizeof(restarting[0]); i++)
                restarts |= !strcmp(restart, restarting[i]);
        if (!restarts) {
                snprintf(why, size, "Restart=%s does not restart a unit the watchdog killed", restart);
                return false;
        }
        for (size_t i = 0; i < u->restart_prevent.n; i++)
                if (same_signal(u->restart_prevent.items[i], sig)) {
                        snprintf(why, size,
                                 "RestartPreventExitStatus= lists %s, the signal of the watchdog's kill: Restart=%s "
                                 "never restarts it",
                                 u->restart_prevent.items[i], restart);
                        return false;
                }
        return true;
}

static void check_static(struct lint_subject *s, enum binary_pets pets, const char *why) {
        const struct unit *u = s->unit;
        const struct probe_result *p = s->probe;
        bool probe_pets = p && p->keepalives > 0;

        if (s->binary->kind != BINARY_DYNAMIC)
                lint_add(s, "SDL009", SEVERITY_INFO, "static check inconclusive",
                         "probe it (--probe SECONDS), or check by hand that it pets on every path",
                         "%s (%s)", s->binary->detail, binary_kind_name(s->binary->kind));
        else if (u->watchdog_set && pets == PETS_UNKNOWN && !(p && p->started))
                lint_add(s, "SDL009", SEVERITY_INFO, "static check inconclusive",
                         "probe it (--probe SECONDS), or check by hand that it pets on every path",
                         "armed, and the binary %s", why);
        if (u->watchdog_set && pets == PETS_NO && !probe_pets &&
            !(p && p->started && p->duration_usec > s->probe_watchdog_usec))
                lint_add(s, "SDL001", SEVERITY_ERROR, "armed but never pets",
                         "remove WatchdogSec= (or make the main loop pet on every path)",
                         "WatchdogSec=%" PRIu64 "ms, but the binary %s: the manager would kill it after %" PRIu64
                         " ms, healthy or not",
                         MS(u->watchdog_usec), why, MS(u->watchdog_usec));
        if (!u->watchdog_set && (pets == PETS_YES || probe_pets))
                lint_add(s, "SDL002", SEVERITY_WARNING, "pets but not armed",
                         "set WatchdogSec= (e.g. 60s) so the manager acts on the missing keepalives",
                         "no WatchdogSec=, but the binary %s%s", pets == PETS_YES ? why : "sent WATCHDOG=1",
                         probe_pets ? " (and sent WATCHDOG=1 in the probe)" : "");
}

static void check_probe(struct lint_subject *s, enum binary_pets pets, const char *why) {
        const struct unit *u = s->unit;
        const struct probe_result *p = s->probe;
        uint64_t w = s->probe_watchdog_usec, timeout = unit_timeout_start(u), median = probe_median_gap(p);
        bool notify = !strcmp(unit_type(u), "notify");
        const char *access = unit_notify_access(u);

        if (p->exited)
                lint_add(s, "SDL011", SEVERITY_INFO, "exited during the probe",
                         "run it by hand with NOTIFY_SOCKET and WATCHDOG_USEC set to see why",
                         "the command exited after %" PRIu64 " ms (wait status 0x%x): the gaps cover only that time",
                         MS(p->duration_usec), (unsigned) p->exit_status);
        if (w && p->keepalives == 0 && p->duration_usec > w)
                lint_add(s, "SDL001", SEVERITY_ERROR, "armed but never pets",
                         "remove WatchdogSec= (or make the main loop pet on every path)",
                         "no WATCHDOG=1 the manager would accept in %" PRIu64 " ms with WATCHDOG_USEC=%" PRIu64
                         " (static: %s%s)%s",
                         MS(p->duration_usec), w, pets == PETS_YES ? "pets, " : "", why,
                         p->keepalives_ignored ? "; keepalives from pids NotifyAccess= excludes were dropped" : "");
        if (w && (p->n_gaps > 0 ? median > w : p->keepalives > 0 && p->max_gap_usec > w))
                lint_add(s, "SDL008", SEVERITY_ERROR, "WatchdogSec= shorter than the binary's interval",
                         "raise WatchdogSec= above twice the interval, or let the binary derive it from WATCHDOG_USEC",
                         "the binary pets every %" PRIu64 " ms (median of %zu gaps), but the watchdog is %" PRIu64
                         " ms: the manager kills it between two keepalives",
                         MS(p->n_gaps ? median : p->max_gap_usec), p->n_gaps, MS(w));
        /* sd_watchdog_enabled(3) recommends a keepalive every half of the
         * watchdog, and sd-event sends one between a half and three quarters:
         * only a gap over three quarters leaves no margin. */
        else if (w && p->keepalives > 0 && p->max_gap_usec > w / 4 * 3)
                lint_add(s, "SDL003", SEVERITY_WARNING, "keepalive gap over three quarters of WatchdogSec=",
                         "pet every half of the watchdog or more often (sdlive pets at a third), or raise WatchdogSec=",
                         "largest gap between keepalives %" PRIu64 " ms > %" PRIu64 " ms, three quarters of the "
                         "watchdog's %" PRIu64 " ms: no margin for a slow iteration",
                         MS(p->max_gap_usec), MS(w / 4 * 3), MS(w));
        if (notify && p->ready_foreign && !p->ready && strcmp(access, "all") != 0)
                lint_add(s, "SDL005", SEVERITY_ERROR, "READY=1 from a process other than the main one",
                         "send READY=1 from the main process, or set NotifyAccess=all (mind the fork hazard)",
                         "READY=1 came from pid %d, the main pid is %d; NotifyAccess=%s drops it, so the start times out",
                         (int) p->ready_foreign_pid, (int) p->main_pid, access);
        else if (notify && (p->ready ? p->ready_usec > timeout
                                     : timeout != UNIT_INFINITY && p->duration_usec >= timeout))
                lint_add(s, "SDL004", SEVERITY_ERROR, "Type=notify but no READY=1 within TimeoutStartSec=",
                         "send READY=1 once started (sd_notify or sdlive_notify_ready), or use Type=simple/exec",
                         "%s within TimeoutStartSec=%" PRIu64 " ms: the manager fails the start",
                         p->ready ? "READY=1 came too late," : "no READY=1", MS(timeout));
        else if (notify && !p->ready && !p->exited)
                lint_add(s, "SDL011", SEVERITY_INFO, "no READY=1 within the probe",
                         "probe for longer than TimeoutStartSec= to tell",
                         "no READY=1 in the probe's %" PRIu64 " ms; TimeoutStartSec= is %" PRIu64 " ms",
                         MS(p->duration_usec), MS(timeout));
        if (!strcmp(access, "all") && p->keepalives_child > 0)
                lint_add(s, "SDL006", SEVERITY_WARNING, "NotifyAccess=all and keepalives from a child",
                         "pet from the main process and set NotifyAccess=main: a child's keepalive hides a wedged "
                         "main loop",
                         "%" PRIu64 " of %" PRIu64 " keepalives came from pid %d, not the main pid %d",
                         p->keepalives_child, p->keepalives, (int) p->child_pid, (int) p->main_pid);
}

/* A unit that runs sdlive-probe (docs/probe.md): its options as
 * sdlive-probe reads them, its startup grace against the manager's start
 * timeout, and how long a daemon that stops answering lives on. */
static void check_probe_unit(struct lint_subject *s) {
        const struct unit *u = s->unit;
        const struct probe_unit *p = s->probe_unit;
        uint64_t start = unit_timeout_start(u);

        if (p->state == PROBE_UNIT_REFUSED) {
                lint_add(s, "SDL015", SEVERITY_ERROR, "sdlive-probe would refuse its options",
                         "correct the options (sdlive-probe(8)): refused, it exits 2 and never starts the daemon",
                         "%s", p->message);
                return;
        }
        if (p->state != PROBE_UNIT_OK) {
                lint_add(s, "SDL009", SEVERITY_INFO, "static check inconclusive", "check the options by hand",
                         "sdlive-probe's options not checked: %s", p->message);
                return;
        }
        if (s->probed_daemon && s->probed_daemon->kind == BINARY_MISSING)
                lint_add(s, "SDL010", SEVERITY_ERROR, "ExecStart= binary not found",
                         "install the daemon, or correct the command after sdlive-probe's --",
                         "the daemon sdlive-probe runs: %s", s->probed_daemon->detail);
        else if (s->probed_daemon && s->probed_daemon->kind == BINARY_UNRUNNABLE)
                lint_add(s, "SDL013", SEVERITY_ERROR, "ExecStart= program cannot run",
                         "install a whole executable, or correct the command after sdlive-probe's --",
                         "the daemon sdlive-probe runs: %s", s->probed_daemon->detail);
        if (start != UNIT_INFINITY && p->startup_grace_usec >= start)
                lint_add(s, "SDL016", SEVERITY_WARNING, "sdlive-probe's startup grace not within TimeoutStartSec=",
                         "give --startup-grace less than TimeoutStartSec=, or raise TimeoutStartSec=",
                         "--startup-grace is %" PRIu64 " ms, TimeoutStartSec= %" PRIu64
                         " ms: a slow start fails by the manager's timeout first, without the probe's reason "
                         "in STATUS=",
                         MS(p->startup_grace_usec), MS(start));
        if (u->watchdog_set)
                lint_add(s, "SDL017", SEVERITY_INFO, "how long a daemon that stops answering lives",
                         "for a sooner kill, shorten --period, --failure-threshold or WatchdogSec=",
                         "sdlive-probe declares it failed within %" PRIu64
                         " ms (period x failure threshold + timeout, the longest of %u probe(s)) and the "
                         "manager kills it within %" PRIu64 " ms (+ WatchdogSec= %" PRIu64
                         " ms); a shorter WatchdogSec= only kills sooner: the probe pets while its last "
                         "verdict is healthy",
                         MS(p->bound_usec), p->n_probes, MS(p->bound_usec + u->watchdog_usec),
                         MS(u->watchdog_usec));
}

void lint_check(struct lint_subject *s) {
        const struct unit *u = s->unit;
        char why[512], restart[256];
        enum binary_pets pets = binary_pets(s->binary, why, sizeof(why));

        if (u->notes.n > 0)
                lint_add(s, "SDL014", SEVERITY_INFO, "part of the unit ignored, as the manager ignores it",
                         "correct or remove what was ignored", "%s%s", u->notes.items[0],
                         u->notes.n > 1 ? " (and more: see --json)" : "");
        if (s->binary->kind == BINARY_MISSING) {
                lint_add(s, "SDL010", SEVERITY_ERROR, "ExecStart= binary not found",
                         "install the binary, or correct ExecStart=", "%s", s->binary->detail);
                return;
        }
        if (s->binary->kind == BINARY_UNRUNNABLE) {
                lint_add(s, "SDL013", SEVERITY_ERROR, "ExecStart= program cannot run",
                         "install a whole executable, or correct ExecStart=",
                         "%s: the manager's execve() would fail, and the unit with it", s->binary->detail);
                return;
        }
        check_static(s, pets, why);
        if (s->probe_unit)
                check_probe_unit(s);
        if (s->probe && s->probe->started)
                check_probe(s, pets, why);
        else if (s->probe)
                lint_add(s, "SDL011", SEVERITY_INFO, "probe could not run", "run it where its command can start",
                         "%s", s->probe->error);
        if (u->watchdog_set && !lint_restarts_after_watchdog(u, restart, sizeof(restart))) {
                /* Activated on demand: the next request starts it again. */
                bool on_demand = u->has_bus_name || u->has_sockets;

                lint_add(s, "SDL007", on_demand ? SEVERITY_INFO : SEVERITY_WARNING,
                         "a watchdog kill would not be restarted",
                         "set Restart=on-failure (or on-watchdog) and keep SIGABRT out of RestartPreventExitStatus=",
                         "%s: after the watchdog's kill it stays down%s", restart,
                         on_demand ? (u->has_bus_name ? " until the next call to its BusName= activates it"
                                                      : " until traffic on its Sockets= activates it")
                                   : "");
        }
}
