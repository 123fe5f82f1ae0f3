/* swinrun fetch: a MONAI model-zoo bundle (docs/fetch.md). The bundle's small files come
 * from the model-zoo repository at a pinned commit, the large ones from the URLs its
 * large_files.yml names, each checked against the hash there. Everything is gathered in
 * DEST.partial/ beside the destination and renamed into place only when complete. */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/cli/cli.h"
#include "apps/cli/fetch_manifest.h"
#ifdef SWIN_HAVE_CURL
#include "apps/cli/fetch_digest.h"
#include "apps/cli/fetch_http.h"
#endif

int cli_data_path(char *buf, size_t n, const char *rel)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int k = xdg && *xdg ? snprintf(buf, n, "%s/%s", xdg, rel)
                        : snprintf(buf, n, "%s/.local/share/%s", home ? home : "", rel);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

#ifndef SWIN_HAVE_CURL
int cli_fetch(const struct cli_args *a)
{
    fprintf(stderr, "swinrun fetch: this swinrun was built without libcurl; install libcurl4-openssl-dev and "
                    "libssl-dev (tools/ci/setup_env.sh does) and rebuild\n");
    return 1;
}
#else

/* The model-zoo versions swinrun knows, each at the repository commit that made it. */
struct zoo_pin {
    const char *name, *version, *commit;
};
static const struct zoo_pin pins[] = {
    {CLI_DEFAULT_BUNDLE, "0.5.6", "5b8cb67f7bca3612000863bbaac80f0880789d00"},
    {CLI_DEFAULT_BUNDLE, "0.5.5", "efadc57d61537f649f4aa449146ebbb03279ff45"},
    {CLI_DEFAULT_BUNDLE, "0.5.4", "ccea9c22220d161ec001af384f8a0211d977459a"},
    {CLI_DEFAULT_BUNDLE, "0.5.3", "74e258e808e9632e7b33765b35586d80bb8b646a"},
};
#define ZOO_RAW "https://raw.githubusercontent.com/Project-MONAI/model-zoo"

/* The small files of a bundle: fetched whole, at most SMALL_MAX bytes each; where a bundle may
 * write a file in JSON or YAML (MONAI reads either), the first of the names the server has. */
enum { SMALL_NAMES = 3 };
static const struct {
    const char *path[SMALL_NAMES];
    int required;
} small_files[] = {
    {{"configs/metadata.json"}, 1},
    {{"configs/inference.json", "configs/inference.yaml", "configs/inference.yml"}, 1},
    {{"large_files.yml", "large_files.yaml", "large_files.json"}, 1},
    {{"LICENSE"}, 1},
    {{"docs/README.md"}, 0},
    {{"docs/data_license.txt"}, 0},
};
#define SMALL_MAX (4u << 20)

static volatile sig_atomic_t cancelled;
static void on_signal(int sig)
{
    cancelled = 1;
}

static int bad_name(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max || s[0] == '.' || s[0] == '-') return 1;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("._-+", *s)))
            return 1;
    return 0;
}

