#!/usr/bin/env python3
"""Multi-frame CT in, SEG / RTSTRUCT out (issue 29, part B), against pydicom, highdicom and
dciodvfy.

One single-frame series (make_series.py's writer: oblique, slope 0.5, shuffled files) and its
two multi-frame twins, written here:
  legacy    Legacy Converted Enhanced CT, by highdicom.legacy.LegacyConvertedEnhancedCTImage
            from the single-frame datasets;
  enhanced  Enhanced CT, built with pydicom (DCMTK 3.6.7's dcmect is a library without a
            command-line tool; highdicom has no Enhanced CT class): frames in the reverse of
            their order along the normal, orientation and pixel spacing shared, position and
            rescale per frame (another intercept on every frame, the stored values to match),
            and the CT functional groups of the Enhanced CT IOD;
  enhanced_rle  the same, RLE Lossless (pydicom's encoder): frames decoded one by one;
  enhanced_j2k  the same, JPEG 2000 Lossless (pylibjpeg-openjpeg's encoder), each frame in two
            fragments and no offset table (pydicom's encapsulate): the frames found by their
            codestreams' first markers.
`swinrun segment DIR out.nii.gz` and `swinrun segment DIR seg.dcm --rtstruct rt.dcm` on each:
  - the twins' label maps equal the single-frame series' voxel for voxel, on the same affine;
  - dciodvfy reports no error for any SEG or RTSTRUCT;
  - highdicom reads each multi-frame SEG back voxel-exact against the label map
    (get_pixels_by_source_frame), every SEG frame's source is (the file, the frame at its
    plane position), ReferencedSeriesSequence lists the file once;
  - every RTSTRUCT contour references (the file, a frame) and lies in that frame's plane;
    the referenced-series list holds every frame once.
Bad Enhanced CT files (four frames in a row left out, a frame without PlanePositionSequence,
NumberOfFrames not the number of per-frame items): exit 2, one line naming the problem and
the frame, nothing written.

    enhanced_ct_test.py SWINRUN MODEL WORKDIR"""
import os
import shutil
import subprocess
import sys

import highdicom as hd
import nibabel as nib
import numpy as np
import pydicom
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.sequence import Sequence
from pydicom.encaps import encapsulate, generate_frames
from pydicom.uid import ExplicitVRLittleEndian, JPEG2000Lossless, RLELossless, generate_uid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "export"))
import make_series as ms  # noqa: E402
from make_ct_phantom import phantom  # noqa: E402
from test_dicom import BTCV  # noqa: E402

ENHANCED_CT = "1.2.840.10008.5.1.4.1.1.2.1"
BAD = {  # folder -> words its one-line message must contain
    "bad_enhanced_gap": ("more than 3 missing slices", "ect.dcm frame 8"),
    "bad_enhanced_no_position": ("ect.dcm frame 5: no ImagePositionPatient",),
    "bad_enhanced_frame_count": ("NumberOfFrames 19 but 20 items", "damaged multi-frame"),
}
SHAPE = (64, 48, 20)
ok = True


def check(what, cond, detail=""):
    global ok
    print(f"{what:76s} {'ok' if cond else 'FAIL'} {detail}", flush=True)
    ok &= bool(cond)
    return bool(cond)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def item(**kw):
    ds = Dataset()
    for k, v in kw.items():
        setattr(ds, k, v)
    return ds


def code(value, scheme, meaning):
    return item(CodeValue=value, CodingSchemeDesignator=scheme, CodeMeaning=meaning)


def write_single(folder):
    """The single-frame series; returns its datasets (with pixels)."""
    nx, ny, nz = SHAPE
    vol = phantom(SHAPE, (0.7 * 64 / nx * 4, 0.9 * 48 / ny * 4, 2.5), seed=3)
    R = ms.rotation((1.0, 0.4, 0.3), 23.7)
    geo = ms.Geometry(R @ [1, 0, 0], R @ [0, 1, 0], 0.9, 0.7, 2.5, origin=(12.3457, -40.2468, 80.1357))
    ms.write_series(folder, geo, vol, slope=0.5, rng=np.random.default_rng(29))
    return [pydicom.dcmread(os.path.join(folder, f)) for f in sorted(os.listdir(folder))]


