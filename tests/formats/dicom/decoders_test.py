#!/usr/bin/env python3
"""The DICOM reader's decoders against the pixels they were made from (issue 29, part A).

    decoders_test.py DECODE_PIXELS SWINRUN MODEL WORK SERIES_HU

1. Pixels: 37 x 33 images of known stored values (a smooth pattern with noise, the range's
   both ends present) at 8, 12 and 16 bits, unsigned and signed, RescaleSlope 2 and
   RescaleIntercept -1024, written in every transfer syntax the reader decodes, each file
   decoded by the reader (DECODE_PIXELS: swin_dcm_read_header + swin_dcm_read_pixels, HU as
   float32) and compared with stored * 2 - 1024:
     explicit VR little endian, deflate (DCMTK's dcmconv +td), RLE (pydicom), JPEG lossless
     SV1 (dcmcjpeg +e1), JPEG-LS lossless (dcmcjpls +el), JPEG 2000 lossless (pydicom +
     pylibjpeg-openjpeg; also wrapped as a JP2 file, which some writers do), HTJ2K lossless and lossless RPCL (openjph's ojph_compress, the
     codestream encapsulated with pydicom): equal, every pixel;
     JPEG baseline (dcmcjpeg +eb, 8-bit unsigned), JPEG extended (+ee, 8 and 12-bit
     unsigned), JPEG 2000 lossy (PSNR 50 dB), HTJ2K lossy (ojph_compress
     irreversible, qstep 0.001): RMS error at most 1 % of the stored range, largest error at
     most 6 % (JPEG's quality 90 and these settings stay well inside; the measured values are
     printed).
   ojph_compress 0.9 misreads signed raw input, so a signed HTJ2K codestream is made from the
   unsigned one of the values + 2^(bits-1) with the sign bit of its SIZ component set: the
   standard's DC level shift (ITU-T T.800 G.1) makes the two codestreams code the same
   samples.
   12 of 16 bits with other bits above the value (old scanners' overlays), a signed value not
   sign-extended, a value in the top bits (HighBit 15): the stored values, as pydicom reads
   them; a PixelPaddingValue outside 12 bits (63536) still marks air; HighBit below BitsStored - 1:
   refused.
2. Hostile JPEG 2000 / HTJ2K pixel data: truncated, Rows or Columns not those of the
   codestream, a 16-bit codestream with BitsAllocated 8, three components, not a codestream,
   no fragment; an unsupported syntax (MPEG2) and an unknown UID: each refused, exit 2, one
   line naming the problem, nothing else printed. Codestreams whose precision or sign is not
   BitsStored's or PixelRepresentation's (JPEG 2000, JP2, HTJ2K): decoded as pydicom decodes
   them with its default J2K corrections, every pixel.
3. swinrun: a 64 x 48 x 24 phantom series and its JPEG 2000 lossless, HTJ2K lossless and
   lossless RPCL and deflate twins give the same label map; the JPEG 2000 one decoded on 1, 2
   and 3 threads (SERIES_HU: the series reader's volume) equal to the uncompressed twin's, and
   with two files truncated the same refusal on every thread count, naming the first. (The lossy twins are not run:
   the test model's labels move with errors far below the codecs', so their agreement says
   nothing of the decoder; part 1 bounds the lossy pixels.)
4. An oblique series (normal near (1, 1, 1) / sqrt 3), 40 slices 0.6 mm apart, positions
   written with two decimals as some scanners do (each slice then up to 0.0087 mm off along
   the normal, gaps up to 0.017 mm apart): the series reader's volume (SERIES_HU) is the
   slices themselves as pydicom decodes them, sorted along the normal, one plane each, none
   blended with its neighbour (the rounding of an axial stack, 0.01 mm, made it 40 planes
   each partly interpolated)."""
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np
import openjpeg.utils
import pydicom
from pydicom.encaps import encapsulate
from pydicom.uid import JPEG2000, JPEG2000Lossless, RLELossless

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_series as ms  # noqa: E402

ROWS, COLS = 33, 37  # odd; pylibjpeg-openjpeg's 6 resolutions need 32 or more
SLOPE, INTERCEPT = 2.0, -1024.0
HTJ2K_SYNTAX = {"htj2k": "1.2.840.10008.1.2.4.201", "htj2k_rpcl": "1.2.840.10008.1.2.4.202",
                "htj2k_lossy": "1.2.840.10008.1.2.4.203"}