/* mkdir -p of the folders above path (path's last component is not made). */
static swin_status make_parents(const char *path, swin_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return swin_error_set(err, SWIN_ERR_ARG, "path too long: %s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) && errno != EEXIST)
            return swin_error_set(err, SWIN_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    return SWIN_OK;
}

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(p);
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static swin_status write_file(const char *path, const char *data, size_t len, swin_error *err)
{
    swin_status st = make_parents(path, err);
    if (st) return st;
    FILE *f = fopen(path, "wb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    int e = fwrite(data, 1, len, f) == len && !fflush(f) && !fsync(fileno(f)) ? 0 : errno;
    if (fclose(f) && !e) e = errno;
    return e ? swin_error_set(err, SWIN_ERR_IO, "cannot write %s: %s", path, strerror(e)) : SWIN_OK;
}

static int holds_nothing(const char *dir)
{
    DIR *d = opendir(dir);
    int empty = d != NULL;
    for (struct dirent *e; d && empty && (e = readdir(d));) empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    if (d) closedir(d);
    return empty;
}

/* Whether the staging folder is absent or holds nothing but swinrun fetch's bundle/ and parts/. */
static int only_staging(const char *dir)
{
    struct stat sb;
    if (lstat(dir, &sb)) return errno == ENOENT;
    DIR *d = S_ISDIR(sb.st_mode) ? opendir(dir) : NULL;
    int ok = d != NULL;
    for (struct dirent *e; d && ok && (e = readdir(d));)
        ok = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "bundle") ||
             !strcmp(e->d_name, "parts");
    if (d) closedir(d);
    return ok;
}

/* Whether the folder holds a file with data in it (a partial download worth resuming). */
static int holds_data(const char *dir)
{
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char p[4608];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        found = e->d_name[0] != '.' && !stat(p, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0;
    }
    if (d) closedir(d);
    return found;
}

static int digest_matches(const char *path, const struct fetch_large_file *lf)
{
    char hex[129];
    swin_error ignored = {0};
    return access(path, R_OK) == 0 && !fetch_file_digest(path, lf->hash_type, hex, &ignored) &&
           !strcmp(hex, lf->hash_val);
}

struct job {
    const char *name, *version; /* version: NULL when --from without --version takes what the server has */
    char root[2048];            /* the URL holding models/NAME/... */
    char dest[4096], staging[4096], bundle[4200], parts[4200];
    struct fetch_http http;
    char metadata_version[64];
    struct fetch_large_files large;
};

/* Small file i under the first of its names the server has: its bytes (data, len) and that name;
 * SWIN_OK with *name NULL when an optional file is on the server under none. */
static swin_status fetch_small_file(struct job *j, size_t i, char **data, size_t *len, const char **name,
                                    swin_error *err)
{
    swin_status st = SWIN_OK;
    *name = NULL;
    for (int k = 0; k < SMALL_NAMES && small_files[i].path[k]; k++) {
        char url[4096];
        long status = 0;
        snprintf(url, sizeof url, "%s/models/%s/%s", j->root, j->name, small_files[i].path[k]);
        st = fetch_http_get(&j->http, url, SMALL_MAX, data, len, &status, err);
        if (!st) {
            *name = small_files[i].path[k];
            return SWIN_OK;
        }
        if (status != 404) return st;
    }
    if (!small_files[i].required) {
        fprintf(stderr, "swinrun fetch: %s: none on the server (optional)\n", small_files[i].path[0]);
        return SWIN_OK;
    }
    if (small_files[i].path[1]) /* every name it was looked for under */
        return swin_error_set(err, st, "HTTP status 404 for %s, %s%s%s under %s/models/%s/", small_files[i].path[0],
                              small_files[i].path[1], small_files[i].path[2] ? " and " : "",
                              small_files[i].path[2] ? small_files[i].path[2] : "", j->root, j->name);
    return st;
}

/* The small files into staging/bundle; metadata.json's version checked, large_files read. */
static swin_status fetch_small_files(struct job *j, swin_error *err)
{
    for (size_t i = 0; i < sizeof small_files / sizeof *small_files; i++) {
        char path[4400], *data = NULL;
        size_t len = 0;
        const char *name;
        swin_status st = fetch_small_file(j, i, &data, &len, &name, err);
        if (st || !name) {
            free(data);
            if (st) return st;
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", j->bundle, name);
        st = write_file(path, data, len, err);
        if (!st && !strcmp(name, "configs/metadata.json"))
            st = fetch_metadata_version(data, len, j->metadata_version, sizeof j->metadata_version, err);
        if (!st && !strncmp(name, "large_files.", 12)) st = fetch_large_files_parse(name, data, len, &j->large, err);
        free(data);
        if (st) return st;
    }
    if (j->version && strcmp(j->version, j->metadata_version))
        return swin_error_set(err, SWIN_ERR_FORMAT, "configs/metadata.json says version %s, not %s",
                              j->metadata_version, j->version);
    for (int k = 0; k < j->large.n; k++)
        for (size_t i = 0; i < sizeof small_files / sizeof *small_files; i++)
            for (int n = 0; n < SMALL_NAMES && small_files[i].path[n]; n++)
                if (!strcmp(j->large.file[k].path, small_files[i].path[n]))
                    return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml names %s, a file of the bundle itself",
                                          small_files[i].path[n]);
    return SWIN_OK;
}

/* One large file into staging/bundle: a copy already at the destination with the right
 * hash is linked, else it is downloaded (resuming parts/HASH.part) and checked. */
static swin_status fetch_large_file(struct job *j, const struct fetch_large_file *lf, swin_error *err)
{
    char target[4608], existing[4608], part[4608];
    snprintf(target, sizeof target, "%s/%s", j->bundle, lf->path);
    snprintf(existing, sizeof existing, "%s/%s", j->dest, lf->path);
    snprintf(part, sizeof part, "%s/%s.part", j->parts, lf->hash_val);
    swin_status st = make_parents(target, err);
    if (st) return st;
    if (digest_matches(existing, lf) && !link(existing, target)) {
        fprintf(stderr, "swinrun fetch: %s: the copy in %s has the right %s, kept\n", lf->path, j->dest, lf->hash_type);
        return SWIN_OK;
    }
    if (digest_matches(part, lf)) { /* complete before an earlier run stopped */
        fprintf(stderr, "swinrun fetch: %s: complete in %s\n", lf->path, part);
    } else {
        fprintf(stderr, "swinrun fetch: %s from %s\n", lf->path, lf->url);
        if ((st = fetch_http_get_resumable(&j->http, lf->url, part, lf->path, err))) return st;
    }
    char hex[129];
    if ((st = fetch_file_digest(part, lf->hash_type, hex, err))) return st;
    if (strcmp(hex, lf->hash_val)) {
        unlink(part);
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: %s %s, but large_files.yml says %s (the download was removed)",
                              lf->path, lf->hash_type, hex, lf->hash_val);
    }
    fprintf(stderr, "swinrun fetch: %s: %s %s, as large_files.yml says\n", lf->path, lf->hash_type, hex);
    if (rename(part, target))
        return swin_error_set(err, SWIN_ERR_IO, "cannot move %s to %s: %s", part, target, strerror(errno));
    return SWIN_OK;
}

/* staging/bundle becomes dest in one rename (an existing dest is swapped out atomically,
 * then removed with the staging folder). Signals wait until it is done. */
static swin_status publish(struct job *j, swin_error *err)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct stat sb;
    int rc = stat(j->dest, &sb) == 0 ? renameat2(AT_FDCWD, j->bundle, AT_FDCWD, j->dest, RENAME_EXCHANGE)
                                     : rename(j->bundle, j->dest);
    int e = errno;
    if (!rc) {
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", j->dest);
        char *slash = strrchr(parent, '/');
        if (slash) *(slash == parent ? slash + 1 : slash) = 0;
        int dirfd = open(slash ? parent : ".", O_RDONLY | O_DIRECTORY);
        if (dirfd >= 0) { /* the new entry made durable */
            fsync(dirfd);
            close(dirfd);
        }
        remove_tree(j->staging);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc ? swin_error_set(err, SWIN_ERR_IO, "cannot move %s to %s: %s", j->bundle, j->dest, strerror(e)) : SWIN_OK;
}

/* Where the files come from, where they go, and the staging folders made. */
static swin_status prepare(const struct cli_args *a, struct job *j, swin_error *err)
{
    j->name = a->npos ? a->pos[0] : CLI_DEFAULT_BUNDLE;
    if (bad_name(j->name, 128))
        return swin_error_set(err, SWIN_ERR_ARG, "'%s' is not a bundle name (A-Z a-z 0-9 . _ - +)", j->name);
    if (a->fetch_version && bad_name(a->fetch_version, 63))
        return swin_error_set(err, SWIN_ERR_ARG, "'%s' is not a version (A-Z a-z 0-9 . _ - +)", a->fetch_version);
    const char *from = a->fetch_from;
    if (!from && getenv("SWINRUN_ZOO_URL") && *getenv("SWINRUN_ZOO_URL")) from = getenv("SWINRUN_ZOO_URL");
    const struct zoo_pin *pin = NULL;
    for (size_t i = 0; i < sizeof pins / sizeof *pins && !pin; i++)
        if (!strcmp(pins[i].name, j->name) && (!a->fetch_version || !strcmp(pins[i].version, a->fetch_version)))
            pin = &pins[i];
    j->version = a->fetch_version ? a->fetch_version : pin ? pin->version : NULL;
    if (from) {
        if (strncmp(from, "https://", 8) && strncmp(from, "http://", 7))
            return swin_error_set(err, SWIN_ERR_ARG, "--from takes an http:// or https:// URL, not '%s'", from);
        if (snprintf(j->root, sizeof j->root, "%s", from) >= (int)sizeof j->root)
            return swin_error_set(err, SWIN_ERR_ARG, "--from URL too long");
        for (size_t n = strlen(j->root); n && j->root[n - 1] == '/'; n--) j->root[n - 1] = 0;
        j->http.allow_http = !strncmp(from, "http://", 7);
    } else if (pin) {
        snprintf(j->root, sizeof j->root, "%s/%s", ZOO_RAW, pin->commit);
    } else {
        char known[512] = "";
        for (size_t i = 0; i < sizeof pins / sizeof *pins; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s %s", i ? ", " : "", pins[i].name,
                     pins[i].version);
        return swin_error_set(err, SWIN_ERR_ARG,
                              "no pinned model-zoo commit for %s%s%s (pinned: %s); --from URL "
                              "names another source",
                              j->name, a->fetch_version ? " " : "", a->fetch_version ? a->fetch_version : "", known);
    }
    j->http.timeout_s = a->fetch_timeout;
    j->http.cancel = &cancelled;
    char rel[256];
    snprintf(rel, sizeof rel, "swinrun/bundles/%s", j->name);
    if (a->fetch_dest) {
        if (snprintf(j->dest, sizeof j->dest, "%s", a->fetch_dest) >= (int)sizeof j->dest)
            return swin_error_set(err, SWIN_ERR_ARG, "--dest path too long");
        for (size_t n = strlen(j->dest); n > 1 && j->dest[n - 1] == '/'; n--) j->dest[n - 1] = 0;
    } else if (cli_data_path(j->dest, sizeof j->dest, rel)) {
        return swin_error_set(err, SWIN_ERR_ARG, "$XDG_DATA_HOME or $HOME too long");
    }
    /* an existing destination is replaced, and what it held removed: only a bundle (or nothing) */
    struct stat sb;
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/configs/metadata.json", j->dest);
    if (stat(j->dest, &sb) == 0 && (!S_ISDIR(sb.st_mode) || (!holds_nothing(j->dest) && stat(meta, &sb))))
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%s exists and is not a bundle folder (no configs/metadata.json): swinrun fetch "
                              "replaces only a bundle; name a new or empty folder with --dest",
                              j->dest);
    snprintf(j->staging, sizeof j->staging, "%s.partial", j->dest);
    snprintf(j->bundle, sizeof j->bundle, "%s/bundle", j->staging);
    snprintf(j->parts, sizeof j->parts, "%s/parts", j->staging);
    if (!only_staging(j->staging))
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%s holds files swinrun fetch did not put there (it stages in bundle/ and parts/ "
                              "only); move them, or name another --dest",
                              j->staging);
    swin_status st = make_parents(j->parts, err);
    if (!st && mkdir(j->parts, 0755) && errno != EEXIST)
        st = swin_error_set(err, SWIN_ERR_IO, "cannot create %s: %s", j->parts, strerror(errno));
    if (!st) remove_tree(j->bundle); /* an earlier run's files; its partial downloads in parts/ stay */
    return st;
}

