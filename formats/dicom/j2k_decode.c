/* JPEG 2000 / HTJ2K frames through OpenJPEG (2.5 decodes both), read from memory. */
#include "formats/dicom/j2k_decode.h"

#include <errno.h>
#include <fcntl.h>
#include <openjpeg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* The bytes OpenJPEG reads, as a memory stream. */
struct mem_stream {
    const uint8_t *p;
    size_t n, pos;
};

static OPJ_SIZE_T mem_read(void *buf, OPJ_SIZE_T want, void *user)
{
    struct mem_stream *m = user;
    size_t left = m->n - m->pos;
    if (!left) return (OPJ_SIZE_T)-1;
    size_t k = want < left ? want : left;
    memcpy(buf, m->p + m->pos, k);
    m->pos += k;
    return k;
}

static OPJ_OFF_T mem_skip(OPJ_OFF_T by, void *user)
{
    struct mem_stream *m = user;
    if (by < 0) {
        if ((size_t)-by > m->pos) return -1;
    } else if ((size_t)by > m->n - m->pos) {
        by = (OPJ_OFF_T)(m->n - m->pos);
    }
    m->pos = (size_t)((OPJ_OFF_T)m->pos + by);
    return by;
}

static OPJ_BOOL mem_seek(OPJ_OFF_T to, void *user)
{
    struct mem_stream *m = user;
    if (to < 0 || (size_t)to > m->n) return OPJ_FALSE;
    m->pos = (size_t)to;
    return OPJ_TRUE;
}

/* OpenJPEG's messages: info and warnings dropped, the first error kept for the message. */
#define FIRST_ERROR_MAX 160

static void drop_message(const char *msg, void *user)
{
    (void)msg;
    (void)user;
}

static void keep_error(const char *msg, void *user)
{
    char *first = user;
    if (first[0]) return;
    snprintf(first, FIRST_ERROR_MAX, "%s", msg);
    for (char *c = first; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
    for (size_t len = strlen(first); len && first[len - 1] == ' '; len--) first[len - 1] = 0;
}

static const uint8_t jp2_signature[12] = {0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a};

/* What a header says of the image and its first component. */
struct j2k_shape {
    long w, h;
    unsigned ncomps, prec, dx, dy;
    bool sgnd;
};

/* A header against the DICOM attributes: nothing is decoded unless it is one grey component
 * of Rows x Columns samples whose precision fits BitsAllocated. A precision or signedness
 * other than BitsStored's or PixelRepresentation's is common in archives (a CT of BitsStored
 * 12 coded at 16 bits, signed values in an unsigned codestream): such a codestream is
 * decoded, as pydicom and GDCM decode it, and its sign reconciled after (reconcile_sign). */
static swin_status check_shape(const struct j2k_shape *g, const struct swin_j2k_expect *e, const char *what,
                               swin_error *err)
{
    if (g->ncomps != 1)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: the JPEG 2000 codestream has %u components but SamplesPerPixel is 1 (a grey CT "
                              "slice): a corrupt file",
                              what, g->ncomps);
    if (g->w != e->cols || g->h != e->rows || g->dx != 1 || g->dy != 1)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: the JPEG 2000 codestream is %ld x %ld pixels but Rows x Columns say %d x %d: a "
                              "corrupt file",
                              what, g->h, g->w, e->rows, e->cols);
    if ((int)g->prec > e->bits_allocated)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: the JPEG 2000 codestream holds %u-bit values but BitsAllocated is %d: they do not "
                              "fit, a corrupt file (re-encode the series from its source)",
                              what, g->prec, e->bits_allocated);
    return SWIN_OK;
}

/* A codestream whose signedness is not PixelRepresentation's: its prec-bit samples are read
 * as PixelRepresentation says, as pydicom 3 does by default (its J2K sign correction): the
 * usual cause is an encoder that put two's complement values in an unsigned codestream (or
 * unsigned ones in a signed codestream), and the header's sign is that of the values. A
 * value whose top bit (of prec) is clear is the same either way. GDCM instead takes the
 * codestream's sign; the two differ only on such values. */