LOSSLESS = ["explicit", "deflate", "rle", "jpegll", "jpegls", "j2k", "j2k_jp2", "htj2k", "htj2k_rpcl"]
LOSSY = ["jpeg_baseline", "jpeg_extended", "j2k_lossy", "htj2k_lossy"]

ok = True


def check(what, cond, detail=""):
    global ok
    print(f"{what:72s} {'ok' if cond else 'FAIL'} {detail}", flush=True)
    ok &= bool(cond)
    return bool(cond)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def stored_range(bits, signed):
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def known_pixels(bits, signed, rng):
    lo, hi = stored_range(bits, signed)
    y, x = np.mgrid[0:ROWS, 0:COLS]
    smooth = lo + (hi - lo) * (0.5 + 0.4 * np.sin(x / 5.0) * np.cos(y / 4.0))
    v = np.clip(np.rint(smooth + rng.normal(0, (hi - lo) * 0.01, smooth.shape)), lo, hi).astype(np.int64)
    v[0, 0], v[-1, -1] = lo, hi
    return v


def dataset(v, bits, signed):
    geo = ms.Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5)
    ds = ms.make_slice(geo, 0, np.full((ROWS, COLS), INTERCEPT), ms.new_uids(), 1, slope=SLOPE, intercept=INTERCEPT)
    ds.BitsAllocated = 8 if bits == 8 else 16
    ds.BitsStored, ds.HighBit, ds.PixelRepresentation = bits, bits - 1, int(signed)
    ds.PixelData = v.astype(("<i" if signed else "<u") + ("1" if bits == 8 else "2")).tobytes()
    return ds


def htj2k_codestream(v, bits, signed, work, reversible, order):
    """ojph_compress on the raw samples (offset to unsigned when signed, then the SIZ sign bit set)."""
    lo = -(1 << (bits - 1)) if signed else 0
    rows, cols = v.shape
    raw, j2c = os.path.join(work, "in.yuv"), os.path.join(work, "out.j2c")
    (v - lo).astype("u1" if bits == 8 else "<u2").tofile(raw)
    args = ["-reversible", "true"] if reversible else ["-reversible", "false", "-qstep", "0.001"]
    r = run(["ojph_compress", "-i", raw, "-o", j2c, "-dims", f"{{{cols},{rows}}}", "-num_comps", "1", "-signed",
             "false", "-bit_depth", bits, "-downsamp", "{1,1}", "-prog_order", order, *args])
    if r.returncode:
        raise RuntimeError(f"ojph_compress: {r.stderr.strip()[-200:]}")
    cs = bytearray(open(j2c, "rb").read())
    assert cs[:4] == b"\xff\x4f\xff\x51" and cs[42] == bits - 1  # SOC, SIZ; Ssiz of component 0
    if signed:
        cs[42] |= 0x80
    return bytes(cs)


def set_encapsulated(ds, codestream, syntax):
    """codestream as the one fragment of the pixel data (no fragment: an empty one, which
    pydicom's encapsulate() refuses to write)."""
    ds.file_meta.TransferSyntaxUID = syntax
    empty_item = b"\xfe\xff\x00\xe0\x00\x00\x00\x00"
    ds.PixelData = encapsulate([codestream]) if codestream else empty_item * 2
    ds["PixelData"].VR = "OB"
    ds["PixelData"].is_undefined_length = True


def dcmtk(tool, args, path):
    r = run([tool, *args, path, path + ".tmp"])
    if r.returncode:
        raise RuntimeError(f"{tool}: {r.stderr.strip()[-200:]}")
    os.replace(path + ".tmp", path)