int cli_fetch(const struct cli_args *a)
{
    if (a->npos > 1) {
        fprintf(stderr, "swinrun fetch: expected at most one bundle NAME (try swinrun fetch --help)\n");
        return 2;
    }
    static struct job j; /* large: the large_files list holds URLs */
    memset(&j, 0, sizeof j);
    swin_error err = {0};
    swin_status st = prepare(a, &j, &err);
    if (st) {
        fprintf(stderr, "swinrun fetch: %s\n", err.msg);
        return st == SWIN_ERR_ARG ? 2 : 1;
    }
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    fprintf(stderr, "swinrun fetch: %s %s from %s/models/%s into %s\n", j.name, j.version ? j.version : "(any version)",
            j.root, j.name, j.dest);
    st = fetch_http_init(&err);
    int http_started = !st;
    if (!st) st = fetch_small_files(&j, &err);
    for (int i = 0; !st && i < j.large.n; i++) st = fetch_large_file(&j, &j.large.file[i], &err);
    if (!st && cancelled) st = swin_error_set(&err, SWIN_ERR_CANCELLED, "interrupted");
    if (!st) st = publish(&j, &err);
    if (http_started) fetch_http_cleanup();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (st) {
        remove_tree(j.bundle);
        if (!holds_data(j.parts)) { /* nothing to resume: no staging folder left */
            remove_tree(j.staging);
            fprintf(stderr, "swinrun fetch: %s; nothing was installed in %s\n", err.msg, j.dest);
        } else {
            fprintf(stderr,
                    "swinrun fetch: %s; nothing was installed in %s (the partial download in %s is "
                    "resumed by the next swinrun fetch)\n",
                    err.msg, j.dest, j.parts);
        }
        return st == SWIN_ERR_ARG ? 2 : 1;
    }
    printf("%s %s in %s\n", j.name, j.metadata_version, j.dest);
    if (!a->fetch_dest && !strcmp(j.name, CLI_DEFAULT_BUNDLE))
        printf("swinrun CT.nii.gz OUT.nii.gz takes it when neither --model nor SWINRUN_MODEL is given\n");
    return 0;
}
#endif
