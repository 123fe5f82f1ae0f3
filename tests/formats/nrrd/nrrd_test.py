#!/usr/bin/env python3
"""NRRD (.nrrd / .nhdr) in and out, against a NIfTI twin and ITK's own reader:

  - one oblique CT phantom written as NRRD eight ways: by SimpleITK (ITK's NrrdIO) as a gzip
    and a raw .nrrd and a detached .nhdr + .raw.gz; by hand in RAS space (directions and
    origin negated: the same grid), big-endian as "signed short int", a .nhdr whose data file
    starts with two lines of text (line skip), a .nhdr whose voxels end their file (byte skip
    -1), and one in no space at all (spacings only: ITK's identity directions, origin 0, with
    a twin of its own). Each run's label map is voxel for voxel its NIfTI-2 twin's; SimpleITK
    reads every output back as uint8 with the input's origin, spacing and directions;
  - --probabilities and --multi-label: 4-D .nrrd files (a last "list" axis) equal to the
    twin's 4D NIfTI files;
  - a four-channel model (the test matrix's f24_c64_cfg_ts) on a 4-sequence MRI phantom as a
    SimpleITK vector image (a first "vector" axis) and by hand with a last "list" axis: the
    twin's labels;
  - the batch form names its outputs DIR/<name>_seg.nrrd;
  - a label map that cannot be written (a file size limit: EFBIG, as a full disk): exit 2,
    one line, nothing left behind;
  - refusals, exit 2, one line, nothing written: a 2-D image, bzip2 and text voxels, voxels
    in several files (LIST), a data file in another folder, no endian, the channels' axis
    between spatial ones, truncated and corrupt voxels, and a NIfTI output name.

    nrrd_test.py SWINRUN MODEL_1CH MODEL_4CH WORKDIR"""
import gzip
import os
import shutil
import sys

import nibabel as nib
import numpy as np
import SimpleITK as sitk

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "metaimage"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "export"))
import mha_test as mt  # noqa: E402  (the twin's geometry and the ITK helpers)
from make_ct_phantom import phantom  # noqa: E402

check, run = mt.check, mt.run


def vec(v):
    return "(" + ",".join(f"{x:.17g}" for x in v) + ")"


def header(shape, ntype, *, space="left-posterior-superior", endian="little", encoding="raw", extra=(),
           channels=None):
    """A NRRD header for the test's grid; channels: ("first" | "last", count)."""
    sign = np.array([-1.0, -1.0, 1.0]) if space == "right-anterior-superior" else np.ones(3)
    dirs = [vec(sign * mt.DIRECTION[:, a] * mt.SPACING[a]) for a in range(3)]
    sizes, kinds = [str(s) for s in shape], ["domain"] * 3
    if channels:
        pos = 0 if channels[0] == "first" else 3
        sizes.insert(pos, str(channels[1]))
        dirs.insert(pos, "none")
        kinds.insert(pos, "vector" if pos == 0 else "list")
    lines = ["NRRD0004", "# a test header", f"type: {ntype}", f"dimension: {len(sizes)}", f"space: {space}",
             "sizes: " + " ".join(sizes), "space directions: " + " ".join(dirs), "kinds: " + " ".join(kinds),
             f"endian: {endian}", f"encoding: {encoding}", "space origin: " + vec(sign * np.array(mt.ORIGIN)),
             "an_key:=a value", *extra]
    return "\n".join(lines).encode() + b"\n"


