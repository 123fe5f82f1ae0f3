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
