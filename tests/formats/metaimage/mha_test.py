#!/usr/bin/env python3
"""MetaImage (.mha / .mhd) in and out, against a NIfTI twin and ITK's own reader:

  - one oblique CT phantom written as MetaImage seven ways: by SimpleITK (ITK's MetaIO) as a
    zlib-compressed int16 .mha, an uncompressed .mhd + .raw pair and a compressed float32 .mha;
    by hand as a big-endian .mha whose keys use MetaIO's synonyms (Position, Orientation) in
    another order with CRLF line ends, a .mhd whose voxels are one gzip stream without
    CompressedDataSize, a .mhd whose HeaderSize = -1 puts the voxels at the end of a file with
    other bytes before them, and a MET_LONG (4-byte) .mhd. Each run's label map is voxel for
    voxel the label map of the same CT as NIfTI-2 (its float64 affine exact); SimpleITK reads
    every output back as uint8 with the input's origin, spacing and directions;
  - --probabilities and --multi-label: 4D .mha files equal to the twin's 4D NIfTI files;
  - a four-channel model (the test matrix's f24_c64_cfg_ts) on a 4-sequence MRI phantom as a
    4-D .mha (NDims 4) and as a vector image (ElementNumberOfChannels 4): the twin's labels;
  - the batch form names its outputs DIR/<name>_seg.mha;
  - a label map that cannot be written (a file size limit: EFBIG, as a full disk): exit 2,
    one line, nothing left behind;
  - refusals, exit 2, one line, nothing written: a 2-D image, slices listed in several files
    (LIST), a voxel file in another folder, text voxels, truncated and corrupt voxels, an
    array element type, too few DimSize values, NaN voxels, and a NIfTI output name.

    mha_test.py SWINRUN MODEL_1CH MODEL_4CH WORKDIR"""
import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys

import nibabel as nib
import numpy as np
import SimpleITK as sitk

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "export"))
from make_ct_phantom import phantom  # noqa: E402
import make_mri_phantom  # noqa: E402

ok = True


def check(what, cond, detail=""):
    global ok
    print(f"{what:78s} {'ok' if cond else 'FAIL'} {detail}", flush=True)
    ok &= bool(cond)
    return bool(cond)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def write_fails(swinrun, model, src, out_dir, ext):
    """The label map cannot be written past 3000 bytes (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG, as
    a full disk): exit 2, one line, and nothing left in out_dir, no temporary file either."""
    os.makedirs(out_dir)

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))
    r = run([swinrun, src, os.path.join(out_dir, "labels" + ext), "--model", model], preexec_fn=limit)
    lines = r.stderr.strip().splitlines()
    check("a write that fails (file size limit): exit 2, one line, nothing left", r.returncode == 2 and
          len(lines) == 1 and not os.listdir(out_dir), f"{r.stderr.strip()[-160:]} left {os.listdir(out_dir)}")


SPACING = (0.9, 0.8, 2.5)
ORIGIN = (10.0, -20.0, 30.0)
T = np.deg2rad(12)
DIRECTION = np.array([[np.cos(T), -np.sin(T), 0], [np.sin(T), np.cos(T), 0], [0, 0, 1]])  # ITK's: columns are axes


def ras_affine():
    a = np.eye(4)
    a[:3, :3] = DIRECTION * np.array(SPACING)
    a[:3, 3] = ORIGIN
    return np.diag([-1.0, -1.0, 1.0, 1.0]) @ a


def sitk_image(vol_xyz, vector=False):
    """vol (nx, ny, nz[, c]) -> an ITK image of the test's geometry."""
    arr = np.moveaxis(vol_xyz, (0, 1, 2), (2, 1, 0)) if vol_xyz.ndim == 3 or vector else vol_xyz.transpose(3, 2, 1, 0)
    im = sitk.GetImageFromArray(np.ascontiguousarray(arr), isVector=vector)
    nd = im.GetDimension()
    im.SetSpacing(SPACING + (1.0,) * (nd - 3))
    im.SetOrigin(ORIGIN + (0.0,) * (nd - 3))
    d = np.eye(nd)
    d[:3, :3] = DIRECTION
    im.SetDirection(tuple(d.ravel()))
    return im


def header_text(vol, etype, msb=False, datafile="LOCAL", extra=(), crlf=False, synonyms=False):
    m = " ".join(f"{v:.17g}" for v in DIRECTION.T.ravel())  # axis after axis
    lines = ["ObjectType = Image", "NDims = 3", f"DimSize = {vol.shape[0]} {vol.shape[1]} {vol.shape[2]}",
             f"ElementType = {etype}", "BinaryData = True", f"BinaryDataByteOrderMSB = {msb}",
             ("Orientation = " if synonyms else "TransformMatrix = ") + m,
             ("Position = " if synonyms else "Offset = ") + " ".join(f"{v:.17g}" for v in ORIGIN),
             "ElementSpacing = " + " ".join(f"{v:.17g}" for v in SPACING), *extra, f"ElementDataFile = {datafile}"]
    if synonyms:
        lines = [lines[0], lines[1], lines[7], lines[6], lines[2], lines[8], lines[3], lines[4], lines[5], *lines[9:]]
    return ("\r\n" if crlf else "\n").join(lines).encode() + b"\n"