def ct_variants(work, ct):
    v = {}
    v["sitk_gzip.nrrd"] = os.path.join(work, "sitk_gzip.nrrd")
    sitk.WriteImage(mt.sitk_image(ct), v["sitk_gzip.nrrd"], useCompression=True)
    v["sitk_raw.nrrd"] = os.path.join(work, "sitk_raw.nrrd")
    sitk.WriteImage(mt.sitk_image(ct), v["sitk_raw.nrrd"], useCompression=False)
    v["sitk_detached.nhdr"] = os.path.join(work, "sitk_detached.nhdr")
    sitk.WriteImage(mt.sitk_image(ct), v["sitk_detached.nhdr"], useCompression=True)
    p = v["ras_space.nrrd"] = os.path.join(work, "ras_space.nrrd")
    open(p, "wb").write(header(ct.shape, "short", space="right-anterior-superior", encoding="gzip") + b"\n" +
                        gzip.compress(mt.voxels(ct, "<i2")))
    p = v["big_endian.nrrd"] = os.path.join(work, "big_endian.nrrd")
    open(p, "wb").write(header(ct.shape, "signed short int", endian="big") + b"\n" + mt.voxels(ct, ">i2"))
    p = v["line_skip.nhdr"] = os.path.join(work, "line_skip.nhdr")
    open(p, "wb").write(header(ct.shape, "int16", extra=["data file: line_skip.dat", "line skip: 2"]))
    open(os.path.join(work, "line_skip.dat"), "wb").write(b"two lines\nof another tool\n" + mt.voxels(ct, "<i2"))
    # gzip voxels as three gzip members one after another (RFC 1952 2.2), as teem's and ITK's gzread
    # read them (swinrun inflated the first member alone and refused the file as too short)
    p = v["gzip_members.nrrd"] = os.path.join(work, "gzip_members.nrrd")
    raw, cut = mt.voxels(ct, "<i2"), [0, 1000, 50001, None]
    open(p, "wb").write(header(ct.shape, "short", encoding="gzip") + b"\n" +
                        b"".join(gzip.compress(raw[a:b]) for a, b in zip(cut, cut[1:])))
    # "./name": the voxels beside the header, as teem and ITK read it (swinrun refused the folder part)
    p = v["dot_slash.nhdr"] = os.path.join(work, "dot_slash.nhdr")
    open(p, "wb").write(header(ct.shape, "int16", extra=["data file: ./dot_slash.raw"]))
    open(os.path.join(work, "dot_slash.raw"), "wb").write(mt.voxels(ct, "<i2"))
    p = v["byte_skip_end.nhdr"] = os.path.join(work, "byte_skip_end.nhdr")
    open(p, "wb").write(header(ct.shape, "int32", extra=["data file: byte_skip_end.raw", "byte skip: -1"]))
    open(os.path.join(work, "byte_skip_end.raw"), "wb").write(b"\x00" * 77 + mt.voxels(ct, "<i4"))
    return v


def single_channel(swinrun, model, work, ct, twin_seg):
    want = np.asarray(nib.load(twin_seg).dataobj)
    for name, path in ct_variants(work, ct).items():
        out = os.path.join(work, "out_" + name.replace(".", "_") + ".nrrd")
        report = out + ".json"
        r = run([swinrun, path, out, "--model", model, "--json", report])
        if not check(f"{name}: segments", r.returncode == 0, r.stderr.strip()[-300:]):
            continue
        im = sitk.ReadImage(out)
        got = mt.as_xyz(im)
        check(f"{name}: SimpleITK reads uint8 labels on the input's grid", im.GetPixelID() == sitk.sitkUInt8 and
              got.shape == ct.shape and mt.same_geometry(im), f"{got.shape} {im.GetPixelIDTypeAsString()}")
        check(f"{name}: the labels are the NIfTI twin's, voxel for voxel", got.shape == want.shape and
              np.array_equal(got, want), f"{int(np.sum(got != want)) if got.shape == want.shape else '-'} differ")
        check(f"{name}: --json statistics = numpy's on the CT's values", got.shape == ct.shape and
              mt.statistics_match(report, got, ct))


def no_space(swinrun, model, work, ct):
    """Spacings only: ITK's identity directions in LPS, origin 0."""
    p = os.path.join(work, "no_space.nrrd")
    lines = ["NRRD0005", "type: short", "dimension: 3", "sizes: " + " ".join(map(str, ct.shape)),
             "spacings: " + " ".join(map(str, mt.SPACING)), "endian: little", "encoding: raw"]
    open(p, "wb").write("\n".join(lines).encode() + b"\n\n" + mt.voxels(ct, "<i2"))
    twin = os.path.join(work, "no_space_twin.nii")
    nib.save(nib.Nifti2Image(ct, np.diag([-mt.SPACING[0], -mt.SPACING[1], mt.SPACING[2], 1.0])), twin)
    outs = [os.path.join(work, n) for n in ("no_space_seg.nrrd", "no_space_twin_seg.nii.gz")]
    r = [run([swinrun, p, outs[0], "--model", model]), run([swinrun, twin, outs[1], "--model", model])]
    if check("no space (spacings only) and its twin segment", all(x.returncode == 0 for x in r),
             "".join(x.stderr for x in r)[-300:]):
        got, want = mt.as_xyz(sitk.ReadImage(outs[0])), np.asarray(nib.load(outs[1]).dataobj)
        check("no space: the labels are its twin's", got.shape == want.shape and np.array_equal(got, want))


