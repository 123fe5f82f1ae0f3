/* A study's series and the one a run would read, as a format's list() (formats/format.h) gives them. */
#ifndef SWIN_SERIES_LIST_H
#define SWIN_SERIES_LIST_H

/* One series of a study (a folder of several series, a DICOMDIR): what `swinrun dicom-ls`
 * prints, from a format's list(). */
struct swin_series_row {
    char uid[65], description[65], modality[17], image_type[65];
    char sop_class[65];         /* the class of most of its images (of its files when it has none) */
    char sop_class_name[65];    /* e.g. "CT Image Storage"; the UID when swinrun does not know it */
    char orientation[12];       /* axial, coronal, sagittal (normal within 30 degrees of the axis),
                                   oblique, mixed; "" without images */
    double off_axis_deg;        /* angle of the slice normal from that axis */
    double thickness_mm;        /* SliceThickness of its first image; 0 when absent */
    int number;                 /* SeriesNumber; -1 when absent */
    int files, slices;          /* its files; its image slices (frames), localizers not counted */
    int localizers, non_images; /* files a run skips: ImageType LOCALIZER, objects that are no image */
};

/* A study's series and the one a run would read. */
struct swin_series_list {
    struct swin_series_row *rows; /* n, in the order of their first file; free(rows) */
    int n;
    int files, not_dicom;       /* files found; of them, not DICOM (ignored) */
    int chosen;                 /* the row a run reads (the one asked for, else the default); -1 when none */
    char reason[256];           /* why that row, or why none */
};

#endif