static void reconcile_sign(int32_t *v, size_t n, unsigned prec, bool is_signed)
{
    /* prec is 1 to 16 (check_shape: at most BitsAllocated) */
    const uint32_t mask = (1u << prec) - 1u, top = 1u << (prec - 1);
    for (size_t i = 0; i < n; i++) {
        const uint32_t u = (uint32_t)v[i] & mask;
        v[i] = is_signed && (u & top) ? (int32_t)u - (int32_t)(mask + 1u) : (int32_t)u;
    }
}

static unsigned long be(const uint8_t *p, int bytes)
{
    unsigned long v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | p[i];
    return v;
}

/* The SIZ marker segment that follows SOC in a raw codestream (ITU-T T.800 A.5.1), checked
 * before OpenJPEG reads anything: Xsiz, Ysiz, XOsiz, YOsiz at 8-23, Csiz at 40, then Ssiz,
 * XRsiz, YRsiz of the first component. */
static swin_status check_siz(const uint8_t *b, size_t n, const struct swin_j2k_expect *e, const char *what,
                             swin_error *err)
{
    if (n < 45 || be(b + 8, 4) < be(b + 16, 4) || be(b + 12, 4) < be(b + 20, 4))
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: the JPEG 2000 SIZ marker is short or inconsistent: a "
                              "corrupt file",
                              what);
    const struct j2k_shape g = {(long)(be(b + 8, 4) - be(b + 16, 4)),
                                (long)(be(b + 12, 4) - be(b + 20, 4)),
                                (unsigned)be(b + 40, 2),
                                (b[42] & 0x7fu) + 1,
                                b[43],
                                b[44],
                                (b[42] & 0x80) != 0};
    return check_shape(&g, e, what, err);
}

static swin_status check_image(const opj_image_t *im, const struct swin_j2k_expect *e, const char *what,
                               swin_error *err)
{
    if (im->numcomps < 1)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: the JPEG 2000 codestream has no component", what);
    const opj_image_comp_t *c = &im->comps[0];
    const struct j2k_shape g = {
        (long)im->x1 - (long)im->x0, (long)im->y1 - (long)im->y0, im->numcomps, c->prec, c->dx, c->dy, c->sgnd != 0};
    return check_shape(&g, e, what, err);
}

static swin_status decode_here(const uint8_t *bytes, size_t n, const struct swin_j2k_expect *e, int32_t *out,
                               const char *what, swin_error *err)
{
    if (n < sizeof jp2_signature)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: the JPEG 2000 pixel data holds %zu bytes: a corrupt file",
                              what, n);
    const bool jp2 = !memcmp(bytes, jp2_signature, sizeof jp2_signature);
    if (!jp2 && !(bytes[0] == 0xff && bytes[1] == 0x4f && bytes[2] == 0xff && bytes[3] == 0x51))
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: the pixel data is not a JPEG 2000 codestream (no SOC and SIZ markers): a corrupt "
                              "file",
                              what);
    if (!jp2) {
        swin_status st = check_siz(bytes, n, e, what, err);
        if (st) return st;
    }
    char first_error[FIRST_ERROR_MAX] = "";
    struct mem_stream m = {bytes, n, 0};
    opj_codec_t *codec = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    opj_stream_t *st = opj_stream_create(64 * 1024, OPJ_TRUE);
    opj_image_t *im = NULL;
    swin_status status = SWIN_OK;
    if (!codec || !st) {
        status = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory for the JPEG 2000 decoder", what);
        goto done;
    }
    opj_set_info_handler(codec, drop_message, NULL);
    opj_set_warning_handler(codec, drop_message, NULL);
    opj_set_error_handler(codec, keep_error, first_error);
    opj_stream_set_user_data(st, &m, NULL);
    opj_stream_set_user_data_length(st, n);
    opj_stream_set_read_function(st, mem_read);
    opj_stream_set_skip_function(st, mem_skip);
    opj_stream_set_seek_function(st, mem_seek);
    opj_dparameters_t par;
    opj_set_default_decoder_parameters(&par);
    /* strict: a truncated codestream is an error, not a partly decoded image */
    if (!opj_setup_decoder(codec, &par) || !opj_decoder_set_strict_mode(codec, OPJ_TRUE) ||
        !opj_read_header(st, codec, &im)) {
        status = swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable JPEG 2000 header (%s): a corrupt file", what,
                                first_error[0] ? first_error : "OpenJPEG gave no reason");
        goto done;
    }
    if ((status = check_image(im, e, what, err))) goto done;
    if (!opj_decode(codec, st, im) || !opj_end_decompress(codec, st)) {
        status = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s: the JPEG 2000 codestream does not decode (%s): a corrupt "
                                "or truncated file",
                                what, first_error[0] ? first_error : "OpenJPEG gave no reason");
        goto done;
    }
    /* a JP2 palette or colour box may have changed the image while decoding */
    if ((status = check_image(im, e, what, err))) goto done;
    const opj_image_comp_t *c = &im->comps[0];
    if (!c->data || (long)c->w != e->cols || (long)c->h != e->rows) {
        status = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s: the JPEG 2000 codestream decoded to %u x %u pixels, not %d x %d: a corrupt file",
                                what, c->h, c->w, e->rows, e->cols);
        goto done;
    }
    const size_t npx = (size_t)e->rows * (size_t)e->cols;
    memcpy(out, c->data, npx * sizeof *out);
    if ((c->sgnd != 0) != (e->is_signed != 0)) reconcile_sign(out, npx, c->prec, e->is_signed != 0);
