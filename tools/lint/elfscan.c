/* SPDX-License-Identifier: MIT */
/* One ELF object's imports, exports, strings and dynamic entries, via libelf. */
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "elfscan.h"

static bool has_prefix(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static bool is_notify(const char *name) { return has_prefix(name, "sd_notify") || has_prefix(name, "sd_pid_notify"); }

static void note_import(struct elf_evidence *ev, const char *name) {
        size_t len = strlen(ev->imports);

        if (strstr(ev->imports, name) || len + strlen(name) + 2 >= sizeof(ev->imports))
                return;
        snprintf(ev->imports + len, sizeof(ev->imports) - len, "%s%s", len ? " " : "", name);
}

/* One undefined dynamic symbol. */
static void classify_import(struct elf_evidence *ev, const char *name) {
        bool *flag = NULL;

        if (is_notify(name))
                flag = &ev->sd_notify;
        else if (!strcmp(name, "sd_event_set_watchdog"))
                flag = &ev->sd_event_watchdog;
        else if (!strcmp(name, "sd_watchdog_enabled"))
                flag = &ev->sd_watchdog_enabled;
        else if (!strcmp(name, "sdlive_pet_watchdog") || !strcmp(name, "sdlive_idle") || !strcmp(name, "sdlive_wait_fd"))
                flag = &ev->sdlive_pet;
        else if (!strcmp(name, "sdlive_notify_raw"))
                flag = &ev->sdlive_raw;
        if (flag) {
                *flag = true;
                note_import(ev, name);
        }
}

static void scan_strings(struct elf_evidence *ev, Elf_Scn *scn) {
        Elf_Data *data = NULL;

        while ((data = elf_getdata(scn, data))) {
                if (!data->d_buf)
                        continue;
                ev->string_watchdog |= memmem(data->d_buf, data->d_size, "WATCHDOG=1", 10) != NULL;
                ev->string_notify_socket |= memmem(data->d_buf, data->d_size, "NOTIFY_SOCKET", 13) != NULL;
        }
}

static void read_symbols(Elf *e, const GElf_Shdr *sh, Elf_Data *data, struct elf_evidence *ev) {
        for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
                GElf_Sym sym;
                const char *name;

                if (!gelf_getsym(data, (int) i, &sym) || !(name = elf_strptr(e, sh->sh_link, sym.st_name)))
                        continue;
                if (sym.st_shndx == SHN_UNDEF)
                        classify_import(ev, name);
                else
                        ev->defines_notify |= is_notify(name);
        }
}

static void read_dynamic(Elf *e, const GElf_Shdr *sh, Elf_Data *data, struct elf_links *links) {
        for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
                GElf_Dyn dyn;
                const char *name;

                if (!gelf_getdyn(data, (int) i, &dyn) ||
                    (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH) ||
                    !(name = elf_strptr(e, sh->sh_link, dyn.d_un.d_val)))
                        continue;
                if (dyn.d_tag == DT_NEEDED && links->n_needed < ELFSCAN_NEEDED_MAX)
                        snprintf(links->needed[links->n_needed++], sizeof(links->needed[0]), "%s", name);
                else if (dyn.d_tag == DT_RUNPATH)
                        snprintf(links->runpath, sizeof(links->runpath), "%s", name);
                else if (dyn.d_tag == DT_RPATH)
                        snprintf(links->rpath, sizeof(links->rpath), "%s", name);
        }
}

void elfscan_read(Elf *e, bool strings, struct elf_evidence *ev, struct elf_links *links) {
        size_t shstrndx, phnum;
        Elf_Scn *scn = NULL;
        GElf_Ehdr eh;

        memset(ev, 0, sizeof(*ev));
        memset(links, 0, sizeof(*links));
        links->elf_class = gelf_getclass(e);
        if (gelf_getehdr(e, &eh))
                links->machine = eh.e_machine;
        if (elf_getshdrstrndx(e, &shstrndx) < 0)
                shstrndx = 0;
        if (elf_getphdrnum(e, &phnum) == 0)
                for (size_t i = 0; i < phnum; i++) {
                        GElf_Phdr ph;

                        if (gelf_getphdr(e, (int) i, &ph) && ph.p_type == PT_DYNAMIC)
                                ev->dynamic = true;
                }
        while ((scn = elf_nextscn(e, scn))) {
                GElf_Shdr sh;
                Elf_Data *data;
                const char *section = NULL;

                if (!gelf_getshdr(scn, &sh))
                        continue;
                if (shstrndx)
                        section = elf_strptr(e, shstrndx, sh.sh_name);
                if (section && (!strcmp(section, ".go.buildinfo") || !strcmp(section, ".note.go.buildid")))
                        ev->go = true;
                if (strings && sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) && !(sh.sh_flags & SHF_EXECINSTR))
                        scan_strings(ev, scn);
                if ((sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_DYNAMIC) || sh.sh_entsize == 0 ||
                    !(data = elf_getdata(scn, NULL)))
                        continue;
                if (sh.sh_type == SHT_DYNSYM)
                        read_symbols(e, &sh, data, ev);
                else
                        read_dynamic(e, &sh, data, links);
        }
}
