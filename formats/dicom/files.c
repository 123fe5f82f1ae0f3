/* The files of DICOM inputs (files.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "formats/dicom/dcm.h"
#include "formats/dicom/files.h"

static swin_status push(void *user, const char *path, swin_error *err)
{
    struct swin_dcm_files *l = user;
    if (l->n >= SWIN_DCM_MAX_FILES)
        return swin_error_set(err, SWIN_ERR_ARG, "more than %d files given: pass one study or series",
                              SWIN_DCM_MAX_FILES);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the file list");
        l->v = v, l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(path))) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the file list");
    l->n++;
    return SWIN_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_dicomdir_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return !strcasecmp(b ? b + 1 : path, "DICOMDIR");
}

static int is_regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* dir's files (sorted), then its folders' (hidden entries, DICOMDIRs and links to folders
 * skipped). */
static swin_status walk(const char *dir, int depth, struct swin_dcm_files *l, swin_error *err)
{
    if (depth > SWIN_DCM_MAX_DEPTH)
        return swin_error_set(err, SWIN_ERR_ARG, "%s: folders nested more than %d deep: pass the study's folder",
                              dir, SWIN_DCM_MAX_DEPTH);
    DIR *d = opendir(dir);
    if (!d) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the folder: %s", dir, strerror(errno));
    struct swin_dcm_files subs = {0};
    int first = l->n;
    struct dirent *e;
    swin_status st = SWIN_OK;
    size_t dl = strlen(dir);
    while (!st && (e = readdir(d))) {
        if (e->d_name[0] == '.' || is_dicomdir_name(e->d_name)) continue;
        char full[4096];
        if (dl + strlen(e->d_name) + 2 > sizeof full) {
            st = swin_error_set(err, SWIN_ERR_ARG, "%s/%s: path too long", dir, e->d_name);
            break;
        }
        snprintf(full, sizeof full, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
        struct stat sb;
        if (lstat(full, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) st = push(&subs, full, err);
        else if (is_regular(full)) st = push(l, full, err);
    }
    closedir(d);
    if (!st && l->n > first) qsort(l->v + first, (size_t)(l->n - first), sizeof *l->v, cmp_str);
    if (!st && subs.n) qsort(subs.v, (size_t)subs.n, sizeof *subs.v, cmp_str);
    for (int i = 0; i < subs.n && !st; i++) st = walk(subs.v[i], depth + 1, l, err);
    swin_dcm_files_free(&subs);
    return st;
}

swin_status swin_dcm_files_collect(const char *const *paths, int npaths, struct swin_dcm_files *l, swin_error *err)
{
    memset(l, 0, sizeof *l);
    swin_status st = SWIN_OK;
    for (int i = 0; i < npaths && !st; i++) {
        struct stat sb;
        char dicomdir[4096];
        if (stat(paths[i], &sb) != 0) {
            st = swin_error_set(err, SWIN_ERR_IO, "%s: %s", paths[i], strerror(errno));
        } else if (S_ISDIR(sb.st_mode)) {
            snprintf(dicomdir, sizeof dicomdir, "%s/DICOMDIR", paths[i]);
            st = is_regular(dicomdir) ? swin_dcm_read_dicomdir(dicomdir, push, l, err) : walk(paths[i], 0, l, err);
        } else {
            st = is_dicomdir_name(paths[i]) ? swin_dcm_read_dicomdir(paths[i], push, l, err) : push(l, paths[i], err);
        }
    }
    if (st) swin_dcm_files_free(l);
    return st;
}

void swin_dcm_files_free(struct swin_dcm_files *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}
