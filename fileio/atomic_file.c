#include "fileio/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio/tempfiles.h"

swin_status swin_atomic_file_open(struct swin_atomic_file *af, const char *path, swin_error *err)
{
    memset(af, 0, sizeof *af);
    if (strlen(path) + 16 > sizeof af->tmp) return swin_error_set(err, SWIN_ERR_ARG, "%s: path too long", path);
    strcpy(af->dest, path);
    snprintf(af->tmp, sizeof af->tmp, "%s.tmpXXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        af->tmp[0] = 0;
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot create the output file: %s", path, strerror(errno));
    }
    af->remembered = swin_tempfile_remember(af->tmp);
    fchmod(fd, 0644); /* mkstemp makes 0600; outputs are ordinary files */
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        int e = errno;
        close(fd);
        swin_atomic_file_abort(af);
        return swin_error_set(err, e == ENOMEM ? SWIN_ERR_NOMEM : SWIN_ERR_IO, "%s: cannot open the output file: %s",
                              path, strerror(e));
    }
    return SWIN_OK;
}

swin_status swin_atomic_file_write_failed(const struct swin_atomic_file *af, int e, swin_error *err)
{
    const char *hint = e == ENOSPC || e == EDQUOT ? " (free some space or write elsewhere)"
                       : e == EFBIG ? " (over the file size limit: ulimit -f, or the filesystem's largest file)"
                                    : "";
    return swin_error_set(err, SWIN_ERR_IO, "%s: write failed: %s%s", af->dest, strerror(e), hint);
}

/* Removes the temporary file and says why (errno e). */
static swin_status fail(struct swin_atomic_file *af, int e, swin_error *err)
{
    swin_atomic_file_abort(af);
    return swin_atomic_file_write_failed(af, e, err);
}

swin_status swin_atomic_file_finish(struct swin_atomic_file *af, swin_error *err)
{
    int bad = ferror(af->f) || fflush(af->f) != 0 || fsync(fileno(af->f)) != 0;
    int e = bad ? (errno ? errno : EIO) : 0;
    if (fclose(af->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    af->f = NULL;
    return bad ? fail(af, e, err) : SWIN_OK;
}

swin_status swin_atomic_file_publish(struct swin_atomic_file *af, swin_error *err)
{
    if (rename(af->tmp, af->dest) != 0) {
        int e = errno;
        swin_atomic_file_abort(af);
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot put the output in place: %s", af->dest,
                              e == EISDIR ? "it is a directory" : strerror(e));
    }
    if (af->remembered) swin_tempfile_forget(af->tmp);
    af->remembered = 0;
    af->tmp[0] = 0;
    return SWIN_OK;
}

swin_status swin_atomic_file_commit(struct swin_atomic_file *af, swin_error *err)
{
    swin_status st = swin_atomic_file_finish(af, err);
    return st ? st : swin_atomic_file_publish(af, err);
}

void swin_atomic_file_abort(struct swin_atomic_file *af)
{
    if (af->f) fclose(af->f);
    af->f = NULL;
    if (af->tmp[0]) unlink(af->tmp);
    if (af->remembered) swin_tempfile_forget(af->tmp);
    af->remembered = 0;
    af->tmp[0] = 0;
}

swin_status swin_atomic_file_check_dir(const char *path, const char *what, swin_error *err)
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
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot write the %s there: it is a directory (give a file name)",
                              path, what);
    return SWIN_OK;
}