def axis_mins(swinrun, model, work, ct):
    """No space, its origin in axis mins (with spacings, cell centring by default; with axis maxs,
    node centring, no spacings): the label map's origin and spacing are where SimpleITK places the
    input (swinrun put the origin at 0)."""
    size = " ".join(map(str, ct.shape))
    cases = {"axis_mins_cell.nrrd": ["spacings: " + " ".join(map(str, mt.SPACING)), "axis mins: -40.5 12 7.25"],
             "axis_mins_node.nrrd": ["axis mins: 3 -8 20", "axis maxs: 63 52 110", "centers: node node node"]}
    for name, extra in cases.items():
        p = os.path.join(work, name)
        lines = ["NRRD0004", "type: short", "dimension: 3", "sizes: " + size, "endian: little", "encoding: raw", *extra]
        open(p, "wb").write("\n".join(lines).encode() + b"\n\n" + mt.voxels(ct, "<i2"))
        out = os.path.join(work, "out_" + name)
        r = run([swinrun, p, out, "--model", model])
        if not check(f"{name}: segments", r.returncode == 0, r.stderr.strip()[-300:]):
            continue
        want, got = sitk.ReadImage(p), sitk.ReadImage(out)
        check(f"{name}: the label map lies where SimpleITK puts the CT (origin {want.GetOrigin()})",
              np.allclose(got.GetOrigin(), want.GetOrigin(), atol=1e-4) and
              np.allclose(got.GetSpacing(), want.GetSpacing(), atol=1e-6),
              f"origin {got.GetOrigin()}, spacing {got.GetSpacing()} against {want.GetSpacing()}")


def outputs_4d(swinrun, model, work, twin_prob, twin_masks):
    src = os.path.join(work, "sitk_gzip.nrrd")
    seg, prob, masks = (os.path.join(work, n) for n in ("p_seg.nrrd", "p_prob.nrrd", "masks.nrrd"))
    r = [run([swinrun, src, seg, "--model", model, "--probabilities", prob]),
         run([swinrun, src, masks, "--model", model, "--multi-label"])]
    if not check("--probabilities p.nrrd and --multi-label masks.nrrd", all(x.returncode == 0 for x in r),
                 "".join(x.stderr for x in r)[-300:]):
        return
    for name, path, twin, dtype in (("probabilities", prob, twin_prob, np.float32),
                                    ("multi-label masks", masks, twin_masks, np.uint8)):
        im = sitk.ReadImage(path)  # ITK takes the last "list" axis as the voxels' components
        got = sitk.GetArrayFromImage(im).transpose(2, 1, 0, 3)
        want = np.asarray(nib.load(twin).dataobj)
        check(f"{name}: a .nrrd with a last list axis, the twin's (x, y, z, channel) values",
              got.dtype == dtype and got.shape == want.shape and np.array_equal(got, want) and
              mt.same_geometry(im), f"{got.shape} {got.dtype} vs {want.shape}")
    bdir = os.path.join(work, "batch")
    os.makedirs(bdir)
    r = run([swinrun, "segment", "--out-dir", bdir, src, "--model", model, "-q"])
    check("--out-dir: DIR/<name>_seg.nrrd", r.returncode == 0 and os.listdir(bdir) == ["sitk_gzip_seg.nrrd"],
          f"{os.listdir(bdir)} {r.stderr.strip()[-200:]}")
    mt.write_fails(swinrun, model, src, os.path.join(work, "fsize"), ".nrrd")


def second_axis_channels(head):
    """A header whose first axis (the channels') is moved second: sizes, directions, kinds."""
    lines = head.decode().split("\n")
    for i, l in enumerate(lines):
        for field in ("sizes: ", "space directions: ", "kinds: "):
            if l.startswith(field):
                w = l[len(field):].split(" ")
                lines[i] = field + " ".join([w[1], w[0], *w[2:]])
    return "\n".join(lines).encode()