def write_legacy(dss, path):
    im = hd.legacy.LegacyConvertedEnhancedCTImage(dss, series_instance_uid=generate_uid(), series_number=3,
                                                  sop_instance_uid=generate_uid(), instance_number=1)
    im.save_as(path, enforce_file_format=True)


def write_enhanced(dss, path, drop=None):
    """Enhanced CT from the single-frame slices: frame f is slice nz-1-f along the normal; drop:
    the index (or slice) of frames left out."""
    first = dss[0]
    n = np.cross(np.array(first.ImageOrientationPatient[:3], float), np.array(first.ImageOrientationPatient[3:], float))
    by_pos = sorted(dss, key=lambda d: float(np.dot(np.array(d.ImagePositionPatient, float), n)))[::-1]
    if drop is not None:
        del by_pos[drop]
    ds = Dataset()
    ds.file_meta = FileMetaDataset()
    sop = generate_uid()
    ds.file_meta.MediaStorageSOPClassUID, ds.file_meta.MediaStorageSOPInstanceUID = ENHANCED_CT, sop
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    for kw in ("SpecificCharacterSet", "PatientName", "PatientID", "PatientBirthDate", "PatientSex",
               "StudyInstanceUID", "StudyDate", "StudyTime", "ReferringPhysicianName", "StudyID", "AccessionNumber",
               "FrameOfReferenceUID", "PositionReferenceIndicator", "PatientPosition"):
        setattr(ds, kw, getattr(first, kw))
    ds.SOPClassUID, ds.SOPInstanceUID = ENHANCED_CT, sop
    ds.Modality, ds.SeriesInstanceUID, ds.SeriesNumber, ds.SeriesDescription = "CT", generate_uid(), 4, "enhanced"
    ds.Manufacturer, ds.ManufacturerModelName, ds.DeviceSerialNumber = "swinrun tests", "pydicom", "0"
    ds.SoftwareVersions = pydicom.__version__
    ds.InstanceNumber, ds.ContentDate, ds.ContentTime = 1, "20260101", "120000"
    ds.ImageType = ["ORIGINAL", "PRIMARY", "VOLUME", "NONE"]
    ds.PixelPresentation, ds.VolumetricProperties, ds.VolumeBasedCalculationTechnique = "MONOCHROME", "VOLUME", "NONE"
    ds.AcquisitionNumber, ds.AcquisitionDateTime, ds.AcquisitionDuration = 1, "20260101120000", 1
    ds.ContentQualification, ds.BurnedInAnnotation, ds.RecognizableVisualFeatures = "RESEARCH", "NO", "NO"
    ds.LossyImageCompression, ds.PresentationLUTShape = "00", "IDENTITY"
    ds.ImageComments = "Enhanced CT twin of a single-frame series (swinrun tests)"
    ds.AcquisitionContextSequence = Sequence()
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
    ds.Rows, ds.Columns = first.Rows, first.Columns
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
    ds.NumberOfFrames = len(by_pos)
    dim_uid = generate_uid()
    ds.DimensionOrganizationSequence = [item(DimensionOrganizationUID=dim_uid)]
    ds.DimensionOrganizationType = "3D"
    ds.DimensionIndexSequence = [item(DimensionOrganizationUID=dim_uid, DimensionIndexPointer=0x00200032,
                                      FunctionalGroupPointer=0x00209113)]
    ds.SharedFunctionalGroupsSequence = [item(
        PixelMeasuresSequence=[item(PixelSpacing=first.PixelSpacing, SliceThickness=first.SliceThickness)],
        PlaneOrientationSequence=[item(ImageOrientationPatient=first.ImageOrientationPatient)],
        CTImageFrameTypeSequence=[item(FrameType=["ORIGINAL", "PRIMARY", "VOLUME", "NONE"],
                                       PixelPresentation="MONOCHROME", VolumetricProperties="VOLUME",
                                       VolumeBasedCalculationTechnique="NONE")],
        CTAcquisitionTypeSequence=[item(AcquisitionType="SPIRAL", ConstantVolumeFlag="NO", FluoroscopyFlag="NO")],
        CTAcquisitionDetailsSequence=[item(DataCollectionDiameter=500, GantryDetectorTilt=0, TableHeight=100,
                                           RotationDirection="CW", RevolutionTime=0.5, SingleCollimationWidth=0.625,
                                           TotalCollimationWidth=40)],
        CTTableDynamicsSequence=[item(TableSpeed=80, TableFeedPerRotation=40, SpiralPitchFactor=1)],
        CTGeometrySequence=[item(DistanceSourceToDetector=1000, DistanceSourceToDataCollectionCenter=600)],
        CTReconstructionSequence=[item(ReconstructionAlgorithm="FILTER_BACK_PROJ", ConvolutionKernel="B30f",
                                       ConvolutionKernelGroup="SOFT_TISSUE", ImageFilter="NONE",
                                       ReconstructionDiameter=500,
                                       ReconstructionPixelSpacing=first.PixelSpacing,
                                       ReconstructionAngle=360)],
        CTExposureSequence=[item(ExposureTimeInms=500, XRayTubeCurrentInmA=200, ExposureInmAs=100,
                                 ExposureModulationType="NONE")],
        CTXRayDetailsSequence=[item(KVP=120, FocalSpots=[1.2], FilterType="FLAT", FilterMaterial="ALUMINUM")],
        FrameAnatomySequence=[item(AnatomicRegionSequence=[code("818981001", "SCT", "Abdomen")], FrameLaterality="U")],
        IrradiationEventIdentificationSequence=[item(IrradiationEventUID=generate_uid())],
    )]
    frames, pixels = [], []
    for f, d in enumerate(by_pos):
        hu = d.pixel_array.astype(np.float64) * float(d.RescaleSlope) + float(d.RescaleIntercept)
        intercept = -1024.0 - 3 * f  # another rescale on every frame
        stored = np.rint((hu - intercept) / 0.5)
        assert np.array_equal(stored * 0.5 + intercept, hu) and stored.min() >= -32768 and stored.max() < 32768
        pixels.append(stored.astype("<i2"))
        frames.append(item(
            FrameContentSequence=[item(FrameAcquisitionDateTime="20260101120000",
                                       FrameReferenceDateTime="20260101120000", FrameAcquisitionDuration=1,
                                       DimensionIndexValues=[len(by_pos) - f])],
            PlanePositionSequence=[item(ImagePositionPatient=d.ImagePositionPatient)],
            PixelValueTransformationSequence=[item(RescaleIntercept=ms.ds_str(intercept), RescaleSlope="0.5",
                                                   RescaleType="HU")],
            CTPositionSequence=[item(TablePosition=-float(d.ImagePositionPatient[2]),
                                     ReconstructionTargetCenterPatient=[0, 0, float(d.ImagePositionPatient[2])],
                                     DataCollectionCenterPatient=[0, 0, float(d.ImagePositionPatient[2])])],
        ))
    ds.PerFrameFunctionalGroupsSequence = frames
    ds.PixelData = b"".join(p.tobytes() for p in pixels)
    ds.save_as(path, enforce_file_format=True)


