/* swinrun dicom-ls: the series of a DICOM study (a folder, a DICOMDIR, files) and the one a
 * run reads, through the DICOM format's list(); also the list a refused choice prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli/cli.h"
#include "formats/format.h"

static void print_row(FILE *f, const struct swin_series_row *r, bool chosen, const char *indent)
{
    char thick[24] = "-", orient[32];
    if (r->thickness_mm > 0) snprintf(thick, sizeof thick, "%g mm", r->thickness_mm);
    if (r->off_axis_deg >= 1 && strcmp(r->orientation, "mixed"))
        snprintf(orient, sizeof orient, "%s %.0f deg", r->orientation, r->off_axis_deg);
    else snprintf(orient, sizeof orient, "%s", r->orientation[0] ? r->orientation : "-");
    char counts[32];
    snprintf(counts, sizeof counts, "%d/%d", r->slices, r->files);
    fprintf(f, "%s%s %6d  %-4s %-30s %-11s %-16s %-9s %-26s \"%s\"  %s", indent, chosen ? "*" : " ", r->number,
            r->modality[0] ? r->modality : "-", r->sop_class_name, counts, orient, thick,
            r->image_type[0] ? r->image_type : "-", r->description, r->uid[0] ? r->uid : "(no SeriesInstanceUID)");
    if (r->localizers)
        fprintf(f, "  (%d localizer%s%s", r->localizers, r->localizers == 1 ? "" : "s", r->non_images ? ", " : ")");
    if (r->non_images)
        fprintf(f, "%s%d non-image object%s)", r->localizers ? "" : "  (", r->non_images, r->non_images == 1 ? "" : "s");
    fputc('\n', f);
}

static void print_list(FILE *f, const struct swin_series_list *l, const char *indent)
{
    fprintf(f, "%s  number mod  SOP class                      slices/files orientation      thickness ImageType"
               "                  description  UID\n",
            indent);
    for (int r = 0; r < l->n; r++) print_row(f, &l->rows[r], r == l->chosen, indent);
}

static swin_status list_of(const char *const *inputs, int ninputs, const char *pick, struct swin_series_list *l,
                           swin_error *err)
{
    const struct swin_format *fmt = swin_format_claiming(inputs[0]);
    if (!fmt || !fmt->list)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%s: not a DICOM study (a folder, a DICOMDIR or DICOM files)%s", inputs[0],
                              fmt && fmt->series ? "; or swinrun was built without DICOM support (DCMTK)" : "");
    return fmt->list(inputs, ninputs, pick, l, err);
}

int cli_print_series(FILE *f, const char *const *inputs, int ninputs, const char *pick, const char *indent)
{
    struct swin_series_list l = {0};
    swin_error err = {0};
    swin_status st = list_of(inputs, ninputs, pick, &l, &err);
    if (st) fprintf(stderr, "swinrun: %s\n", err.msg);
    else print_list(f, &l, indent);
    free(l.rows);
    return cli_exit_code(st);
}

static void json_row(FILE *f, const struct swin_series_row *r)
{
    fprintf(f, "  {\"uid\": ");
    json_string(f, r->uid);
    fprintf(f, ", \"number\": %d, \"description\": ", r->number);
    json_string(f, r->description);
    fprintf(f, ", \"modality\": ");
    json_string(f, r->modality);
    fprintf(f, ", \"sop_class\": ");
    json_string(f, r->sop_class);
    fprintf(f, ", \"sop_class_name\": ");
    json_string(f, r->sop_class_name);
    fprintf(f, ",\n   \"slices\": %d, \"files\": %d, \"localizers\": %d, \"non_images\": %d, \"orientation\": ",
            r->slices, r->files, r->localizers, r->non_images);
    json_string(f, r->orientation);
    fprintf(f, ", \"off_axis_deg\": %.3f, \"slice_thickness_mm\": %g, \"image_type\": ", r->off_axis_deg,
            r->thickness_mm);
    json_string(f, r->image_type);
    fprintf(f, "}");
}

int cli_dicom_ls(const struct cli_args *a)
{
    if (a->npos < 1) {
        fprintf(stderr, "swinrun dicom-ls: expected a study folder, a DICOMDIR or DICOM files (try swinrun "
                        "dicom-ls --help)\n");
        return 2;
    }
    struct swin_series_list l = {0};
    swin_error err = {0};
    swin_status st = list_of(a->pos, a->npos, a->seg.dicom_series, &l, &err);
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        return cli_exit_code(st);
    }
    const struct swin_series_row *c = l.chosen >= 0 ? &l.rows[l.chosen] : NULL;
    if (!a->json || strcmp(a->json, "-")) {
        printf("%s: %d series in %d files", a->pos[0], l.n, l.files);
        if (l.not_dicom) printf(" (%d not DICOM, ignored)", l.not_dicom);
        printf("\n");
        print_list(stdout, &l, "");
        if (c) printf("a run reads series %s (number %d): %s\n", c->uid, c->number, l.reason);
        else printf("no series chosen: %s\n", l.reason);
    }
    FILE *jf = NULL;
    struct cli_json *json = NULL;
    if (a->json && !(st = cli_json_open(&json, a->json, &jf, &err))) {
        fprintf(jf, "{\"input\": ");
        json_string(jf, a->pos[0]);
        fprintf(jf, ", \"files\": %d, \"not_dicom\": %d, \"series\": [\n", l.files, l.not_dicom);
        for (int r = 0; r < l.n; r++) {
            json_row(jf, &l.rows[r]);
            fprintf(jf, "%s\n", r + 1 < l.n ? "," : "");
        }
        fprintf(jf, " ],\n \"chosen\": ");
        if (c) json_string(jf, c->uid);
        else fprintf(jf, "null");
        fprintf(jf, ", \"reason\": ");
        json_string(jf, l.reason);
        fprintf(jf, "}\n");
        st = cli_json_commit(json, &err);
    }
    if (st) fprintf(stderr, "swinrun: %s\n", err.msg);
    free(l.rows);
    if (st) return cli_exit_code(st);
    if (!c && a->seg.dicom_series) {
        fprintf(stderr, "swinrun: --series %s: %s\n", a->seg.dicom_series, l.reason);
        return 2;
    }
    return 0;
}