done:
    if (im) opj_image_destroy(im);
    if (st) opj_stream_destroy(st);
    if (codec) opj_destroy_codec(codec);
    return status;
}

/* What the decoding child hands back, in a shared anonymous mapping: the outcome, its
 * message, and the pixels (rows x cols). */
struct child_result {
    swin_status status;
    swin_error err;
    int32_t px[];
};

/* Debian's OpenJPEG 2.5.0 keeps its assertions, and its HTJ2K block decoder asserts on some
 * corrupt code-blocks: decoding runs in a child process, so that such a file is refused
 * like any other corrupt one instead of ending the caller's process. */
swin_status swin_j2k_decode(const uint8_t *bytes, size_t n, const struct swin_j2k_expect *e, int32_t *out,
                            const char *what, swin_error *err)
{
    const size_t px_bytes = (size_t)e->rows * (size_t)e->cols * sizeof *out;
    const size_t shared = sizeof(struct child_result) + px_bytes;
    struct child_result *r = mmap(NULL, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED)
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory for a %d x %d JPEG 2000 frame", what, e->rows,
                              e->cols);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(r, shared);
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot start the JPEG 2000 decoder: %s", what, strerror(errno));
    }
    if (pid == 0) {
        /* the child dies of what kills it: no handler the caller installed (a crash reporter,
         * a sanitizer) speaks for it; an assertion's message goes nowhere */
        static const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDERR_FILENO);
        r->err = (swin_error){SWIN_OK, ""};
        r->status = decode_here(bytes, n, e, r->px, what, &r->err);
        _exit(0);
    }
    int ws = 0;
    pid_t w;
    while ((w = waitpid(pid, &ws, 0)) < 0 && errno == EINTR) {
    }
    swin_status st;
    if (w == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        st = r->status ? swin_error_set(err, r->status, "%s", r->err.msg) : SWIN_OK;
        if (!st) memcpy(out, r->px, px_bytes);
    } else if (w == pid && WIFSIGNALED(ws)) {
        st = swin_error_set(err, SWIN_ERR_FORMAT,
                            "%s: the JPEG 2000 decoder gave up on this codestream (signal %d): a corrupt file", what,
                            WTERMSIG(ws));
    } else {
        st = swin_error_set(err, SWIN_ERR_IO, "%s: the JPEG 2000 decoder did not finish: %s", what,
                            w < 0 ? strerror(errno) : "it exited with an error");
    }
    munmap(r, shared);
    return st;
}