class Frames:
    """A multi-frame CT file as the test reads it (pydicom): the frames sorted along the normal."""

    def __init__(self, path):
        ds = pydicom.dcmread(path, stop_before_pixels=True)
        shared = ds.SharedFunctionalGroupsSequence[0]
        per = ds.PerFrameFunctionalGroupsSequence

        def group(f, name):
            return getattr(per[f], name, None) or getattr(shared, name)

        iop = np.array(group(0, "PlaneOrientationSequence")[0].ImageOrientationPatient, float)
        self.r, self.c, self.n = iop[:3], iop[3:], np.cross(iop[:3], iop[3:])
        pos = [np.array(group(f, "PlanePositionSequence")[0].ImagePositionPatient, float) for f in range(len(per))]
        order = sorted(range(len(per)), key=lambda f: float(pos[f] @ self.n))
        self.frame = [f + 1 for f in order]                 # frame number of slice k
        self.pos = np.array([pos[f] for f in order])
        self.k_of = {fn: k for k, fn in enumerate(self.frame)}
        self.dr, self.dc = (float(v) for v in group(0, "PixelMeasuresSequence")[0].PixelSpacing)
        self.rows, self.cols = int(ds.Rows), int(ds.Columns)
        self.sop, self.series_uid, self.sop_class = ds.SOPInstanceUID, ds.SeriesInstanceUID, ds.SOPClassUID


