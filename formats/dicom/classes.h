/* Class tables for the DICOM outputs: the default (BTCV) and the lookup with a fallback. */
#ifndef SWIN_DICOM_CLASSES_H
#define SWIN_DICOM_CLASSES_H

#include "core/segment_params.h"

const swin_dicom_class *swin_dicom_btcv_classes(int *n);
/* The names a model's labels get when the caller gives none: the BTCV organs for a model with
 * 14 output channels (BTCV's background and 13 organs), none otherwise (every label "Label N"):
 * a model trained on other structures must not have its labels named as organs. */
const swin_dicom_class *swin_dicom_default_classes(int out_channels, int *n);
/* The table's entry for label, or "Label N" (SNOMED CT Tissue) written into name. */
swin_dicom_class swin_dicom_class_for(const swin_dicom_class *table, int n, int label, char name[64]);
/* Label's class from the len bytes of its name (a bundle's channel_def): the BTCV organ's entry,
 * relabelled, where the name is one of theirs (case aside, or as MONAI's BTCV bundle spells it:
 * "IVC", "portal and splenic veins"), else a Tissue segment of that name written into out with
 * every byte outside printable ASCII and every backslash as '?' (SegmentLabel and ROIName are
 * LO in the CT's character set, at most 64 characters); an empty name gives "Label N". */
swin_dicom_class swin_dicom_class_named(const char *name, size_t len, int label, char out[64]);

#endif
