/* Class tables for the DICOM outputs: the default (BTCV) and the lookup with a fallback. */
#ifndef SWIN_DICOM_CLASSES_H
#define SWIN_DICOM_CLASSES_H

#include "core/segment_params.h"

const swin_dicom_class *swin_dicom_btcv_classes(int *n);
/* The table's entry for label, or "Label N" (SNOMED CT Tissue) written into name. */
swin_dicom_class swin_dicom_class_for(const swin_dicom_class *table, int n, int label, char name[32]);

#endif
