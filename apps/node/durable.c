/* Durable file-system steps (durable.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/node/durable.h"

int node_path(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

static swin_status sync_path(const char *path, int flags, swin_error *err)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open to sync: %s", path, strerror(errno));
    int bad = fsync(fd) != 0;
    int e = errno;
    close(fd);
    return bad ? swin_error_set(err, SWIN_ERR_IO, "%s: fsync failed: %s", path, strerror(e)) : SWIN_OK;
}

swin_status durable_sync_dir(const char *dir, swin_error *err)
{
    return sync_path(dir, O_RDONLY | O_DIRECTORY, err);
}

swin_status durable_sync_file(const char *path, swin_error *err)
{
    return sync_path(path, O_RDONLY, err);
}

static void parent_of(const char *path, char *out, size_t size)
{
    node_path(out, size, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash) node_path(out, size, ".");
    else if (slash == out) out[1] = 0;
    else *slash = 0;
}

swin_status durable_rename(const char *from, const char *to, swin_error *err)
{
    if (rename(from, to) != 0)
        return swin_error_set(err, SWIN_ERR_IO, "rename %s -> %s: %s", from, to, strerror(errno));
    char a[PATH_MAX], b[PATH_MAX];
    parent_of(from, a, sizeof a);
    parent_of(to, b, sizeof b);
    swin_status st = durable_sync_dir(b, err);
    if (!st && strcmp(a, b)) st = durable_sync_dir(a, err);
    return st;
}

swin_status durable_mkdir(const char *dir, swin_error *err)
{
    if (mkdir(dir, 0700) != 0) {
        if (errno != EEXIST) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot create it: %s", dir, strerror(errno));
        struct stat sb;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
            return swin_error_set(err, SWIN_ERR_IO, "%s: exists and is not a folder", dir);
        if ((sb.st_mode & 07777) != 0700 && chmod(dir, 0700) != 0)
            return swin_error_set(err, SWIN_ERR_IO, "%s: cannot make it private (0700): %s", dir, strerror(errno));
        return SWIN_OK;
    }
    char parent[PATH_MAX];
    parent_of(dir, parent, sizeof parent);
    return durable_sync_dir(parent, err);
}

swin_status durable_write(const char *path, const void *data, size_t len, swin_error *err)
{
    char tmp[PATH_MAX];
    if (node_path(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return swin_error_set(err, SWIN_ERR_IO, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot create it: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = len;
    int e = 0;
    while (left && !e) {
        ssize_t w = write(fd, p, left);
        if (w > 0) p += w, left -= (size_t)w;
        else if (w < 0 && errno != EINTR) e = errno;
    }
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) {
        unlink(tmp);
        return swin_error_set(err, SWIN_ERR_IO, "%s: write failed: %s", path, strerror(e));
    }
    swin_status st = durable_rename(tmp, path, err);
    if (st) unlink(tmp);
    return st;
}

/* What walk does below a folder: file for each entry that is not a folder, dir_done for each
 * folder once its entries are done (the folder itself last); each returns 0 or -1. */
struct tree_visit {
    int (*file)(const char *path, const struct stat *sb, void *user);
    int (*dir_done)(const char *path, void *user);
    void *user;
};

/* -1 when a visit failed or a folder could not be opened (one that is not there is empty). */
static int walk(const char *dir, const struct tree_visit *v)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[PATH_MAX];
        node_path(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) != 0) continue;
        rc |= S_ISDIR(sb.st_mode) ? walk(p, v) : v->file(p, &sb, v->user);
    }
    closedir(d);
    return rc | (v->dir_done ? v->dir_done(dir, v->user) : 0);
}

static int unlink_file(const char *path, const struct stat *sb, void *user)
{
    (void)sb;
    (void)user;
    return unlink(path) != 0 && errno != ENOENT ? -1 : 0;
}

static int remove_dir(const char *path, void *user)
{
    (void)user;
    return rmdir(path) != 0 && errno != ENOENT ? -1 : 0;
}

static int add_bytes(const char *path, const struct stat *sb, void *user)
{
    (void)path;
    if (S_ISREG(sb->st_mode)) *(uint64_t *)user += (uint64_t)sb->st_size;
    return 0;
}

swin_status durable_remove_tree(const char *dir, swin_error *err)
{
    if (walk(dir, &(struct tree_visit){.file = unlink_file, .dir_done = remove_dir}) != 0)
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot remove it: %s", dir, strerror(errno));
    char parent[PATH_MAX];
    parent_of(dir, parent, sizeof parent);
    return durable_sync_dir(parent, err);
}

uint64_t durable_tree_bytes(const char *dir)
{
    uint64_t total = 0;
    walk(dir, &(struct tree_visit){.file = add_bytes, .user = &total});
    return total;
}

int durable_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && e->d_type != DT_DIR) n++;
    closedir(d);
    return n;
}