def dciodvfy_errors(path):
    r = run(["dciodvfy", "-new", path])
    lines = (r.stdout + r.stderr).splitlines()
    return [l for l in lines if l.startswith("Error")], [l for l in lines if l.startswith("Warning")]


def check_seg(name, seg_path, fr, labels):
    errs, warns = dciodvfy_errors(seg_path)
    check(f"{name}: SEG dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    ds = pydicom.dcmread(seg_path)
    seg = hd.seg.segread(seg_path)
    arr = seg.get_pixels_by_source_frame(source_sop_instance_uid=fr.sop, source_frame_numbers=fr.frame,
                                         combine_segments=True, relabel=False,
                                         assert_missing_frames_are_empty=True)
    seg_label = {int(it.SegmentNumber): BTCV.index(it.SegmentLabel) + 1 for it in ds.SegmentSequence}
    lut = np.zeros(max(seg_label) + 1, np.int64)
    for sn, lab in seg_label.items():
        lut[sn] = lab
    present = [int(v) for v in np.unique(labels) if v]
    back = lut[arr].transpose(2, 1, 0)
    check(f"{name}: highdicom reads the SEG back by source frame, voxel-exact", np.array_equal(back, labels),
          f"{int(np.sum(back != labels))} voxels differ, {len(present)} segments")
    refs = True
    for f in ds.PerFrameFunctionalGroupsSequence:
        src = f.DerivationImageSequence[0].SourceImageSequence[0]
        k = fr.k_of.get(int(getattr(src, "ReferencedFrameNumber", 0)))
        pp = np.array(f.PlanePositionSequence[0].ImagePositionPatient, float)
        refs &= src.ReferencedSOPInstanceUID == fr.sop and src.ReferencedSOPClassUID == fr.sop_class and \
            k is not None and np.abs(pp - fr.pos[k]).max() < 1e-4
    check(f"{name}: every SEG frame's source is (the file, the frame at its position)", refs,
          f"{ds.NumberOfFrames} frames")
    rs = ds.ReferencedSeriesSequence
    check(f"{name}: ReferencedSeriesSequence lists the multi-frame file once",
          len(rs) == 1 and rs[0].SeriesInstanceUID == fr.series_uid and
          [i.ReferencedSOPInstanceUID for i in rs[0].ReferencedInstanceSequence] == [fr.sop])


def check_rtstruct(name, rt_path, fr):
    errs, warns = dciodvfy_errors(rt_path)
    check(f"{name}: RTSTRUCT dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    ds = pydicom.dcmread(rt_path)
    listed = ds.ReferencedFrameOfReferenceSequence[0].RTReferencedStudySequence[0].RTReferencedSeriesSequence[0]
    check(f"{name}: RTSTRUCT lists every frame of the file once",
          sorted(int(i.ReferencedFrameNumber) for i in listed.ContourImageSequence) == sorted(fr.frame) and
          all(i.ReferencedSOPInstanceUID == fr.sop for i in listed.ContourImageSequence))
    refs, worst, count = True, 0.0, 0
    for rc in ds.ROIContourSequence:
        for c in getattr(rc, "ContourSequence", []):
            img = c.ContourImageSequence[0]
            k = fr.k_of.get(int(getattr(img, "ReferencedFrameNumber", 0)))
            refs &= img.ReferencedSOPInstanceUID == fr.sop and k is not None
            if k is None:
                continue
            raw = c.get_item("ContourData").value
            p = np.array(raw.split(b"\\") if isinstance(raw, bytes) else raw, float).reshape(-1, 3)
            worst = max(worst, float(np.abs((p - fr.pos[k]) @ fr.n).max()))
            count += 1
    check(f"{name}: every contour references (the file, its frame) and lies in its plane",
          refs and count > 0 and worst <= 0.01, f"{count} contours, worst {worst:.1e} mm")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    swinrun, model, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    twins = ("legacy", "enhanced", "enhanced_rle", "enhanced_j2k")
    dirs = {n: os.path.join(work, n) for n in ("single", *twins, *BAD, "out")}
    for d in dirs.values():
        os.makedirs(d)
    dss = write_single(dirs["single"])
    write_legacy(dss, os.path.join(dirs["legacy"], "lcect.dcm"))
    write_enhanced(dss, os.path.join(dirs["enhanced"], "ect.dcm"))
    rle = pydicom.dcmread(os.path.join(dirs["enhanced"], "ect.dcm"))
    rle.compress(RLELossless, encoding_plugin="pydicom")
    rle.save_as(os.path.join(dirs["enhanced_rle"], "ect.dcm"), enforce_file_format=True)
    j2k = pydicom.dcmread(os.path.join(dirs["enhanced"], "ect.dcm"))
    j2k.compress(JPEG2000Lossless, encoding_plugin="pylibjpeg")
    frames = list(generate_frames(j2k.PixelData, number_of_frames=int(j2k.NumberOfFrames)))
    j2k.PixelData = encapsulate(frames, fragments_per_frame=2, has_bot=False)
    j2k.save_as(os.path.join(dirs["enhanced_j2k"], "ect.dcm"), enforce_file_format=True)
    write_enhanced(dss, os.path.join(dirs["bad_enhanced_gap"], "ect.dcm"), drop=slice(7, 11))
    bad = pydicom.dcmread(os.path.join(dirs["enhanced"], "ect.dcm"))
    del bad.PerFrameFunctionalGroupsSequence[4].PlanePositionSequence
    bad.save_as(os.path.join(dirs["bad_enhanced_no_position"], "ect.dcm"), enforce_file_format=True)
    bad = pydicom.dcmread(os.path.join(dirs["enhanced"], "ect.dcm"))
    bad.NumberOfFrames = 19
    bad.save_as(os.path.join(dirs["bad_enhanced_frame_count"], "ect.dcm"), enforce_file_format=True)
    errs, warns = dciodvfy_errors(os.path.join(dirs["enhanced"], "ect.dcm"))
    check("the generated Enhanced CT: dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    out = dirs["out"]
    env = dict(os.environ, SWINRUN_MODEL=model)
    maps = {}
    for name in ("single", *twins):
        lab, seg, rt = (os.path.join(out, f"{name}{s}") for s in (".nii.gz", "_seg.dcm", "_rt.dcm"))
        r1 = run([swinrun, "segment", dirs[name], lab], env=env)
        r2 = run([swinrun, "segment", dirs[name], seg, "--rtstruct", rt], env=env)
        if check(f"{name}: swinrun DIR out.nii.gz and DIR seg.dcm --rtstruct rt.dcm",
                 r1.returncode == 0 and r2.returncode == 0, (r1.stderr + r2.stderr).strip()[-300:]):
            img = nib.load(lab)
            maps[name] = (np.asarray(img.dataobj), img.affine)
    if "single" not in maps:
        print("FAIL")
        return 1
    labels, affine = maps["single"]
    present = [int(v) for v in np.unique(labels) if v]
    check("single: the label map has organs", len(present) >= 3, f"labels {present}")
    for name in twins:
        if name not in maps:
            continue
        lab, aff = maps[name]
        check(f"{name}: the same label map as the single-frame twin, on the same grid",
              lab.shape == labels.shape and np.abs(aff - affine).max() < 1e-4 and np.array_equal(lab, labels),
              f"{int(np.sum(lab != labels)) if lab.shape == labels.shape else 'shape ' + str(lab.shape)} voxels differ")
        path = os.path.join(dirs[name], os.listdir(dirs[name])[0])
        fr = Frames(path)
        check_seg(name, os.path.join(out, f"{name}_seg.dcm"), fr, lab)
        check_rtstruct(name, os.path.join(out, f"{name}_rt.dcm"), fr)
    errs = dciodvfy_errors(os.path.join(out, "single_seg.dcm"))[0] + dciodvfy_errors(os.path.join(out, "single_rt.dcm"))[0]
    check("single: SEG and RTSTRUCT dciodvfy: no error", not errs, "; ".join(errs[:3]))
    for name, words in BAD.items():
        before = set(os.listdir(out))
        r = run([swinrun, dirs[name], os.path.join(out, "bad.dcm"), "--rtstruct", os.path.join(out, "bad_rt.dcm")],
                env=env)
        lines = r.stderr.strip().splitlines()
        check(f"{name}: exit 2, one line naming the problem, nothing written",
              r.returncode == 2 and len(lines) == 1 and all(w in r.stderr for w in words) and
              set(os.listdir(out)) == before, f"rc {r.returncode}: {r.stderr.strip()[:200]}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
