/* SPDX-License-Identifier: MIT */
/* Text and JSON reports of the findings. */
#include <inttypes.h>
#include <json.h>
#include <string.h>

#include "escape.h"
#include "report.h"

#define TEXT_MAX 8192

static const char *pets_name(enum binary_pets pets) {
        return pets == PETS_YES ? "yes" : pets == PETS_NO ? "no" : "unknown";
}

void report_text(FILE *out, const struct lint_subject *s) {
        static char name[TEXT_MAX], text[TEXT_MAX];
        char why[512];
        bool counted = false;

        escape_terminal(s->unit && s->unit->name ? s->unit->name : "?", name, sizeof(name));
        for (int i = 0; i < s->n_findings; i++) {
                const struct finding *f = &s->findings[i];

                escape_terminal(f->evidence, text, sizeof(text));
                fprintf(out, "%s: %s %s: %s: %s (fix: %s)\n", name, f->code, severity_name(f->severity), f->title,
                        text, f->fix);
                counted |= f->severity != SEVERITY_INFO;
        }
        if (counted || !s->binary || !s->unit)
                return;
        enum binary_pets pets = binary_pets(s->binary, why, sizeof(why));
        escape_terminal(why, text, sizeof(text));
        fprintf(out, "%s: ok: %s, pets: %s (%s)", name,
                s->unit->watchdog_set ? "armed" : "not armed", pets_name(pets), text);
        if (s->probe && s->probe->started)
                fprintf(out, "; probe: %" PRIu64 " keepalives, largest gap %" PRIu64 " ms, READY=1 %s", s->probe->keepalives,
                        s->probe->max_gap_usec / 1000, s->probe->ready ? "yes" : "no");
        fputc('\n', out);
}

/* A JSON string of untrusted text: valid UTF-8 whatever it held. */
static struct json_object *json_text(const char *text) {
        static char clean[TEXT_MAX];

        escape_utf8(text, clean, sizeof(clean));
        return json_object_new_string(clean);
}

struct json_object *report_json_begin(void) { return json_object_new_array(); }

#define ADD(obj, key, value)                                                                                  \
        do {                                                                                                  \
                struct json_object *v_ = (value);                                                             \
                if (json_object_object_add((obj), (key), v_) < 0) {                                           \
                        json_object_put(v_);                                                                  \
                        goto oom;                                                                             \
                }                                                                                             \
        } while (0)

static struct json_object *probe_json(const struct lint_subject *s) {
        const struct probe_result *p = s->probe;
        struct json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        ADD(o, "started", json_object_new_boolean(p->started));
        if (!p->started) {
                ADD(o, "error", json_text(p->error));
                return o;
        }
        ADD(o, "watchdog_usec", s->probe_watchdog_usec ? json_object_new_int64((int64_t) s->probe_watchdog_usec) : NULL);
        ADD(o, "duration_ms", json_object_new_int64((int64_t) (p->duration_usec / 1000)));
        ADD(o, "main_pid", json_object_new_int(p->main_pid));
        ADD(o, "exited", json_object_new_boolean(p->exited));
        ADD(o, "ready", json_object_new_boolean(p->ready));
        ADD(o, "ready_ms", p->ready ? json_object_new_int64((int64_t) (p->ready_usec / 1000)) : NULL);
        ADD(o, "ready_foreign_pid", p->ready_foreign ? json_object_new_int(p->ready_foreign_pid) : NULL);
        ADD(o, "keepalives", json_object_new_int64((int64_t) p->keepalives));
        ADD(o, "keepalives_from_children", json_object_new_int64((int64_t) p->keepalives_child));
        ADD(o, "keepalives_ignored", json_object_new_int64((int64_t) p->keepalives_ignored));
        ADD(o, "max_gap_ms", json_object_new_int64((int64_t) (p->max_gap_usec / 1000)));
        ADD(o, "median_gap_ms", json_object_new_int64((int64_t) (probe_median_gap(p) / 1000)));
        ADD(o, "status", json_text(p->status));
        ADD(o, "messages", json_object_new_int64((int64_t) p->messages));
        return o;
oom:
        json_object_put(o);
        return NULL;
}

static struct json_object *binary_json(const struct binary *b) {
        struct json_object *o = json_object_new_object();
        char why[512];
        enum binary_pets pets = binary_pets(b, why, sizeof(why));

