#include "runtime/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

swin_status atomic_file_open(struct atomic_file *af, const char *path, swin_error *err)
{
    memset(af, 0, sizeof *af);
    if (strlen(path) + 16 > sizeof af->tmp) return swin_error_set(err, SWIN_ERR_ARG, "%s: path too long", path);
    strcpy(af->dest, path);
    snprintf(af->tmp, sizeof af->tmp, "%s.tmpXXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0)
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot create the output file: %s", path, strerror(errno));
    fchmod(fd, 0644);  /* mkstemp makes 0600; outputs are ordinary files */
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        close(fd);
        unlink(af->tmp);
        return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    }
    return SWIN_OK;
}

swin_status atomic_file_commit(struct atomic_file *af, swin_error *err)
{
    int bad = ferror(af->f) || fflush(af->f) != 0 || fsync(fileno(af->f)) != 0;
    int saved = errno;
    if (fclose(af->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    af->f = NULL;
    if (!bad && rename(af->tmp, af->dest) == 0) return SWIN_OK;
    if (!bad) saved = errno;
    unlink(af->tmp);
    return swin_error_set(err, SWIN_ERR_IO, "%s: write failed: %s", af->dest, strerror(saved));
}

void atomic_file_abort(struct atomic_file *af)
{
    if (af->f) fclose(af->f);
    af->f = NULL;
    unlink(af->tmp);
}

swin_status atomic_file_check_dir(const char *path, const char *what, swin_error *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (strlen(path) >= sizeof dir) return swin_error_set(err, SWIN_ERR_ARG, "%s: path too long", path);
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
    }
    if (access(dir, W_OK) != 0)
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot write the %s there: %s: %s", path, what, dir,
                              errno == ENOENT ? "no such directory" : strerror(errno));
    return SWIN_OK;
}