def write(kind, ds, path, work):
    """ds (uncompressed) written to path in the transfer syntax `kind`; False when no tool here
    writes that case."""
    bits, signed = int(ds.BitsStored), bool(ds.PixelRepresentation)
    if kind == "jpeg_baseline" and (bits != 8 or signed):
        return False
    if kind == "jpeg_extended" and (bits == 16 or signed):
        return False
    if kind == "rle":
        ds.compress(RLELossless, encoding_plugin="pydicom")
    elif kind == "j2k":
        ds.compress(JPEG2000Lossless, encoding_plugin="pylibjpeg")
    elif kind == "j2k_jp2":  # a JP2 file where DICOM wants the bare codestream, as some writers do
        v = ds.pixel_array
        set_encapsulated(ds, openjpeg.utils.encode_array(v, bits_stored=bits, codec_format=1), JPEG2000Lossless)
    elif kind == "j2k_lossy":
        ds.compress(JPEG2000, encoding_plugin="pylibjpeg", j2k_psnr=[50])
    elif kind in HTJ2K_SYNTAX:
        v = ds.pixel_array.astype(np.int64)
        cs = htj2k_codestream(v, bits, signed, work, kind != "htj2k_lossy", "LRCP" if kind == "htj2k" else "RPCL")
        set_encapsulated(ds, cs, HTJ2K_SYNTAX[kind])
    ds.save_as(path, enforce_file_format=True)
    tools = {"deflate": ("dcmconv", ["+td"]), "jpegll": ("dcmcjpeg", ["+e1"]), "jpegls": ("dcmcjpls", ["+el"]),
             "jpeg_baseline": ("dcmcjpeg", ["+eb"]), "jpeg_extended": ("dcmcjpeg", ["+ee"])}
    if kind in tools:
        dcmtk(*tools[kind], path)
    return True


def decode(tool, path, frames=0, threads=1):
    """The decoded HU: ROWS x COLS (frames 0: one frame), else frames x ROWS x COLS."""
    out = path + ".f32"
    r = run([tool, path, out, threads])
    if r.returncode:
        return None, r
    got = np.fromfile(out, np.float32)
    return (got.reshape(frames, ROWS, COLS) if frames else got.reshape(ROWS, COLS)), r


def pixels_part(tool, work):
    rng = np.random.default_rng(29)
    for bits in (8, 12, 16):
        for signed in (False, True):
            v = known_pixels(bits, signed, rng)
            want = (v.astype(np.float64) * SLOPE + INTERCEPT).astype(np.float32)
            lo, hi = stored_range(bits, signed)
            for kind in LOSSLESS + LOSSY:
                path = os.path.join(work, f"{kind}_{bits}{'s' if signed else 'u'}.dcm")
                if not write(kind, dataset(v, bits, signed), path, work):
                    continue
                syntax = pydicom.dcmread(path, stop_before_pixels=True).file_meta.TransferSyntaxUID
                what = f"{kind} ({syntax}) {bits}-bit {'signed' if signed else 'unsigned'} {COLS} x {ROWS}"
                got, r = decode(tool, path)
                if not check(f"{what}: decoded", got is not None, r.stderr.strip()[-200:]):
                    continue
                err = np.abs(got.astype(np.float64) - want) / SLOPE  # in stored units
                if kind in LOSSLESS:
                    check(f"{what}: = the original pixels", np.array_equal(got, want),
                          f"{int((got != want).sum())} differ")
                else:
                    rms, peak = np.sqrt(np.mean(err ** 2)) / (hi - lo), err.max() / (hi - lo)
                    check(f"{what}: within the codec's error", rms <= 0.01 and peak <= 0.06,
                          f"RMS {100 * rms:.3f} %, max {100 * peak:.3f} % of the range")