        if (!o)
                return NULL;
        ADD(o, "path", json_text(b->path));
        ADD(o, "kind", json_text(binary_kind_name(b->kind)));
        ADD(o, "imports", json_text(b->own.imports));
        ADD(o, "links_libsystemd", json_object_new_boolean(b->libs.links_libsystemd));
        ADD(o, "links_libsdlive", json_object_new_boolean(b->libs.links_libsdlive));
        ADD(o, "private_library", b->libs.provider ? json_text(b->libs.provider_name) : NULL);
        ADD(o, "libraries_read", json_object_new_int64((int64_t) b->libs.n_read));
        ADD(o, "pets", json_text(pets_name(pets)));
        ADD(o, "evidence", json_text(why));
        return o;
oom:
        json_object_put(o);
        return NULL;
}

/* A unit that runs sdlive-probe: its options as sdlive-probe reads them. */
static struct json_object *probe_unit_json(const struct lint_subject *s) {
        static const char *const states[] = {
                [PROBE_UNIT_NOT] = "not", [PROBE_UNIT_OK] = "accepted",
                [PROBE_UNIT_REFUSED] = "refused", [PROBE_UNIT_UNCHECKED] = "unchecked",
        };
        const struct probe_unit *p = s->probe_unit;
        struct json_object *o = json_object_new_object();
        bool ok = p->state == PROBE_UNIT_OK;

        if (!o)
                return NULL;
        ADD(o, "options", json_text(states[p->state]));
        ADD(o, "message", ok ? NULL : json_text(p->message));
        ADD(o, "probes", ok ? json_object_new_int64(p->n_probes) : NULL);
        ADD(o, "detection_bound_usec", ok ? json_object_new_int64((int64_t) p->bound_usec) : NULL);
        ADD(o, "startup_grace_usec", ok ? json_object_new_int64((int64_t) p->startup_grace_usec) : NULL);
        ADD(o, "daemon", ok && p->command_at > 0 && s->probed_daemon ? json_text(s->probed_daemon->path) : NULL);
        return o;
oom:
        json_object_put(o);
        return NULL;
}

int report_json_add(struct json_object *all, const struct lint_subject *s, const char *name) {
        struct json_object *o = json_object_new_object(), *findings = NULL, *files = NULL, *notes = NULL;
        const struct unit *u = s->unit;

        if (!o)
                return -1;
        ADD(o, "unit", json_text(u && u->name ? u->name : name));
        if (u && u->name) {
                ADD(o, "files", files = json_object_new_array());
                for (size_t i = 0; i < u->n_files; i++) {
                        char path[8192];

                        snprintf(path, sizeof(path), "%s%s", u->root ? u->root : "", u->files[i]);
                        if (json_object_array_add(files, json_text(path)) < 0)
                                goto oom;
                }
                ADD(o, "ignored", notes = json_object_new_array());
                for (size_t i = 0; i < u->notes.n; i++)
                        if (json_object_array_add(notes, json_text(u->notes.items[i])) < 0)
                                goto oom;
                ADD(o, "type", json_text(unit_type(u)));
                ADD(o, "notify_access", json_text(unit_notify_access(u)));
                ADD(o, "watchdog_usec", u->watchdog_set ? json_object_new_int64((int64_t) u->watchdog_usec) : NULL);
                ADD(o, "restart", json_text(unit_restart(u)));
                ADD(o, "exec_start", u->exec_start.n ? json_text(u->exec_start.items[0]) : NULL);
                ADD(o, "timeout_start_usec", unit_timeout_start(u) == UNIT_INFINITY
                                                     ? NULL
                                                     : json_object_new_int64((int64_t) unit_timeout_start(u)));
        }
        if (s->binary)
                ADD(o, "binary", binary_json(s->binary));
        if (s->probe)
                ADD(o, "probe", probe_json(s));
        if (s->probe_unit)
                ADD(o, "sdlive_probe", probe_unit_json(s));
        ADD(o, "findings", findings = json_object_new_array());
        for (int i = 0; i < s->n_findings; i++) {
                const struct finding *f = &s->findings[i];
                struct json_object *x = json_object_new_object();

                if (!x || json_object_array_add(findings, x) < 0) {
                        json_object_put(x);
                        goto oom;
                }
                ADD(x, "code", json_text(f->code));
                ADD(x, "severity", json_text(severity_name(f->severity)));
                ADD(x, "title", json_text(f->title));
                ADD(x, "evidence", json_text(f->evidence));
                ADD(x, "fix", json_text(f->fix));
        }
        if (json_object_array_add(all, o) < 0)
                goto oom;
        return 0;
oom:
        json_object_put(o);
        return -1;
}

int report_json_end(FILE *out, struct json_object *all) {
        const char *text = json_object_to_json_string_ext(all, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        int r = text && fprintf(out, "%s\n", text) >= 0 ? 0 : -1;

        json_object_put(all);
        return r;
}