def voxels(vol, dtype):
    return np.ascontiguousarray(vol.transpose(2, 1, 0)).astype(dtype).tobytes()


def ct_variants(work, ct):
    """name -> path of the CT as MetaImage, each its own way."""
    v = {}
    v["sitk_zlib_int16.mha"] = os.path.join(work, "sitk_zlib_int16.mha")
    sitk.WriteImage(sitk_image(ct), v["sitk_zlib_int16.mha"], useCompression=True)
    v["sitk_pair.mhd"] = os.path.join(work, "sitk_pair.mhd")
    sitk.WriteImage(sitk_image(ct), v["sitk_pair.mhd"], useCompression=False)
    v["sitk_float32.mha"] = os.path.join(work, "sitk_float32.mha")
    sitk.WriteImage(sitk_image(ct.astype(np.float32)), v["sitk_float32.mha"], useCompression=True)
    p = v["msb_synonyms_crlf.mha"] = os.path.join(work, "msb_synonyms_crlf.mha")
    open(p, "wb").write(header_text(ct, "MET_SHORT", msb=True, crlf=True, synonyms=True) + voxels(ct, ">i2"))
    p = v["gzip_pair.mhd"] = os.path.join(work, "gzip_pair.mhd")
    open(p, "wb").write(header_text(ct, "MET_SHORT", datafile="gzip_pair.zraw", extra=["CompressedData = True"]))
    open(os.path.join(work, "gzip_pair.zraw"), "wb").write(gzip.compress(voxels(ct, "<i2")))
    p = v["headersize_end.mhd"] = os.path.join(work, "headersize_end.mhd")
    open(p, "wb").write(header_text(ct, "MET_SHORT", datafile="headersize_end.raw", extra=["HeaderSize = -1"]))
    open(os.path.join(work, "headersize_end.raw"), "wb").write(b"a header of another tool" + voxels(ct, "<i2"))
    # no ElementSpacing: MetaIO (ITK) takes ElementSize as the spacing (swinrun took 1 mm before)
    p = v["element_size.mha"] = os.path.join(work, "element_size.mha")
    open(p, "wb").write(header_text(ct, "MET_SHORT").replace(b"ElementSpacing", b"ElementSize") + voxels(ct, "<i2"))
    # MetaIO takes the attached voxels' ElementDataFile in any case (swinrun looked for a file "Local")
    p = v["local_mixed_case.mha"] = os.path.join(work, "local_mixed_case.mha")
    open(p, "wb").write(header_text(ct, "MET_SHORT", datafile="Local") + voxels(ct, "<i2"))
    p = v["long.mhd"] = os.path.join(work, "long.mhd")
    open(p, "wb").write(header_text(ct, "MET_LONG", datafile="long.raw"))
    open(os.path.join(work, "long.raw"), "wb").write(voxels(ct, "<i4"))
    return v


def geometry_of(im):
    return np.array(im.GetOrigin()[:3]), np.array(im.GetSpacing()[:3]), np.array(im.GetDirection()).reshape(
        im.GetDimension(), -1)[:3, :3]


def same_geometry(im):
    o, s, d = geometry_of(im)
    return np.allclose(o, ORIGIN, atol=1e-9) and np.allclose(s, SPACING, atol=1e-12) and np.allclose(d, DIRECTION,
                                                                                                   atol=1e-12)


def as_xyz(im):
    """An ITK image's voxels as (nx, ny, nz[, c]): a 4-D image's fourth axis last."""
    a = sitk.GetArrayFromImage(im)
    return a.transpose(2, 1, 0) if a.ndim == 3 else a.transpose(3, 2, 1, 0)


def statistics_match(report_path, labels, ct):
    """The report's organ statistics (voxels, mL, HU mean and SD) against numpy's on the CT's
    own values at the label map's voxels (the same grid): read from the file's int16 values
    after the float32 copy is freed, or from that copy, they must be these."""
    stats = json.load(open(report_path))["volumes"][0]["statistics"]
    ml = float(np.prod(SPACING)) / 1000
    want = [(lab, v.size, v.size * ml, v.mean(), v.std())
            for lab in (int(x) for x in np.unique(labels) if x) for v in [ct[labels == lab].astype(np.float64)]]
    got = [(x["label"], x["voxels"], x["volume_ml"], x["hu_mean"], x["hu_std"]) for x in stats]
    return len(got) == len(want) and all(
        g[:2] == w[:2] and np.allclose(g[2:], w[2:], rtol=1e-5, atol=1e-3) for g, w in zip(got, want))


