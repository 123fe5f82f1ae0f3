#include "weights/bundle/bundle_embedded.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "weights/checkpoint/zip_reader.h"

/* ARCHIVE/extra/NAME: one folder above extra/, as torch.jit.save names its records. */
static const struct swin_zip_entry *extra(const struct swin_zip *z, const char *name)
{
    for (int i = 0; i < z->n; i++) {
        const char *n = z->entries[i].name, *slash = strchr(n, '/');
        if (slash && !strncmp(slash + 1, "extra/", 6) && !strcmp(slash + 7, name)) return &z->entries[i];
    }
    return NULL;
}

static swin_status open_zip(const char *path, struct swin_zip *z, int *fd, swin_error *err)
{
    struct stat s;
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0 || fstat(*fd, &s) || !S_ISREG(s.st_mode)) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot be read", path);
    }
    swin_status st = swin_zip_open(path, *fd, (uint64_t)s.st_size, z, err);
    if (st) close(*fd), *fd = -1;
    return st;
}

bool swin_bundle_embedded(const char *path)
{
    unsigned char head[4] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool zip = read(fd, head, 4) == 4 && !memcmp(head, "PK\3\4", 4);
    close(fd);
    struct swin_zip z;
    swin_error ignored;
    if (!zip || open_zip(path, &z, &fd, &ignored)) return false;
    bool found = extra(&z, "inference.json") != NULL;
    swin_zip_close(&z);
    close(fd);
    return found;
}

static swin_status parse(const struct swin_zip *z, const struct swin_zip_entry *e, const char *name,
                         struct swin_bundle_config *c, swin_error *err)
{
    if (e->usize > SWIN_BUNDLE_CONFIG_MAX_BYTES)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: larger than %u MiB, not a bundle configuration", name,
                              SWIN_BUNDLE_CONFIG_MAX_BYTES >> 20);
    char *text = malloc((size_t)e->usize + 1);
    size_t len = 0;
    if (!text) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %s", name);
    swin_status st = swin_zip_inflate(z, e, text, (size_t)e->usize, &len, err);
    if (!st) st = swin_bundle_config_parse(text, len, name, c, err);
    free(text);
    return st;
}

swin_status swin_bundle_embedded_configs(const char *path, struct swin_bundle_config *meta, bool *has_meta,
                                         struct swin_bundle_config *inf, swin_error *err)
{
    memset(meta, 0, sizeof *meta);
    memset(inf, 0, sizeof *inf);
    *has_meta = false;
    struct swin_zip z;
    int fd;
    swin_status st = open_zip(path, &z, &fd, err);
    if (st) return st;
    const struct swin_zip_entry *i = extra(&z, "inference.json"), *m = extra(&z, "metadata.json");
    st = i ? parse(&z, i, "extra/inference.json", inf, err)
           : swin_error_set(err, SWIN_ERR_FORMAT, "%s: no extra/inference.json", path);
    if (!st && m && !(st = parse(&z, m, "extra/metadata.json", meta, err))) *has_meta = true;
    if (st) swin_bundle_config_free(inf);
    swin_zip_close(&z);
    close(fd);
    return st;
}
