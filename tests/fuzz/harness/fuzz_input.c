#include "fuzz_input.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_NAMES = 16 };

static char dir[PATH_MAX];
static char paths[MAX_NAMES][PATH_MAX];
static int n_paths;

static void remove_all(void)
{
    for (int i = 0; i < n_paths; i++) unlink(paths[i]);
    rmdir(dir);
}

static void fail(const char *what, const char *path)
{
    perror(path);
    fprintf(stderr, "fuzz harness: cannot %s %s\n", what, path);
    abort();
}

/* The folder, made on first use. */
static const char *folder(void)
{
    if (dir[0]) return dir;
    struct stat sb;
    const char *base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/swinfuzz-%d-XXXXXX", base, (int)getpid());
    if (!mkdtemp(dir)) fail("make the folder", dir);
    atexit(remove_all);
    return dir;
}

/* The path of `name` in the folder, remembered for removal. */
static const char *path_of(const char *name)
{
    const char *d = folder();
    for (int i = 0; i < n_paths; i++) {
        const char *slash = strrchr(paths[i], '/');
        if (!strcmp(slash + 1, name)) return paths[i];
    }
    if (n_paths == MAX_NAMES) fail("name another file in", d);
    snprintf(paths[n_paths], PATH_MAX, "%s/%s", d, name);
    return paths[n_paths++];
}

const char *fuzz_input_write(const char *name, const uint8_t *data, size_t size)
{
    const char *p = path_of(name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail("create", p);
    for (size_t done = 0; done < size;) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0) fail("write", p);
        done += (size_t)k;
    }
    if (close(fd)) fail("close", p);
    return p;
}

void fuzz_input_link_all(const char *from)
{
    if (!from) return;
    char dir_abs[PATH_MAX];
    DIR *d = realpath(from, dir_abs) ? opendir(dir_abs) : NULL;
    if (!d) fail("list", from);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char target[PATH_MAX];
        snprintf(target, sizeof target, "%s/%s", dir_abs, e->d_name);
        const char *p = path_of(e->d_name);
        unlink(p);
        if (symlink(target, p)) fail("link", p);
    }
    closedir(d);
}
