/* What the labels of the BTCV models mean (the 13 abdominal organs of the Beyond the Cranial
 * Vault challenge, label 1..13 as MONAI's Swin UNETR BTCV bundle): SNOMED CT codes (laterality
 * as a type modifier, as DICOM's CID 7150/7151 do) and display colours. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "formats/dicom/classes.h"

static const swin_dicom_class btcv[] = {
    {1, "Spleen", "78961009", "SCT", "Spleen", NULL, NULL, {157, 108, 162}},
    {2, "Right kidney", "64033007", "SCT", "Kidney", "24028007", "Right", {185, 102, 83}},
    {3, "Left kidney", "64033007", "SCT", "Kidney", "7771000", "Left", {185, 102, 83}},
    {4, "Gallbladder", "28231008", "SCT", "Gallbladder", NULL, NULL, {139, 150, 98}},
    {5, "Esophagus", "32849002", "SCT", "Esophagus", NULL, NULL, {211, 171, 143}},
    {6, "Liver", "10200004", "SCT", "Liver", NULL, NULL, {221, 130, 101}},
    {7, "Stomach", "69695003", "SCT", "Stomach", NULL, NULL, {216, 132, 105}},
    {8, "Aorta", "15825003", "SCT", "Aorta", NULL, NULL, {224, 97, 76}},
    {9, "Inferior vena cava", "64131007", "SCT", "Inferior vena cava", NULL, NULL, {0, 151, 206}},
    {10, "Portal vein and splenic vein", "32764006", "SCT", "Portal vein", NULL, NULL, {0, 122, 171}},
    {11, "Pancreas", "15776009", "SCT", "Pancreas", NULL, NULL, {249, 180, 111}},
    {12, "Right adrenal gland", "23451007", "SCT", "Adrenal gland", "24028007", "Right", {244, 217, 154}},
    {13, "Left adrenal gland", "23451007", "SCT", "Adrenal gland", "7771000", "Left", {244, 217, 154}},
};

const swin_dicom_class *swin_dicom_btcv_classes(int *n)
{
    *n = (int)(sizeof btcv / sizeof btcv[0]);
    return btcv;
}

const swin_dicom_class *swin_dicom_default_classes(int out_channels, int *n)
{
    if (out_channels == (int)(sizeof btcv / sizeof btcv[0]) + 1) return swin_dicom_btcv_classes(n);
    *n = 0;
    return NULL;
}

/* A label no table names: a generic tissue segment named name, with a colour of its own. */
static swin_dicom_class tissue(int label, const char *name)
{
    unsigned h = (unsigned)label * 2654435761u;
    return (swin_dicom_class){label, name, SWIN_DICOM_TISSUE_CODE, "SCT", "Tissue", NULL, NULL,
                              {(unsigned char)(64 + (h >> 8) % 192), (unsigned char)(64 + (h >> 16) % 192),
                               (unsigned char)(64 + (h >> 24) % 192)}};
}

swin_dicom_class swin_dicom_class_for(const swin_dicom_class *table, int n, int label, char name[64])
{
    for (int i = 0; i < n; i++)
        if (table[i].label == label) return table[i];
    snprintf(name, 64, "Label %d", label);
    return tissue(label, name);
}

static bool same_name(const char *a, size_t len, const char *b)
{
    return strlen(b) == len && !strncasecmp(a, b, len);
}

swin_dicom_class swin_dicom_class_named(const char *name, size_t len, int label, char out[64])
{
    static const struct { const char *spelling; int btcv_label; } bundle_spellings[] = {
        {"IVC", 9}, {"portal and splenic veins", 10}};
    for (size_t i = 0; i < sizeof btcv / sizeof *btcv; i++)
        if (same_name(name, len, btcv[i].name)) {
            swin_dicom_class c = btcv[i];
            c.label = label;
            return c;
        }
    for (size_t i = 0; i < sizeof bundle_spellings / sizeof *bundle_spellings; i++)
        if (same_name(name, len, bundle_spellings[i].spelling)) {
            swin_dicom_class c = btcv[bundle_spellings[i].btcv_label - 1];
            c.label = label;
            return c;
        }
    if (!len) return swin_dicom_class_for(NULL, 0, label, out);
    size_t n = len < 63 ? len : 63;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        out[i] = c < 0x20 || c > 0x7e || c == '\\' ? '?' : (char)c;
    }
    out[n] = 0;
    return tissue(label, out);
}
