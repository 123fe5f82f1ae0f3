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
swin_dicom_class swin_dicom_class_for(const swin_dicom_class *table, int n, int label, char name[32]);

#endif