def high_bits_part(tool, work):
    """12 bits stored in 16: only the BitsStored bits ending at HighBit are the value (as DCMTK,
    GDCM and pydicom read them). Above them old scanners kept overlays, and a signed value need
    not be sign-extended; a value may also sit in the top bits (HighBit 15). Each decoded =
    stored * 2 - 1024, and where HighBit is 11 pydicom reads the same stored values. A HighBit
    below BitsStored - 1 is refused."""
    rng = np.random.default_rng(31)
    for signed in (False, True):
        v = known_pixels(12, signed, rng)
        want = (v.astype(np.float64) * SLOPE + INTERCEPT).astype(np.float32)
        noise = rng.integers(0, 16, v.shape)
        for what, high_bit, samples in (("other bits above", 11, (v & 0xFFF) | (noise << 12)),
                                        ("nothing above", 11, v & 0xFFF),
                                        ("in the top bits, other bits below (HighBit 15)", 15, ((v & 0xFFF) << 4) | noise)):
            ds = dataset(v, 12, signed)
            ds.HighBit = high_bit
            ds.PixelData = samples.astype("<u2").tobytes()
            path = os.path.join(work, f"high_bits_{'s' if signed else 'u'}_{high_bit}_{samples.max() > 0xFFF}.dcm")
            ds.save_as(path, enforce_file_format=True)
            got, r = decode(tool, path)
            same_as_pydicom = high_bit != 11 or np.array_equal(pydicom.dcmread(path).pixel_array, v)
            check(f"12 of 16 bits {'signed' if signed else 'unsigned'}, {what}: the stored values",
                  got is not None and np.array_equal(got, want) and same_as_pydicom,
                  r.stderr.strip()[-200:] if got is None else f"{int((got != want).sum())} differ, pydicom "
                  f"{'agrees' if same_as_pydicom else 'differs'}")
    # a padding value outside 12 bits (GE's 63536): matched on the whole sample, -1024 HU (air)
    v = known_pixels(12, False, rng)
    samples = v.astype(np.uint16).copy()
    samples[:4, :] = 63536
    want = (v.astype(np.float64) * SLOPE + INTERCEPT).astype(np.float32)
    want[:4, :] = -1024.0
    ds = dataset(v, 12, False)
    ds.PixelData = samples.astype("<u2").tobytes()
    ds.add_new(0x00280120, "US", 63536)  # PixelPaddingValue
    path = os.path.join(work, "high_bits_padding.dcm")
    ds.save_as(path, enforce_file_format=True)
    got, r = decode(tool, path)
    check("12 of 16 bits, PixelPaddingValue 63536 on 4 rows: -1024 HU there, the stored values elsewhere",
          got is not None and np.array_equal(got, want),
          r.stderr.strip()[-200:] if got is None else f"{int((got != want).sum())} differ")
    ds = dataset(known_pixels(12, False, rng), 12, False)
    ds.HighBit = 3
    path = os.path.join(work, "high_bit_3.dcm")
    ds.save_as(path, enforce_file_format=True)
    got, r = decode(tool, path)
    check("BitsStored 12 with HighBit 3: exit 2, one line naming them", r.returncode == 2 and
          len(r.stderr.strip().splitlines()) == 1 and "HighBit 3" in r.stderr, r.stderr.strip()[-200:])


