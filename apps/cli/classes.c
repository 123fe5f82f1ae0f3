/* --classes FILE: what the labels mean in the DICOM outputs, one tab-separated line per label:
 *
 *     LABEL  NAME  CODE  SCHEME  MEANING  R,G,B  [MODIFIER_CODE  MODIFIER_MEANING]
 *
 * e.g. "1\tSpleen\t78961009\tSCT\tSpleen\t157,108,162". Lines starting with '#' and empty
 * lines are skipped. The table points into the file's text; both are freed by
 * cli_free_classes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli/cli.h"

#define CLASSES_FILE_MAX (1 << 20)

static char *text;
static swin_dicom_class *table;

void cli_free_classes(void)
{
    free(text);
    free(table);
    text = NULL;
    table = NULL;
}

/* The next tab-separated field of *s (NULL when the line has no more). */
static char *field(char **s)
{
    char *f = *s;
    if (!f) return NULL;
    char *tab = strchr(f, '\t');
    if (tab) *tab = 0;
    *s = tab ? tab + 1 : NULL;
    return f;
}

static int parse_line(char *s, swin_dicom_class *c)
{
    char *rest = s;
    char *lab = field(&rest), *name = field(&rest), *code = field(&rest), *scheme = field(&rest),
         *meaning = field(&rest), *rgb = field(&rest), *mcode = field(&rest), *mmeaning = field(&rest);
    int l, r, g, b;
    char end;
    if (!rgb || sscanf(lab, "%d%c", &l, &end) != 1 || l < 1 || l > SWIN_CLASSES_MAX ||
        sscanf(rgb, "%d,%d,%d%c", &r, &g, &b, &end) != 3 || r < 0 || r > 255 || g < 0 || g > 255 || b < 0 ||
        b > 255 || !*name || !*code || !*scheme || !*meaning || (mcode && (!mmeaning || !*mcode || !*mmeaning)))
        return -1;
    *c = (swin_dicom_class){l, name, code, scheme, meaning, mcode, mmeaning,
                            {(unsigned char)r, (unsigned char)g, (unsigned char)b}};
    return 0;
}

int cli_load_classes(const char *path, swin_segment_params *sp)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "swinrun: --classes %s: %s\n", path, strerror(errno));
        return 2;
    }
    text = malloc(CLASSES_FILE_MAX + 1);
    size_t len = text ? fread(text, 1, CLASSES_FILE_MAX + 1, f) : 0;
    fclose(f);
    if (!text || len > CLASSES_FILE_MAX) {
        fprintf(stderr, "swinrun: --classes %s: %s\n", path, text ? "larger than 1 MiB" : "out of host memory");
        cli_free_classes();
        return 2;
    }
    text[len] = 0;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    if (!(table = calloc(lines, sizeof *table))) {
        fprintf(stderr, "swinrun: out of host memory\n");
        cli_free_classes();
        return 1;
    }
    int n = 0, line = 0;
    for (char *s = text, *next; s; s = next) {
        line++;
        next = strchr(s, '\n');
        if (next) *next++ = 0;
        s[strcspn(s, "\r")] = 0;
        if (!*s || *s == '#') continue;
        if (parse_line(s, &table[n])) {
            fprintf(stderr,
                    "swinrun: --classes %s line %d: expected LABEL NAME CODE SCHEME MEANING R,G,B "
                    "[MODIFIER_CODE MODIFIER_MEANING], tab-separated, LABEL 1..%d\n",
                    path, line, SWIN_CLASSES_MAX);
            cli_free_classes();
            return 2;
        }
        n++;
    }
    if (!n) {
        fprintf(stderr, "swinrun: --classes %s: no class lines\n", path);
        cli_free_classes();
        return 2;
    }
    sp->dicom_classes = table;
    sp->dicom_nclasses = n;
    return 0;
}
