#!/usr/bin/env python3
"""DICOM studies for the study tests (study_test.py), written with pydicom from the CT phantom
(make_series.py's slices), 48 x 40 pixels:

  study/        a study export, one subfolder per series (read recursively):
                  ct_thin/   CT, series 2 "abdomen 2.5 mm", 12 axial slices 2.5 mm apart
                  ct_thick/  CT, series 3 "abdomen 5 mm", 6 axial slices 5 mm apart
                  scout/     CT, series 1 "scout", 2 localizers (ImageType ...\\LOCALIZER),
                             one coronal, one sagittal
                  dose/      X-Ray Radiation Dose SR, series 999 "dose report" (no pixels)
  ambiguous/    two axial CT series of 12 slices each (series 2 and 4) and the localizers
  mixed/        one series folder: the 12 thin CT slices, and with the same SeriesInstanceUID a
                localizer and a secondary capture; a dose report of its own series
  dicomdir/     the study under DICOMDIR's names (pydicom's FileSet: PT000000/ST000000/...)
                and its DICOMDIR
  truth.json    what each folder holds, from the datasets written

    study_make.py OUTDIR"""
import json
import os
import shutil
import sys

import numpy as np
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.fileset import FileSet
from pydicom.uid import ExplicitVRLittleEndian, SecondaryCaptureImageStorage, generate_uid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_series import Geometry, make_slice, new_uids, phantom  # noqa: E402

DOSE_SR = "1.2.840.10008.5.1.4.1.1.88.67"
NX, NY = 48, 40


def save(ds, folder, name):
    os.makedirs(folder, exist_ok=True)
    ds.save_as(os.path.join(folder, name), enforce_file_format=True)
    return ds


def ct_series(folder, vol, step, uids, rng):
    """Axial slices of vol (nx, ny, nz) step mm apart; returns the datasets."""
    geo = Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, step)
    out = []
    for k in range(vol.shape[2]):
        ds = make_slice(geo, k, vol[:, :, k].T, uids, k + 1)
        out.append(save(ds, folder, f"IM{rng.integers(1 << 30):010d}"))
    return out


def localizer(folder, vol, uids, k, iop, name):
    ds = make_slice(Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5), 0, vol[:, :, 0].T, uids, k + 1)
    ds.ImageType = ["ORIGINAL", "PRIMARY", "LOCALIZER"]
    ds.ImageOrientationPatient = [str(v) for v in iop]
    return save(ds, folder, name)


def dose_report(folder, study, name):
    ds = Dataset()
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID = DOSE_SR
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID = generate_uid()
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds.SOPClassUID = DOSE_SR
    ds.PatientName, ds.PatientID, ds.PatientBirthDate, ds.PatientSex = "Phantom^Swinrun", "SWIN0001", "19700101", "O"
    ds.StudyInstanceUID, ds.StudyDate, ds.StudyTime, ds.StudyID = study, "20260101", "120000", "1"
    ds.ReferringPhysicianName, ds.AccessionNumber = "", ""
    ds.Modality, ds.SeriesInstanceUID, ds.SeriesNumber = "SR", generate_uid(), 999
    ds.SeriesDescription = "dose report"
    ds.InstanceNumber, ds.Manufacturer = 1, "swinrun tests"
    ds.ContentDate, ds.ContentTime = "20260101", "120500"
    ds.CompletionFlag, ds.VerificationFlag = "COMPLETE", "UNVERIFIED"
    ds.ValueType, ds.ContinuityOfContent = "CONTAINER", "SEPARATE"
    title = Dataset()
    title.CodeValue, title.CodingSchemeDesignator, title.CodeMeaning = "113701", "DCM", "X-Ray Radiation Dose Report"
    ds.ConceptNameCodeSequence = [title]
    return save(ds, folder, name)


def secondary_capture(folder, vol, uids, name):
    ds = make_slice(Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5), 0, vol[:, :, 0].T, uids, 99)
    ds.SOPClassUID = ds.file_meta.MediaStorageSOPClassUID = SecondaryCaptureImageStorage
    ds.ImageType = ["DERIVED", "SECONDARY"]
    return save(ds, folder, name)