def refusals(swinrun, model, work, ct):
    rdir = os.path.join(work, "refused")
    os.makedirs(rdir)
    good = mt.voxels(ct, "<i2")
    cases = {
        "2d": (header(ct.shape, "short").replace(b"dimension: 3", b"dimension: 2"), good, "2-D"),
        "bzip2": (header(ct.shape, "short", encoding="bzip2"), good, "bzip2"),
        "text": (header(ct.shape, "short", encoding="ascii"), b"1 2 3", "text"),
        "list": (header(ct.shape, "short", extra=["data file: LIST", ""]), b"a.raw\n", "several files"),
        "other_folder": (header(ct.shape, "short", extra=["data file: ../x.raw"]), b"", "folder"),
        "no_endian": (header(ct.shape, "short").replace(b"endian: little\n", b""), good, "byte order"),
        "middle_channels": (second_axis_channels(header(ct.shape, "short", channels=("first", 1))), good, "between"),
        "truncated": (header(ct.shape, "short"), good[: len(good) // 3], "truncated"),
        "corrupt_gzip": (header(ct.shape, "short", encoding="gzip"), b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4,
                         "corrupt"),
    }
    for name, (head, data, want) in cases.items():
        path, out = os.path.join(rdir, name + ".nrrd"), os.path.join(rdir, name + "_out.nrrd")
        open(path, "wb").write(head + (b"\n" + data if data or name == "truncated" else b""))
        r = run([swinrun, path, out, "--model", model])
        lines = r.stderr.strip().splitlines()
        check(f"refused: {name}", r.returncode == 2 and len(lines) == 1 and want in r.stderr and
              not os.path.exists(out), r.stderr.strip()[-170:])
    out = os.path.join(rdir, "as_nifti.nii.gz")
    r = run([swinrun, os.path.join(work, "sitk_gzip.nrrd"), out, "--model", model])
    check("refused: a NIfTI output name for NRRD input", r.returncode == 2 and ".nrrd" in r.stderr and
          not os.path.exists(out), r.stderr.strip()[-160:])


def four_channels(swinrun, model, work):
    mri = mt.mri_phantom()
    first, last = os.path.join(work, "mri_vector.nrrd"), os.path.join(work, "mri_list.nrrd")
    sitk.WriteImage(mt.sitk_image(mri, vector=True), first, useCompression=True)
    planes = np.ascontiguousarray(mri.transpose(3, 2, 1, 0)).astype("<f4").tobytes()  # channel slowest
    open(last, "wb").write(header(mri.shape[:3], "float", channels=("last", 4)) + b"\n" + planes)
    # SimpleITK's 4-D image: "space dimension: 4", the channels' axis along the fourth world
    # coordinate, every kind domain (swinrun refused the 4-D world)
    four_d = os.path.join(work, "mri_4d.nrrd")
    im = sitk.JoinSeries([mt.sitk_image(np.ascontiguousarray(mri[..., c])) for c in range(mri.shape[3])])
    d = np.eye(4)
    d[:3, :3] = mt.DIRECTION
    im.SetSpacing(mt.SPACING + (1.0,))
    im.SetOrigin(mt.ORIGIN + (0.0,))
    im.SetDirection(tuple(d.ravel()))
    sitk.WriteImage(im, four_d, useCompression=True)
    check("SimpleITK writes its 4-D image in a 4-D world", b"space dimension: 4" in open(four_d, "rb").read(400))
    mt.same_as_twin(swinrun, model, work, mri, {"a first vector axis": first, "a last list axis": last,
                                                "SimpleITK's 4-D image": four_d})


def main():
    swinrun, model1, model4, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ct = phantom((72, 60, 28), mt.SPACING, seed=6)
    twin = os.path.join(work, "twin.nii")
    nib.save(nib.Nifti2Image(ct, mt.ras_affine()), twin)
    outs = [os.path.join(work, n) for n in ("twin_seg.nii.gz", "twin_prob.nii.gz", "twin_masks.nii.gz")]
    r = [run([swinrun, twin, outs[0], "--model", model1, "--probabilities", outs[1]]),
         run([swinrun, twin, outs[2], "--model", model1, "--multi-label"])]
    if check("the NIfTI twin segments", all(x.returncode == 0 for x in r), "".join(x.stderr for x in r)[-300:]):
        labels = np.unique(np.asarray(nib.load(outs[0]).dataobj))
        check(f"the twin's labels present: {labels.tolist()} (several, else equality proves little)", len(labels) >= 3)
        single_channel(swinrun, model1, work, ct, outs[0])
        no_space(swinrun, model1, work, ct)
        axis_mins(swinrun, model1, work, ct)
        outputs_4d(swinrun, model1, work, outs[1], outs[2])
        refusals(swinrun, model1, work, ct)
    four_channels(swinrun, model4, work)
    print("PASS" if mt.ok else "FAIL")
    return 0 if mt.ok else 1


if __name__ == "__main__":
    sys.exit(main())