def single_channel(swinrun, model, work):
    ct = phantom((72, 60, 28), SPACING, seed=5)
    twin = os.path.join(work, "twin.nii")
    nib.save(nib.Nifti2Image(ct, ras_affine()), twin)
    outs = {n: os.path.join(work, n) for n in ("twin_seg.nii.gz", "twin_prob.nii.gz", "twin_masks.nii.gz")}
    r = [run([swinrun, twin, outs["twin_seg.nii.gz"], "--model", model, "--probabilities", outs["twin_prob.nii.gz"]]),
         run([swinrun, twin, outs["twin_masks.nii.gz"], "--model", model, "--multi-label"])]
    if not check("the NIfTI twin segments", all(x.returncode == 0 for x in r), "".join(x.stderr for x in r)[-300:]):
        return
    want = np.asarray(nib.load(outs["twin_seg.nii.gz"]).dataobj)
    check(f"the twin's labels present: {np.unique(want).tolist()} (several, else equality proves little)",
          len(np.unique(want)) >= 3)
    for name, path in ct_variants(work, ct).items():
        out = os.path.join(work, "out_" + name.replace(".", "_") + ".mha")
        report = out + ".json"
        r = run([swinrun, path, out, "--model", model, "--json", report])
        if not check(f"{name}: segments", r.returncode == 0, r.stderr.strip()[-300:]):
            continue
        im = sitk.ReadImage(out)
        got = as_xyz(im)
        check(f"{name}: SimpleITK reads uint8 labels on the input's grid", im.GetPixelID() == sitk.sitkUInt8 and
              got.shape == ct.shape and same_geometry(im), f"{got.shape} {im.GetPixelIDTypeAsString()}")
        check(f"{name}: the labels are the NIfTI twin's, voxel for voxel", got.shape == want.shape and
              np.array_equal(got, want), f"{int(np.sum(got != want)) if got.shape == want.shape else '-'} differ")
        check(f"{name}: --json statistics = numpy's on the CT's values", got.shape == ct.shape and
              statistics_match(report, got, ct))

    src = os.path.join(work, "sitk_zlib_int16.mha")
    seg, prob, masks = (os.path.join(work, n) for n in ("p_seg.mha", "p_prob.mha", "masks.mha"))
    r = [run([swinrun, src, seg, "--model", model, "--probabilities", prob]),
         run([swinrun, src, masks, "--model", model, "--multi-label"])]
    if check("--probabilities p.mha and --multi-label masks.mha", all(x.returncode == 0 for x in r),
             "".join(x.stderr for x in r)[-300:]):
        p, pw = sitk.ReadImage(prob), np.asarray(nib.load(outs["twin_prob.nii.gz"]).dataobj)
        got = as_xyz(p)
        check("probabilities: a 4-D float32 .mha, the twin's (x, y, z, class) values", p.GetDimension() == 4 and
              p.GetPixelID() == sitk.sitkFloat32 and same_geometry(p) and got.shape == pw.shape and
              float(np.abs(got - pw).max()) == 0.0, f"{got.shape} vs {pw.shape}")
        m, mw = sitk.ReadImage(masks), np.asarray(nib.load(outs["twin_masks.nii.gz"]).dataobj)
        got = as_xyz(m)
        check("multi-label: a 4-D uint8 .mha of one mask per channel, the twin's", m.GetDimension() == 4 and
              got.shape == mw.shape and np.array_equal(got, mw) and int(np.sum(got.sum(axis=3) >= 2)) > 0,
              f"{got.shape}, {int(np.sum(got.sum(axis=3) >= 2))} voxels in two masks or more")

    bdir = os.path.join(work, "batch")
    os.makedirs(bdir)
    r = run([swinrun, "segment", "--out-dir", bdir, src, "--model", model, "-q"])
    check("--out-dir: DIR/<name>_seg.mha", r.returncode == 0 and os.listdir(bdir) == ["sitk_zlib_int16_seg.mha"],
          f"{os.listdir(bdir)} {r.stderr.strip()[-200:]}")
    write_fails(swinrun, model, src, os.path.join(work, "fsize"), ".mha")
    refusals(swinrun, model, work, ct)