def row(dss, *, slices, orientation, localizers=0, non_images=0, files=None):
    d = dss[0]
    return dict(uid=str(d.SeriesInstanceUID), number=int(d.SeriesNumber), description=str(d.SeriesDescription),
                modality=str(d.Modality), sop_class=str(d.SOPClassUID), files=files or len(dss), slices=slices,
                orientation=orientation, localizers=localizers, non_images=non_images,
                thickness=float(d.get("SliceThickness", 0) or 0), image_type="\\".join(d.get("ImageType", [])))


def main():
    out = sys.argv[1]
    if os.path.isdir(out):
        shutil.rmtree(out)
    rng = np.random.default_rng(29)
    vol = phantom((NX, NY, 12), (0.7 * 64 / NX * 4, 0.9 * 48 / NY * 4, 2.5), seed=3)
    truth = {}
    coronal, sagittal = (1, 0, 0, 0, 0, -1), (0, 1, 0, 0, 0, -1)

    study = os.path.join(out, "study")
    u = new_uids(number=2, description="abdomen 2.5 mm")
    thin = ct_series(os.path.join(study, "ct_thin"), vol, 2.5, u, rng)
    thick = ct_series(os.path.join(study, "ct_thick"), vol[:, :, ::2], 5.0,
                      dict(u, series=generate_uid(), number=3, description="abdomen 5 mm"), rng)
    su = dict(u, series=generate_uid(), number=1, description="scout")
    scout = [localizer(os.path.join(study, "scout"), vol, su, 0, coronal, "LOC1"),
             localizer(os.path.join(study, "scout"), vol, su, 1, sagittal, "LOC2")]
    dose = [dose_report(os.path.join(study, "dose"), u["study"], "SR1")]
    truth["study"] = dict(
        series=[row(thin, slices=12, orientation="axial"), row(thick, slices=6, orientation="axial"),
                row(scout, slices=0, orientation="mixed", localizers=2),
                row(dose, slices=0, orientation="", non_images=1)],
        chosen=thin[0].SeriesInstanceUID, thin=thin[0].SeriesInstanceUID, thick=thick[0].SeriesInstanceUID,
        scout=scout[0].SeriesInstanceUID, files=len(thin) + len(thick) + len(scout) + len(dose))

    amb = os.path.join(out, "ambiguous")
    a1 = ct_series(os.path.join(amb, "a"), vol, 2.5, new_uids(number=2, description="abdomen"), rng)
    a2 = ct_series(os.path.join(amb, "b"), vol, 2.5, new_uids(number=4, description="abdomen again"), rng)
    localizer(os.path.join(amb, "scout"), vol, dict(su, series=generate_uid()), 0, coronal, "LOC1")
    truth["ambiguous"] = dict(uids=[a1[0].SeriesInstanceUID, a2[0].SeriesInstanceUID])

    mixed = os.path.join(out, "mixed")
    m = ct_series(mixed, vol, 2.5, new_uids(number=5, description="abdomen with extras"), rng)
    mu = dict(study=m[0].StudyInstanceUID, series=m[0].SeriesInstanceUID, number=5,
              description="abdomen with extras", **{"for": m[0].FrameOfReferenceUID})
    localizer(mixed, vol, mu, 0, coronal, "LOC")
    secondary_capture(mixed, vol, mu, "SC")
    dose_report(mixed, m[0].StudyInstanceUID, "SR")
    truth["mixed"] = dict(chosen=m[0].SeriesInstanceUID, skipped=3)

    fs = FileSet()
    for root, _, names in sorted(os.walk(study)):
        for n in sorted(names):
            fs.add(os.path.join(root, n))
    fs.write(os.path.join(out, "dicomdir"))

    with open(os.path.join(out, "truth.json"), "w") as fh:
        json.dump(truth, fh, indent=1)


if __name__ == "__main__":
    main()