def hostile_part(tool, work):
    rng = np.random.default_rng(30)
    v = known_pixels(16, False, rng)
    cs = {"j2k": None, "htj2k": htj2k_codestream(v, 16, False, work, True, "RPCL")}
    p = os.path.join(work, "hostile_source.dcm")
    write("j2k", dataset(v, 16, False), p, work)
    cs["j2k"] = pydicom.encaps.generate_frames(pydicom.dcmread(p).PixelData, number_of_frames=1).__next__()
    rgb = os.path.join(work, "rgb.ppm")
    with open(rgb, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (COLS, ROWS) + rng.integers(0, 256, ROWS * COLS * 3, dtype=np.uint8).tobytes())
    r = run(["ojph_compress", "-i", rgb, "-o", os.path.join(work, "rgb.j2c"), "-reversible", "true"])
    three = open(os.path.join(work, "rgb.j2c"), "rb").read()
    cases = []
    for name, syntax in (("j2k", "1.2.840.10008.1.2.4.90"), ("htj2k", "1.2.840.10008.1.2.4.202")):
        c = cs[name]
        cases += [(f"{name} truncated to half", syntax, c[: len(c) // 2], {}, "does not decode"),
                  (f"{name} Rows 34 for 33", syntax, c, {"Rows": 34}, "Rows x Columns say 34 x 37"),
                  (f"{name} Columns 36 for 37", syntax, c, {"Columns": 36}, "Rows x Columns say 33 x 36"),
                  (f"{name} 16-bit values, BitsAllocated 8", syntax, c,
                   {"BitsAllocated": 8, "BitsStored": 8, "HighBit": 7}, "16-bit values but BitsAllocated is 8")]
    cases += [("three components", "1.2.840.10008.1.2.4.201", three, {"BitsStored": 8}, "3 components"),
              ("not a codestream", "1.2.840.10008.1.2.4.90", rng.bytes(4000), {}, "not a JPEG 2000 codestream"),
              ("SIZ then noise", "1.2.840.10008.1.2.4.201", cs["htj2k"][:60] + rng.bytes(3000), {},
               "JPEG 2000"),
              ("empty fragment", "1.2.840.10008.1.2.4.90", b"", {}, "JPEG 2000 pixel data holds 0 bytes"),
              ("MPEG2 (unsupported)", "1.2.840.10008.1.2.4.100", cs["j2k"], {}, "cannot decode transfer syntax"),
              ("unknown syntax UID", "1.2.3.4.5", cs["j2k"], {}, "cannot decode transfer syntax")]
    for what, syntax, frag, attrs, words in cases:
        ds = dataset(v, 16, False)
        set_encapsulated(ds, frag, syntax)
        for k, val in attrs.items():
            setattr(ds, k, val)
        path = os.path.join(work, "hostile_" + "".join(c if c.isalnum() else "_" for c in what) + ".dcm")
        private = {} if syntax.startswith("1.2.840.10008.") else {"implicit_vr": False, "little_endian": True}
        ds.save_as(path, enforce_file_format=True, **private)
        got, r = decode(tool, path)
        lines = (r.stdout + r.stderr).strip().splitlines()
        reads = "JPEG 2000 (lossless and lossy) and HTJ2K" in r.stderr if "syntax" in words else True
        check(f"hostile {what}: exit 2, one line", r.returncode == 2 and len(lines) == 1 and words in r.stderr
              and reads, f"rc {r.returncode}: {(r.stdout + r.stderr).strip()[:200]}")


def mismatch_part(tool, work):
    """JPEG 2000 / HTJ2K codestreams whose precision or signedness is not BitsStored's or
    PixelRepresentation's, as real archives hold them (made by encoding with one precision and
    sign and writing the header with another): each decoded = pydicom's pixel_array (its
    default J2K corrections: the codestream's precision, its bits read with PixelRepresentation's
    sign) * 2 - 1024, every pixel. HighBit is not read for them (pydicom does not either)."""
    rng = np.random.default_rng(33)
    u16 = rng.integers(0, 1 << 16, (ROWS, COLS)).astype(np.uint16)
    u12 = rng.integers(0, 1 << 12, (ROWS, COLS)).astype(np.uint16)
    s12 = np.where(u12 >= 2048, u12.astype(np.int32) - 4096, u12).astype(np.int16)  # u12's bits, 12-bit signed
    small = known_pixels(12, False, rng).astype(np.uint16)
    small[0, :3] = (4096, 40000, 65535)  # above 12 bits in a 16-bit codestream: kept, as pydicom keeps them
    # (what, codestream values, precision, codec (0 raw, 1 JP2, "ht"), BitsStored, PixelRepresentation, HighBit)
    cases = [("BitsStored 12, a 16-bit unsigned codestream", small, 16, 0, 12, 0, 11),
             ("PixelRepresentation 1, a 16-bit unsigned codestream of two's complement values", u16, 16, 0, 16, 1, 15),
             ("PixelRepresentation 1, a 12-bit unsigned codestream", u12, 12, 0, 12, 1, 11),
             ("PixelRepresentation 0, a 16-bit signed codestream", u16.view(np.int16), 16, 0, 16, 0, 15),
             ("PixelRepresentation 0, a 12-bit signed codestream", s12, 12, 0, 12, 0, 11),
             ("BitsStored 12 signed, a 16-bit signed codestream", u16.view(np.int16), 16, 0, 12, 1, 11),
             ("BitsStored 16 signed, a 12-bit unsigned codestream", u12, 12, 0, 16, 1, 15),
             ("BitsStored 16, HighBit 11, a 16-bit codestream", u16, 16, 0, 16, 0, 11),
             ("JP2, PixelRepresentation 1, a 16-bit unsigned codestream", u16, 16, 1, 16, 1, 15),
             ("HTJ2K, PixelRepresentation 1, a 16-bit unsigned codestream", u16, 16, "ht", 16, 1, 15),
             ("HTJ2K, BitsStored 12, a 16-bit unsigned codestream", small, 16, "ht", 12, 0, 11)]
    for what, v, prec, codec, bits, signed, high_bit in cases:
        ds = dataset(known_pixels(16, False, rng), 16, False)
        if codec == "ht":
            cs, syntax = htj2k_codestream(v.astype(np.int64), prec, False, work, True, "RPCL"), HTJ2K_SYNTAX["htj2k_rpcl"]
        else:
            cs, syntax = openjpeg.utils.encode_array(v, bits_stored=prec, codec_format=codec), JPEG2000Lossless
        set_encapsulated(ds, cs, syntax)
        ds.BitsStored, ds.HighBit, ds.PixelRepresentation = bits, high_bit, signed
        path = os.path.join(work, "mismatch_" + "".join(c if c.isalnum() else "_" for c in what) + ".dcm")
        ds.save_as(path, enforce_file_format=True)
        ref = pydicom.dcmread(path).pixel_array
        want = (ref.astype(np.float64) * SLOPE + INTERCEPT).astype(np.float32)
        got, r = decode(tool, path)
        check(f"mismatch: {what}: = pydicom", got is not None and np.array_equal(got, want),
              r.stderr.strip()[-200:] if got is None else f"{int((got != want).sum())} differ")


def multiframe(frames_v, bits, signed, codestreams, per_frame, has_bot):
    """A multi-frame file (the per-frame functional groups of an Enhanced CT, rescale shared)
    of frames_v, each frame's codestream split into per_frame fragments, with or without an
    offset table."""
    ds = dataset(frames_v[0], bits, signed)
    ds.NumberOfFrames = len(frames_v)
    shared = pydicom.Dataset()
    rescale = pydicom.Dataset()
    rescale.RescaleSlope, rescale.RescaleIntercept = SLOPE, INTERCEPT
    shared.PixelValueTransformationSequence = [rescale]
    ds.SharedFunctionalGroupsSequence = [shared]
    per = []
    for f in range(len(frames_v)):
        pos, item = pydicom.Dataset(), pydicom.Dataset()
        pos.ImagePositionPatient = [0.0, 0.0, 2.5 * f]
        item.PlanePositionSequence = [pos]
        per.append(item)
    ds.PerFrameFunctionalGroupsSequence = per
    frag = []
    for c in codestreams:  # fragments are of even length: split at even bytes, the last one padded
        cut = [(len(c) * i // per_frame) & ~1 for i in range(per_frame)] + [len(c)]
        frag += [c[cut[i]:cut[i + 1]] for i in range(per_frame)]
    items = [f + b"\0" * (len(f) % 2) for f in frag]
    offsets, at = [], 0
    for i, f in enumerate(items):
        if i % per_frame == 0:
            offsets.append(at)
        at += 8 + len(f)
    bot = np.array(offsets, "<u4").tobytes() if has_bot else b""
    tag = b"\xfe\xff\x00\xe0"
    ds.PixelData = b"".join(tag + np.uint32(len(x)).astype("<u4").tobytes() + x for x in [bot, *items])
    ds["PixelData"].VR = "OB"
    ds["PixelData"].is_undefined_length = True
    return ds


def multiframe_part(tool, work):
    """Multi-frame JPEG 2000 and HTJ2K: three frames of different known values, one fragment
    a frame or each codestream split in two or three, with
    an offset table or without one (the frames then found by their SOC markers): each frame
    decoded = its stored * 2 - 1024, on 1 and on 3 threads. A table that points inside a
    fragment, fragments that make fewer frames than NumberOfFrames, and frames 2 and 3 cut
    short: refused, one line, on either thread count the same (naming frame 2 for the last)."""
    rng = np.random.default_rng(32)
    for bits, signed in ((12, True), (16, False)):
        v = [known_pixels(bits, signed, rng) for _ in range(3)]
        want = np.stack([(x.astype(np.float64) * SLOPE + INTERCEPT).astype(np.float32) for x in v])
        j2k = []
        for x in v:
            ds = dataset(x, bits, signed)
            ds.compress(JPEG2000Lossless, encoding_plugin="pylibjpeg")
            j2k.append(next(pydicom.encaps.generate_frames(ds.PixelData, number_of_frames=1)))
        htj2k = [htj2k_codestream(x.astype(np.int64), bits, signed, work, True, "RPCL") for x in v]
        for name, syntax, cs in (("j2k", JPEG2000Lossless, j2k), ("htj2k", HTJ2K_SYNTAX["htj2k_rpcl"], htj2k)):
            for per_frame, has_bot in ((1, False), (1, True), (2, True), (3, False)):
                ds = multiframe(v, bits, signed, cs, per_frame, has_bot)
                ds.file_meta.TransferSyntaxUID = syntax
                what = (f"multi-frame {name} {bits}-bit {'signed' if signed else 'unsigned'}, {per_frame} "
                        f"fragment(s) a frame, {'an' if has_bot else 'no'} offset table")
                path = os.path.join(work, f"mf_{name}_{bits}_{per_frame}_{has_bot}.dcm")
                ds.save_as(path, enforce_file_format=True)
                for threads in (1, 3):
                    got, r = decode(tool, path, 3, threads)
                    check(f"{what}, {threads} thread(s): every frame", got is not None and np.array_equal(got, want),
                          r.stderr.strip()[-200:] if got is None else f"{int((got != want).sum())} differ")
    for what, per_frame, has_bot, frames, patch, words in (
            ("offset table pointing inside a fragment", 2, True, 3, True, "not where a fragment starts"),
            ("two codestreams for NumberOfFrames 3, no table", 2, False, 2, False, "do not make 3 frames"),
            ("frames 2 and 3 truncated", 1, True, 3, False, "frame 2: the JPEG 2000 codestream")):
        cs = j2k[:frames] if frames < 3 else [j2k[0], j2k[1][: len(j2k[1]) // 2], j2k[2][: len(j2k[2]) // 2]]
        ds = multiframe(v, 16, False, cs, per_frame, has_bot)
        ds.file_meta.TransferSyntaxUID = JPEG2000Lossless
        if patch:  # frame 2's offset (the table's second value, after its item tag and length) + 2
            raw = bytearray(ds.PixelData)
            raw[12:16] = (int.from_bytes(raw[12:16], "little") + 2).to_bytes(4, "little")
            ds.PixelData = bytes(raw)
        path = os.path.join(work, "mf_hostile_" + what.replace(" ", "_") + ".dcm")
        ds.save_as(path, enforce_file_format=True)
        for threads in (1, 3):
            got, r = decode(tool, path, 3, threads)
            lines = (r.stdout + r.stderr).strip().splitlines()
            check(f"multi-frame, {what}, {threads} thread(s): exit 2, one line",
                  r.returncode == 2 and len(lines) == 1 and words in r.stderr,
                  f"rc {r.returncode}: {(r.stdout + r.stderr).strip()[-200:]}")


def series_part(swinrun, series_hu, model, work):
    rng = np.random.default_rng(31)
    vol = ms.phantom((64, 48, 24), (0.7 * 4, 0.9 * 4, 2.5), seed=3)
    axial = ms.Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5)
    plain = os.path.join(work, "series_explicit")
    ms.write_series(plain, axial, vol, rng=rng)
    env = dict(os.environ, SWINRUN_MODEL=model)
    labels = {}
    for kind in ("explicit", "j2k", "htj2k", "htj2k_rpcl", "deflate"):
        folder = os.path.join(work, f"series_{kind}")
        if kind != "explicit":
            os.makedirs(folder, exist_ok=True)
            for n in os.listdir(plain):
                write(kind, pydicom.dcmread(os.path.join(plain, n)), os.path.join(folder, n), work)
        out = os.path.join(work, f"labels_{kind}.nii.gz")
        r = run([swinrun, folder + "/", out], env=env)
        if not check(f"swinrun on the {kind} series", r.returncode == 0, r.stderr.strip()[-200:]):
            continue
        img = nib.load(out)
        labels[kind] = (np.asarray(img.dataobj), img.affine)
    if "explicit" not in labels:
        return
    ref, aff = labels["explicit"]
    for kind, (lab, a) in labels.items():
        if kind == "explicit":
            continue
        same_grid = lab.shape == ref.shape and np.array_equal(a, aff)
        check(f"series {kind}: the label map of the uncompressed twin", same_grid and np.array_equal(lab, ref),
              f"labels {np.unique(lab).tolist()}")
    threads_part(swinrun, series_hu, env, os.path.join(work, "series_j2k"), plain, work)


def threads_part(swinrun, series_hu, env, folder, plain, work):
    """The files of a series decoded on 1, 2 and 3 threads (series_hu: the series reader's
    volume): the uncompressed twin's volume every time; with two of them truncated, the same
    one-line refusal from swinrun on every thread count, naming the first of the two in file
    order."""
    def volume(path, t):
        out = os.path.join(work, f"hu_{os.path.basename(path)}_{t}.f32")
        r = run([series_hu, path, t, out])
        return (np.fromfile(out, np.float32) if r.returncode == 0 else None), r.stderr.strip()[-200:]
    want, why = volume(plain, 1)
    for t in (1, 2, 3):
        got, why = volume(folder, t)
        check(f"series j2k decoded on {t} thread(s): the uncompressed twin's volume",
              got is not None and want is not None and np.array_equal(got, want), why)
    bad = os.path.join(work, "series_j2k_two_truncated")
    shutil.copytree(folder, bad)
    names = sorted(os.listdir(bad))
    for n in (names[5], names[17]):
        p = os.path.join(bad, n)
        data = open(p, "rb").read()
        open(p, "wb").write(data[: len(data) - 600])
    msgs = []
    for t in (1, 2, 3, 2):
        r = run([swinrun, bad + "/", os.path.join(work, "never.nii.gz"), "--threads", t], env=env)
        msgs.append((r.returncode, r.stderr.strip()))
    first = os.path.join(bad, names[5])
    check("two truncated files on 1, 2, 3 threads: exit 2, one line naming the first, every time",
          all(rc == 2 and m == msgs[0][1] and len(m.splitlines()) == 1 and first in m for rc, m in msgs) and
          not os.path.exists(os.path.join(work, "never.nii.gz")), "; ".join(m[:160] for _, m in msgs[:2]))


def rounded_oblique_part(series_hu, work):
    """Part 4: an evenly spaced oblique series whose positions are written with two decimals."""
    folder = os.path.join(work, "series_oblique_2dp")
    nx, ny, nz = 20, 16, 40
    vol = ms.phantom((nx, ny, nz), (0.7 * 64 / nx * 4, 0.9 * 48 / ny * 4, 0.6), seed=5)
    n = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    r = np.cross([0.0, 0.0, 1.0], n)
    r /= np.linalg.norm(r)
    geo = ms.Geometry(r, np.cross(n, r), 0.9, 0.7, 0.6, origin=(12.344, -40.247, 80.133))
    two = {k: {"ImagePositionPatient": [f"{v:.2f}" for v in geo.position(k)],
               "ImageOrientationPatient": [f"{v:.6f}" for v in (*geo.r, *geo.c)]} for k in range(nz)}
    ms.write_series(folder, geo, vol, rng=np.random.default_rng(4), extra=two)
    out = os.path.join(work, "hu_oblique_2dp.f32")
    res = run([series_hu, folder, 1, out])
    if not check("oblique series at two decimals: read", res.returncode == 0, res.stderr.strip()[-200:]):
        return
    dims = [int(v) for v in res.stdout.split()]
    got = np.fromfile(out, np.float32).reshape(dims[::-1])
    dss = [pydicom.dcmread(os.path.join(folder, f)) for f in os.listdir(folder)]
    iop = np.array(dss[0].ImageOrientationPatient, float)
    normal = np.cross(iop[:3], iop[3:])
    dss.sort(key=lambda d: float(np.dot(np.array(d.ImagePositionPatient, float), normal)))
    want = np.stack([d.pixel_array * float(d.RescaleSlope) + float(d.RescaleIntercept) for d in dss])
    d = np.array([np.dot(np.array(x.ImagePositionPatient, float), normal) for x in dss])
    check("oblique series at two decimals: one plane per slice, each the slice pydicom decodes",
          got.shape == want.shape and np.array_equal(got, want.astype(np.float32)),
          f"dims {dims}, gaps {np.diff(d).min():.4f}..{np.diff(d).max():.4f} mm"
          + (f", {int(np.sum(got != want))} voxels differ" if got.shape == want.shape else ""))


def main():
    tool, swinrun, model, work, series_hu = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    pixels_part(tool, work)
    high_bits_part(tool, work)
    hostile_part(tool, work)
    mismatch_part(tool, work)
    multiframe_part(tool, work)
    series_part(swinrun, series_hu, model, work)
    rounded_oblique_part(series_hu, work)
    print("all ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