def refusals(swinrun, model, work, ct):
    rdir = os.path.join(work, "refused")
    os.makedirs(rdir)
    cases = {}

    def add(name, head, data=b"", side=None):
        cases[name] = os.path.join(rdir, name + ".mha")
        open(cases[name], "wb").write(head + data)
        if side:
            open(os.path.join(rdir, side[0]), "wb").write(side[1])

    good = voxels(ct, "<i2")
    add("2d", header_text(ct, "MET_SHORT").replace(b"NDims = 3", b"NDims = 2").replace(
        f"DimSize = {ct.shape[0]} {ct.shape[1]} {ct.shape[2]}".encode(), b"DimSize = 72 60"), good)
    add("list", header_text(ct, "MET_SHORT", datafile="LIST") + b"a.raw\nb.raw\n")
    add("other_folder", header_text(ct, "MET_SHORT", datafile="../x.raw"))
    add("text_voxels", header_text(ct, "MET_SHORT").replace(b"BinaryData = True", b"BinaryData = False"), b"0 1 2")
    add("truncated", header_text(ct, "MET_SHORT"), good[: len(good) // 2])
    add("corrupt_zlib", header_text(ct, "MET_SHORT", extra=["CompressedData = True", "CompressedDataSize = 4000"]),
        b"\x78\x9c" + bytes(range(256)) * 16)
    add("array_type", header_text(ct, "MET_SHORT_ARRAY"), good)
    add("dimsize_two", header_text(ct, "MET_SHORT").replace(
        f"DimSize = {ct.shape[0]} {ct.shape[1]} {ct.shape[2]}".encode(), b"DimSize = 72 60"), good)
    nan = np.ascontiguousarray(ct.transpose(2, 1, 0)).astype("<f4")
    nan.flat[1234] = np.nan
    add("nan", header_text(ct, "MET_FLOAT"), nan.tobytes())
    want = {"2d": "2-D", "list": "several files", "other_folder": "folder", "text_voxels": "text",
            "truncated": "truncated", "corrupt_zlib": "corrupt", "array_type": "MET_SHORT_ARRAY",
            "dimsize_two": "DimSize", "nan": "NaN"}
    for name, path in cases.items():
        out = os.path.join(rdir, name + "_out.mha")
        r = run([swinrun, path, out, "--model", model])
        lines = r.stderr.strip().splitlines()
        check(f"refused: {name}", r.returncode == 2 and len(lines) == 1 and want[name] in r.stderr and
              not os.path.exists(out), r.stderr.strip()[-160:])
    out = os.path.join(rdir, "as_nifti.nii.gz")
    r = run([swinrun, os.path.join(work, "sitk_zlib_int16.mha"), out, "--model", model])
    check("refused: a NIfTI output name for MetaImage input", r.returncode == 2 and ".mha" in r.stderr and
          not os.path.exists(out), r.stderr.strip()[-160:])


MRI_SHAPE = (58, 52, 40)


def mri_phantom():
    """(nx, ny, nz, 4) MRI-like intensities of the four-channel cases."""
    return make_mri_phantom.phantom(MRI_SHAPE, 4, 2)


def same_as_twin(swinrun, model, work, mri, inputs):
    """inputs: {name: path} of mri written as four-channel files; each, segmented with the
    BraTS recipe, must give the labels of mri's NIfTI-2 twin."""
    twin, twin_out = os.path.join(work, "mri_twin.nii"), os.path.join(work, "mri_twin_seg.nii.gz")
    nib.save(nib.Nifti2Image(mri, ras_affine()), twin)
    opts = ["--model", model, "--intensity-norm", "zscore-nonzero"]
    outs = {n: os.path.join(work, "seg_" + os.path.basename(p)) for n, p in inputs.items()}
    r = [run([swinrun, twin, twin_out, *opts])] + [run([swinrun, p, outs[n], *opts]) for n, p in inputs.items()]
    if not check(f"four channels: the NIfTI twin and {', '.join(inputs)} segment", all(x.returncode == 0 for x in r),
                 "".join(x.stderr for x in r)[-300:]):
        return
    want = np.asarray(nib.load(twin_out).dataobj)
    for n, out in outs.items():
        got = as_xyz(sitk.ReadImage(out))
        check(f"four channels: {n} gives the twin's labels ({len(np.unique(want))} labels present)",
              got.shape == want.shape and np.array_equal(got, want) and len(np.unique(want)) >= 2)


def four_channels(swinrun, model, work):
    mri = mri_phantom()
    four_d, vector = os.path.join(work, "mri_4d.mha"), os.path.join(work, "mri_vector.mha")
    sitk.WriteImage(sitk_image(mri), four_d, useCompression=True)
    sitk.WriteImage(sitk_image(mri, vector=True), vector, useCompression=True)
    same_as_twin(swinrun, model, work, mri, {"a 4-D .mha": four_d, "a vector .mha": vector})


def main():
    swinrun, model1, model4, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    single_channel(swinrun, model1, work)
    four_channels(swinrun, model4, work)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
