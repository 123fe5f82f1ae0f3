#!/usr/bin/env python3
"""Seed corpora for the fuzz harnesses (tests/fuzz/harness), made from scratch each run.

    fuzz_seeds.py TEST_DATA OUT

TEST_DATA  the exported test models (tools/export/make_test_data.sh): the smallest TorchScript
           and dynamo exports at the smallest cube, f12_c32_ts and f12_c32_default, and the
           dynamo export whose biases and masks it folded, f12_w454_flash_dynamo21, are used
OUT        gets onnx/ (each model's graph, made small: onnx-simplifier's constant folding,
           large constants made initializers, no value_info; every initializer moved to the
           external-data file OUT/onnx_data/CASE.data, which the ONNX harnesses link next
           to their input: the fuzzed bytes are the graph alone; also two group-norm models exported
           here: TorchScript's Reshape/InstanceNormalization/Reshape/Mul/Add and opset 21's
           GroupNormalization; a batch-norm model exported without constant folding, its
           BatchNormalization nodes kept; and the opset-16 export saved by ONNX Runtime at its basic and
           extended levels), nifti/ and nifti_gz/ (small NIfTI-1 and NIfTI-2
       volumes in both byte orders, several datatypes, scaling, qform/sform, an
       extension; gzipped also as many members and with bytes past the data), mha/ (small
       MetaImage files: zlib, gzip and raw voxels, both byte orders, several element types, a
       4-D and a vector image, MetaIO's key synonyms, a voxel file named as the header itself), nrrd/
       (small NRRD files: raw and gzip voxels, both byte orders, teem's type spellings, RAS and
       LPS spaces, channels on a first and a last axis, spacings without a space, line and byte
       skips, a data file named as the header itself), npy/ (small float32 arrays in .npy formats 1.0 and 2.0, and ones
       the reader refuses), dicom/ (16 x 12 CT slices: uncompressed, RLE, JPEG lossless,
       JPEG-LS, HTJ2K, a gantry tilt; a 32 x 32 one in JPEG 2000; 3-frame Enhanced CT,
       uncompressed, RLE and JPEG 2000, and Legacy Converted Enhanced CT), ckpt/ (small PyTorch checkpoints
       and a safetensors file with a SwinUNETR's keys, a torch.export archive), pickle/ (data.pkl of each TEST_DATA/ckpt case),
       bundle/ and bundle_yaml/ (bundle inference configs in JSON and in YAML) and
       large_files/ (large_files.yml files in the forms swinrun fetch reads, and a metadata.json),
       node_config/ (swinrun serve's configuration: the smallest accepted, and one with every key).
"""
import contextlib
import gzip
import io
import json
import os
import shutil
import sys
import tempfile

import nibabel as nib
import numpy as np
import onnx
import onnxsim
from onnx.external_data_helper import convert_model_to_external_data

ONNX_CASES = ("f12_c32_ts", "f12_c32_default", "f12_w454_flash_dynamo21")
LARGE_CONSTANT = 1024   # bytes: Constant nodes above this become initializers


@contextlib.contextmanager
def quiet():
    """stdout and stderr to /dev/null, also for the C++ code of onnx-simplifier."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def small_graph(model, keep_bn=False):
    """The same model with a graph of about 100 KB: folded (batch norms kept as nodes with keep_bn),
    its large constants made initializers."""
    with quiet():
        model, ok = onnxsim.simplify(model, skip_fuse_bn=keep_bn)
    if not ok:
        sys.exit("fuzz_seeds.py: onnx-simplifier could not check its result")
    g = model.graph
    nodes = []
    for n in g.node:
        a = n.attribute
        if n.op_type == "Constant" and len(a) == 1 and a[0].name == "value" and a[0].t.ByteSize() > LARGE_CONSTANT:
            t = onnx.TensorProto()
            t.CopyFrom(a[0].t)
            t.name = n.output[0]
            g.initializer.append(t)
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    return model


def norm_exports(tmp):
    """case -> path of f=12 32^3 SwinUNETRs with norm_name=("group", {"num_groups": 3}), and with
    norm_name="batch" exported without constant folding (BatchNormalization nodes)."""
    import torch
    from monai.networks.nets import SwinUNETR
    torch.manual_seed(0)
    group = SwinUNETR(in_channels=1, out_channels=3, feature_size=12, norm_name=("group", {"num_groups": 3})).eval()
    batch = SwinUNETR(in_channels=1, out_channels=3, feature_size=12, norm_name="batch").eval()
    paths = {}
    for case, net, dynamo, opset, fold in (("group_norm_ts", group, False, 17, True),
                                           ("group_norm_opset21", group, True, 21, True),
                                           ("batch_norm_nofold", batch, False, 17, False)):
        paths[case] = os.path.join(tmp, case + ".onnx")
        kw = {} if dynamo else {"do_constant_folding": fold}
        with quiet(), torch.no_grad():
            torch.onnx.export(net, (torch.zeros(1, 1, 32, 32, 32),), paths[case], dynamo=dynamo, opset_version=opset,
                              input_names=["input"], output_names=["logits"], **kw)
    return paths


def ort_optimised(test_data, tmp):
    """case -> path of the opset-16 export (decomposed LayerNorms) saved by ONNX Runtime at its basic
    and extended levels, as it rewrites them (already folded: not simplified again)."""
    import onnxruntime as ort
    paths = {}
    for name, level in (("basic", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
                        ("extended", ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)):
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.graph_optimization_level = level
        so.optimized_model_filepath = paths[f"f12_c32_ts16_ort_{name}"] = os.path.join(tmp, f"ts16_{name}.onnx")
        ort.InferenceSession(os.path.join(test_data, "f12_c32_ts16", "model.onnx"), so, providers=["CPUExecutionProvider"])
    return paths


def onnx_seeds(test_data, out):
    d, data = os.path.join(out, "onnx"), os.path.join(out, "onnx_data")
    os.makedirs(d)
    os.makedirs(data)
    exports = tempfile.mkdtemp()
    sources = {case: os.path.join(test_data, case, "model.onnx") for case in ONNX_CASES}
    sources.update(norm_exports(exports))
    optimised = ort_optimised(test_data, exports)
    sources.update(optimised)
    for case, path in sources.items():
        model = onnx.load(path)
        if case in optimised:
            del model.graph.value_info[:]
        else:
            model = small_graph(model, keep_bn=case == "batch_norm_nofold")
        # initializers only: the loader refuses Constant nodes with external data
        convert_model_to_external_data(model, all_tensors_to_one_file=True, location=case + ".data",
                                       size_threshold=0, convert_attribute=False)
        with tempfile.TemporaryDirectory() as tmp:
            onnx.save_model(model, os.path.join(tmp, "graph.onnx"))
            shutil.move(os.path.join(tmp, "graph.onnx"), os.path.join(d, case + ".onnx"))
            shutil.move(os.path.join(tmp, case + ".data"), os.path.join(data, case + ".data"))
    shutil.rmtree(exports)


def nifti_bytes(img, big_endian):
    if big_endian:
        img = img.__class__(img.dataobj, None, header=img.header.as_byteswapped(">"))
    bio = io.BytesIO()
    img.to_file_map({"image": nib.FileHolder(fileobj=bio), "header": nib.FileHolder(fileobj=bio)})
    return bio.getvalue()


def nifti_images():
    rng = np.random.default_rng(17)
    aff = np.diag([1.5, 0.8, 2.0, 1.0])
    aff[:3, 3] = [-10, 5, 20]
    yield "i16_sform", nib.Nifti1Image(rng.integers(-1000, 1000, (4, 3, 5)).astype(np.int16), aff)
    yield "f32", nib.Nifti1Image(rng.standard_normal((3, 3, 3)).astype(np.float32), np.eye(4))
    u8 = nib.Nifti1Image(rng.integers(0, 255, (2, 4, 3)).astype(np.uint8), aff)
    u8.header.set_slope_inter(2.0, -5.0)
    u8.set_qform(aff, code=1)
    u8.set_sform(None, code=0)
    yield "u8_scaled_qform", u8
    yield "f64_4d", nib.Nifti1Image(rng.standard_normal((3, 2, 2, 1)), aff)
    ext = nib.Nifti1Image(rng.integers(0, 9, (2, 2, 3)).astype(np.int32), aff)
    ext.header.extensions.append(nib.nifti1.Nifti1Extension("comment", b"fuzz seed"))
    yield "i32_extension", ext
    yield "n2_u16", nib.Nifti2Image(rng.integers(0, 4000, (3, 4, 2)).astype(np.uint16), aff)
    yield "n2_f32", nib.Nifti2Image(rng.standard_normal((2, 3, 2)).astype(np.float32), np.eye(4))


def nifti_seeds(out):
    plain, gz = os.path.join(out, "nifti"), os.path.join(out, "nifti_gz")
    os.makedirs(plain)
    os.makedirs(gz)
    for name, img in nifti_images():
        for order, big in (("le", False), ("be", True)):
            b = nifti_bytes(img, big)
            with open(os.path.join(plain, f"{name}_{order}.nii"), "wb") as f:
                f.write(b)
            with open(os.path.join(gz, f"{name}_{order}.nii.gz"), "wb") as f:
                f.write(gzip.compress(b, mtime=0))
        # the reader's other paths (formats/gzip_read.c): members of 100 bytes (as swinrun
        # writes its outputs, smaller), and one member holding bytes past the voxel data
        b = nifti_bytes(img, False)
        with open(os.path.join(gz, f"{name}_members.nii.gz"), "wb") as f:
            f.write(b"".join(gzip.compress(b[i:i + 100], mtime=0) for i in range(0, len(b), 100)))
        with open(os.path.join(gz, f"{name}_past_data.nii.gz"), "wb") as f:
            f.write(gzip.compress(b + bytes(range(64)), mtime=0))


def mha_seeds(out):
    import zlib
    d = os.path.join(out, "mha")
    os.makedirs(d)
    rng = np.random.default_rng(7)
    mat = "0.98 0.2 0 -0.2 0.98 0 0 0 1"

    def write(name, dims, etype, data, extra=(), keys=("TransformMatrix", "Offset")):
        head = [f"ObjectType = Image", f"NDims = {len(dims)}", "DimSize = " + " ".join(map(str, dims)),
                f"ElementType = {etype}", "BinaryData = True", *extra,
                f"{keys[0]} = " + (mat if len(dims) == 3 else "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1"),
                f"{keys[1]} = " + " ".join(["1.5"] * len(dims)),
                "ElementSpacing = " + " ".join(["0.7"] * len(dims))]
        if not any(e.startswith("ElementDataFile") for e in extra):
            head.append("ElementDataFile = LOCAL")
        with open(os.path.join(d, name + ".mha"), "wb") as f:
            f.write("\n".join(head).encode() + b"\n" + data)

    v = rng.integers(-1024, 2000, (2, 3, 4)).astype("<i2")
    write("short_raw", (4, 3, 2), "MET_SHORT", v.tobytes(), ["BinaryDataByteOrderMSB = False"])
    write("short_msb", (4, 3, 2), "MET_SHORT", v.astype(">i2").tobytes(), ["BinaryDataByteOrderMSB = True"],
          keys=("Orientation", "Position"))
    z = zlib.compress(v.tobytes())
    write("short_zlib", (4, 3, 2), "MET_SHORT", z, ["CompressedData = True", f"CompressedDataSize = {len(z)}"])
    write("short_gzip", (4, 3, 2), "MET_SHORT", gzip.compress(v.tobytes(), mtime=0), ["CompressedData = True"])
    for etype, dt in (("MET_UCHAR", "u1"), ("MET_CHAR", "i1"), ("MET_USHORT", "<u2"), ("MET_UINT", "<u4"),
                      ("MET_LONG", "<i4"), ("MET_LONG_LONG", "<i8"), ("MET_FLOAT", "<f4"), ("MET_DOUBLE", "<f8")):
        write(etype.lower(), (4, 3, 2), etype, v.astype(dt).tobytes())
    write("four_d", (4, 3, 2, 2), "MET_FLOAT", rng.standard_normal(48).astype("<f4").tobytes())
    write("vector", (4, 3, 2), "MET_FLOAT", rng.standard_normal(72).astype("<f4").tobytes(),
          ["ElementNumberOfChannels = 3"])
    write("self_named", (4, 3, 2), "MET_SHORT", v.tobytes(), ["HeaderSize = -1", "ElementDataFile = image.mha"])


def nrrd_seeds(out):
    d = os.path.join(out, "nrrd")
    os.makedirs(d)
    rng = np.random.default_rng(8)
    v = rng.integers(-1024, 2000, (2, 3, 4)).astype("<i2")
    dirs = "(0.7,0,0) (0,0.7,0) (0,0,2.5)"

    def write(name, lines, data):
        with open(os.path.join(d, name + ".nrrd"), "wb") as f:
            f.write("\n".join(["NRRD0004", *lines]).encode() + b"\n\n" + data)

    base = ["dimension: 3", "space: left-posterior-superior", "sizes: 4 3 2", f"space directions: {dirs}",
            "kinds: domain domain domain", "space origin: (1,2,3)"]
    write("short_raw", ["type: short", *base, "endian: little", "encoding: raw"], v.tobytes())
    write("short_big_ras", ["type: signed short int", *base[:1], "space: RAS", *base[2:], "endian: big",
                            "encoding: raw"], v.astype(">i2").tobytes())
    write("short_gzip", ["type: int16", *base, "endian: little", "encoding: gzip"], gzip.compress(v.tobytes(), mtime=0))
    for t, dt in (("uchar", "u1"), ("int8", "i1"), ("ushort", "<u2"), ("uint", "<u4"), ("int", "<i4"),
                  ("longlong", "<i8"), ("ulonglong", "<u8"), ("float", "<f4"), ("double", "<f8")):
        write("type_" + t, [f"type: {t}", *base, "endian: little", "encoding: raw"], v.astype(dt).tobytes())
    four = rng.standard_normal(48).astype("<f4").tobytes()
    write("channels_first", ["type: float", "dimension: 4", "space: LPS", "sizes: 2 4 3 2",
                             f"space directions: none {dirs}", "kinds: vector domain domain domain",
                             "endian: little", "encoding: raw"], four)
    write("channels_last", ["type: float", "dimension: 4", "space: LPS", "sizes: 4 3 2 2",
                            f"space directions: {dirs} none", "kinds: domain domain domain list",
                            "endian: little", "encoding: raw"], four)
    write("spacings", ["type: short", "dimension: 3", "sizes: 4 3 2", "spacings: 0.7 0.7 2.5", "endian: little",
                       "encoding: raw", "# a comment", "key:=value"], v.tobytes())
    write("skips_self", ["type: short", *base, "endian: little", "encoding: raw", "data file: image.nrrd",
                         "line skip: 1", "byte skip: -1"], v.tobytes())


def npy_seeds(out):
    d = os.path.join(out, "npy")
    os.makedirs(d)
    rng = np.random.default_rng(17)
    arrays = {
        "f4_5d": rng.standard_normal((1, 1, 3, 2, 2)).astype("<f4"),
        "f4_1d": np.arange(5, dtype="<f4"),
        "f4_scalar": np.array(1.5, dtype="<f4"),
        "f4_empty": np.zeros((0, 3), dtype="<f4"),
        "f8_refused": np.arange(3, dtype="<f8"),
        "f4_fortran_refused": np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)),
    }
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), a)
    with open(os.path.join(d, "f4_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, rng.standard_normal((2, 2, 2)).astype("<f4"), version=(2, 0))


def dicom_seeds(out):
    """CT slices of 16 x 12 pixels: uncompressed, RLE, JPEG lossless and JPEG-LS (the last two
    with DCMTK's dcmcjpeg / dcmcjpls when installed), HTJ2K (openjph's ojph_compress, when
    installed), one with a gantry tilt; JPEG 2000 (pydicom + pylibjpeg-openjpeg) at 32 x 32,
    the smallest that encoder takes; and 3-frame Enhanced CT (uncompressed, RLE; JPEG 2000 at
    32 x 32, two fragments a frame) and Legacy Converted Enhanced CT files."""
    import subprocess
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "formats", "dicom"))
    import decoders_test as dt
    import make_series as ms
    from pydicom.uid import RLELossless
    d = os.path.join(out, "dicom")
    os.makedirs(d)
    geo = ms.Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5)
    px = np.random.default_rng(18).integers(-1000, 1000, size=(12, 16)).astype(np.float64)
    ms.make_slice(geo, 0, px, ms.new_uids(), 1).save_as(os.path.join(d, "plain.dcm"), enforce_file_format=True)
    ds = ms.make_slice(geo, 0, px, ms.new_uids(), 1)
    ds.compress(RLELossless, encoding_plugin="pydicom")
    ds.save_as(os.path.join(d, "rle.dcm"), enforce_file_format=True)
    ms.make_slice(geo, 0, px, ms.new_uids(), 1, extra={"GantryDetectorTilt": "7"}).save_as(
        os.path.join(d, "tilt.dcm"), enforce_file_format=True)
    for tool, args, name in (("dcmcjpeg", ["+e1"], "jpegll.dcm"), ("dcmcjpls", ["+el"], "jpegls.dcm")):
        if shutil.which(tool):
            subprocess.run([tool, *args, os.path.join(d, "plain.dcm"), os.path.join(d, name)], check=True)
    # multi-frame: 3 frames of 16 x 12 as Enhanced CT (uncompressed and RLE) and Legacy Converted Enhanced CT
    import enhanced_ct_test as ect
    import pydicom
    dss = [ms.make_slice(geo, k, px + 10 * k, ms.new_uids(), k + 1) for k in range(3)]
    for x in dss[1:]:
        x.StudyInstanceUID, x.SeriesInstanceUID, x.FrameOfReferenceUID = (
            dss[0].StudyInstanceUID, dss[0].SeriesInstanceUID, dss[0].FrameOfReferenceUID)
    ect.write_enhanced(dss, os.path.join(d, "enhanced.dcm"))
    ds = pydicom.dcmread(os.path.join(d, "enhanced.dcm"))
    ds.compress(RLELossless, encoding_plugin="pydicom")
    ds.save_as(os.path.join(d, "enhanced_rle.dcm"), enforce_file_format=True)
    ect.write_legacy(dss, os.path.join(d, "legacy.dcm"))
    with tempfile.TemporaryDirectory() as work:
        if shutil.which("ojph_compress"):
            dt.write("htj2k_rpcl", ms.make_slice(geo, 0, px, ms.new_uids(), 1), os.path.join(d, "htj2k.dcm"), work)
        px32 = np.random.default_rng(19).integers(-1000, 1000, size=(32, 32)).astype(np.float64)
        dt.write("j2k", ms.make_slice(geo, 0, px32, ms.new_uids(), 1), os.path.join(d, "j2k.dcm"), work)
        # 3-frame Enhanced CT in JPEG 2000, each frame in two fragments, no offset table
        from pydicom.encaps import encapsulate, generate_frames
        from pydicom.uid import JPEG2000Lossless
        dss32 = [ms.make_slice(geo, k, px32 + 10 * k, ms.new_uids(), k + 1) for k in range(3)]
        for x in dss32[1:]:
            x.StudyInstanceUID, x.SeriesInstanceUID, x.FrameOfReferenceUID = (
                dss32[0].StudyInstanceUID, dss32[0].SeriesInstanceUID, dss32[0].FrameOfReferenceUID)
        path = os.path.join(d, "enhanced_j2k.dcm")
        ect.write_enhanced(dss32, path)
        ds = pydicom.dcmread(path)
        ds.compress(JPEG2000Lossless, encoding_plugin="pylibjpeg")
        ds.PixelData = encapsulate(list(generate_frames(ds.PixelData, number_of_frames=3)), 2, has_bot=False)
        ds.save_as(path, enforce_file_format=True)


def bundle_seeds(out):
    """bundle/: configs/inference.json of each tools/export/make_bundle.py configuration, and variants
    with references, expressions and transforms swinrun does not follow, and with metadata.json's
    keys (monai_version, channel_def) too."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
    import make_bundle
    d = os.path.join(out, "bundle")
    os.makedirs(d)
    for name, c in make_bundle.CONFIGS.items():
        m = dict(make_bundle.BASE, **c["model"])
        cfg = make_bundle.inference_json(name, c, m)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(cfg, f)
        cfg["preprocessing"]["transforms"].insert(2, {"_target_": "CropForegroundd", "keys": "image"})
        cfg["inferer"]["overlap"] = "$0.5"
        cfg["inferer"]["sigma_scale"] = "@preprocessing::transforms::3::pixdim"
        cfg["network_def"]["norm_name"] = ["instance", {"affine": True}]
        with open(os.path.join(d, name + "_variants.json"), "w") as f:
            json.dump(cfg, f)
        cfg["network_def"]["norm_name"] = ["group", {"num_groups": 3}]
        with open(os.path.join(d, name + "_group.json"), "w") as f:
            json.dump(cfg, f)
        # metadata.json's keys beside the recipe's (the harness reads the input as both files)
        cfg.update(monai_version=c["monai"], network_data_format={"outputs": {"pred": {"channel_def": {
            "0": "background", "1": "spleen", "2": "IVC", "3": "left kidney", "4": "tumour"}}}})
        with open(os.path.join(d, name + "_metadata.json"), "w") as f:
            json.dump(cfg, f)


def bundle_yaml_seeds(out):
    """bundle_yaml/: the bundle/ seeds written by yaml.safe_dump in block and flow style, the v2
    bundle's configuration as people write YAML (tests/bundles/v2_inference.yaml: anchors, a
    merge key, folded text), and a few documents of the constructs the reader handles."""
    import yaml
    src, d = os.path.join(out, "bundle"), os.path.join(out, "bundle_yaml")
    os.makedirs(d)
    for name in sorted(os.listdir(src)):
        cfg = json.load(open(os.path.join(src, name)))
        for style in (False, None):
            with open(os.path.join(d, f"{name[:-5]}_{'block' if style is False else 'mixed'}.yaml"), "w") as f:
                yaml.safe_dump(cfg, f, sort_keys=False, default_flow_style=style, width=60)
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy(os.path.join(here, "..", "..", "tests", "bundles", "v2_inference.yaml"), d)
    docs = {"scalars.yaml": "%YAML 1.1\n---\na: [yes, off, ~, 010, 0x1F, 1:30, 1.5e-3, .inf, 1e3, '@x', \"\\u00e9\\\n  y\"]\n"
                            "b: |+\n  lit\n\nc: >-\n  folded\n  text\n...\n",
            "anchors.yaml": "base: &b {roi: [64, 64, 32], mode: gaussian}\nover:\n  <<: [*b, {overlap: 0.5}]\n  mode: constant\n"
                            "? explicit key\n: - &e !!str 1\n  - *e\n",
            "flow.yaml": "{network_def: {_target_: SwinUNETR, feature_size: 12}, roi: [64, 64, 32],\n  inferer: {roi_size: '@roi',"
                         " overlap: 0.25}, k: [a: 1, ? b : 2]}\n"}
    for name, text in docs.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def ckpt_seeds(test_data, out):
    """Small weights files (ckpt/: under 64 KiB) and the pickles of the checkpoint matrix (pickle/):
    a SwinUNETR state dict's keys with tiny tensors (real shapes only where the walk starts), saved
    plain, wrapped with a module. prefix and extras, in float16, bfloat16, with strided and shared
    storages, as safetensors; data.pkl of each test-data/ckpt case."""
    import zipfile
    import torch
    from safetensors.torch import save_file
    ck, pk = os.path.join(out, "ckpt"), os.path.join(out, "pickle")
    os.makedirs(ck)
    os.makedirs(pk)
    sd = torch.load(os.path.join(test_data, "ckpt", "plain", "model.pt"), weights_only=True)
    keep = ("swinViT.patch_embed.proj.weight", "swinViT.patch_embed.proj.bias", "out.conv.conv.weight", "out.conv.conv.bias",
            "swinViT.layers1.0.blocks.0.attn.relative_position_bias_table")
    tiny = {k: (v if k in keep else v.flatten()[:2].clone()) for k, v in sd.items()}
    torch.save(tiny, os.path.join(ck, "plain.pt"))
    torch.save({"epoch": 1, "best_acc": np.float64(0.5), "state_dict": {"module." + k: v for k, v in tiny.items()}},
               os.path.join(ck, "wrapped.pt"))
    torch.save({k: v.half() for k, v in tiny.items() if v.is_floating_point()}, os.path.join(ck, "fp16.pt"))
    torch.save({k: v.bfloat16() for k, v in tiny.items() if v.is_floating_point()}, os.path.join(ck, "bf16.pt"))
    pool = torch.arange(64, dtype=torch.float32)
    torch.save({"a": pool[3:11].view(2, 4).t(), "b": pool[1:5], "c": pool}, os.path.join(ck, "strided.pt"))
    save_file({k: v.contiguous() for k, v in tiny.items()}, os.path.join(ck, "tiny.safetensors"))
    # the same as a TorchScript module, its code/ records (600 source files) replaced by one, deflated,
    # of what weights/checkpoint/ts_code.c reads: group norms, layer norms with and without weights
    # and a PatchMergingV2 whose 8 slice chains its cat takes as a named list
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
    from script_module import module_of_state_dict, module_tree
    torch.save(module_tree(tiny), os.path.join(ck, "module.pt"))   # the module pickled whole
    script = os.path.join(out, "script_full.pt")
    torch.jit.save(module_of_state_dict(tiny), script)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
    import make_bundle
    c = make_bundle.CONFIGS["btcv"]
    inference = json.dumps(make_bundle.inference_json("btcv", c, dict(make_bundle.BASE, **c["model"])))
    # script_bundle.pt: as MONAI's ckpt_export writes it, the bundle's configs beside the module
    for seed, extras in (("script.pt", False), ("script_bundle.pt", True)):
        with zipfile.ZipFile(script) as z, zipfile.ZipFile(os.path.join(ck, seed), "w", zipfile.ZIP_STORED) as o:
            for n in z.namelist():
                if "/code/" not in n:
                    o.writestr(n, z.read(n))
                if not n.endswith("/data.pkl"):
                    continue
                archive = n[:-len("data.pkl")]
                if not extras:
                    open(os.path.join(pk, "script.pkl"), "wb").write(z.read(n))
                o.writestr(archive + "code/__torch__/swin_unetr.py", torchscript_code(), zipfile.ZIP_DEFLATED)
                if extras:
                    o.writestr(archive + "extra/inference.json", inference)
                    o.writestr(archive + "extra/metadata.json", json.dumps({"monai_version": c["monai"]}),
                               zipfile.ZIP_DEFLATED)
    os.remove(script)
    pt2_seed({k: v for i, (k, v) in enumerate(tiny.items()) if i < 12 or k in keep}, os.path.join(ck, "tiny.pt2"))
    for case in sorted(os.listdir(os.path.join(test_data, "ckpt"))):
        f = os.path.join(test_data, "ckpt", case, "model.pt")
        if os.path.isfile(f):
            with zipfile.ZipFile(f) as z:
                name = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
                with open(os.path.join(pk, case + ".pkl"), "wb") as o:
                    o.write(z.read(name))


def torchscript_code():
    """A TorchScript code record in the form torch.jit.trace prints a SwinUNETR's classes."""
    chains, names = [], []
    for m, (d, h, w) in enumerate([(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)]):
        src = "x"
        for axis, start in ((0, None), (1, d), (2, h), (3, w), (4, None)):
            name = f"_{5 * m + axis}"
            step = "" if start is None else ", 2"
            chains.append(f"    {name} = torch.slice({src}, {axis}, {start or 0}, 9223372036854775807{step})")
            src = name
        names.append(src)
    return "\n".join([
        "class GroupNorm(Module):",
        "  def forward(self: __torch__.GroupNorm, argument_1: Tensor) -> Tensor:",
        "    out = torch.group_norm(argument_1, 3, weight, bias)",
        "    return out",
        "class SwinTransformer(Module):",
        "  def forward(self: __torch__.SwinTransformer, input: Tensor) -> Tensor:",
        "    x0 = torch.layer_norm(input, [12], weight, bias)",
        "    x1 = torch.layer_norm(x0, [12])",
        "    return x1",
        "class PatchMergingV2(Module):",
        "  def forward(self: __torch__.PatchMergingV2, x: Tensor) -> Tensor:",
        *chains,
        f"    _40 = [{', '.join(names)}]",
        "    input = torch.cat(_40, -1)",
        "    return input",
        ""]).encode()


def pt2_seed(tiny, path):
    """A few tensors as a torch.export archive (weights/checkpoint/pt2.c) with a small hand-made graph of
    what the reader looks at: a group_norm, layer norms with and without weights, the first
    PatchMerging's 8 slice chains into a cat, and a user input of (1, 1, 64, 64, 64)."""
    import zipfile
    codes = {torch_dtype: code for torch_dtype, code in ((np.float32, 7), (np.int64, 5))}
    cfg, files = {}, {}
    for i, (k, v) in enumerate(tiny.items()):
        a = v.numpy()
        files[f"weight_{i}"] = a.tobytes()
        cfg[k] = {"path_name": f"weight_{i}", "is_param": True, "use_pickle": False,
                  "tensor_meta": {"dtype": codes[a.dtype.type], "sizes": [{"as_int": d} for d in a.shape],
                                  "strides": [{"as_int": st // a.itemsize} for st in a.strides],
                                  "storage_offset": {"as_int": 0}}}

    def node(target, inputs, out, module=""):
        return {"target": target, "inputs": [{"name": n, "arg": a} for n, a in inputs],
                "outputs": [{"as_tensor": {"name": out}}],
                "metadata": {"nn_module_stack": f"L__self__,,monai.networks.nets.swin_unetr.SwinUNETR{module}"}}
    merging = ";L__self__swinViT.layers1.0.downsample,swinViT.layers1.0.downsample," \
              "monai.networks.nets.swin_unetr.PatchMerging"
    nodes = [node("torch.ops.aten.group_norm.default", [("input", {"as_tensor": {"name": "x_in"}}),
                                                       ("num_groups", {"as_int": 3})], "gn"),
             node("torch.ops.aten.layer_norm.default", [("weight", {"as_tensor": {"name": "w"}})], "ln1"),
             node("torch.ops.aten.layer_norm.default", [("weight", {"as_none": True})], "ln2")]
    cat = []
    for m, off in enumerate(((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 0), (0, 1, 1), (1, 1, 1))):
        prev = "ln1"
        for dim in (1, 2, 3):
            name = f"slice_{m}_{dim}"
            nodes.append(node("torch.ops.aten.slice.Tensor", [("self", {"as_tensor": {"name": prev}}),
                                                              ("dim", {"as_int": dim}),
                                                              ("start", {"as_int": off[dim - 1]}),
                                                              ("end", {"as_int": 9223372036854775807}),
                                                              ("step", {"as_int": 2})], name, merging))
            prev = name
        cat.append({"name": prev})
    nodes.append(node("torch.ops.aten.cat.default", [("tensors", {"as_tensors": cat}), ("dim", {"as_int": -1})],
                      "cat", merging))
    graph = {"graph_module": {"graph": {"nodes": nodes, "tensor_values": {"x_in": {"sizes": [
        {"as_int": d} for d in (1, 1, 64, 64, 64)]}}},
        "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x_in"}}}}]}}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("tiny/archive_format", "pt2")
        z.writestr("tiny/byteorder", "little")
        z.writestr("tiny/data/weights/model_weights_config.json", json.dumps({"config": cfg}))
        for name, data in files.items():
            z.writestr(f"tiny/data/weights/{name}", data)
        z.writestr("tiny/models/model.json", json.dumps(graph))


def large_files_seeds(out):
    d = os.path.join(out, "large_files")
    os.makedirs(d)
    item = ('  - path: "models/model.pt"\n    url: "https://example.org/a/model_v1.pt"\n'
            '    hash_val: "50dd67a01b28a1d5487fd9ac27e682fb"\n    hash_type: "md5"\n')
    seeds = {
        "one.yml": "large_files:\n" + item,
        "two_plain_comments.yml": "# two files\nlarge_files:  # list\n" + item +
        "  - path: models/extra.ts\n    url: http://127.0.0.1:8000/x.ts # plain\n"
        "    hash_type: sha256\n    hash_val: '" + "ab" * 32 + "'\n",
        "crlf.yml": ("large_files:\n" + item).replace("\n", "\r\n"),
        "metadata.json": '{\n    "schema": "s",\n    "version": "0.5.6",\n    "monai_version": "1.4.0"\n}\n',
    }
    for name, text in seeds.items():
        with open(os.path.join(d, name), "w", newline="") as f:
            f.write(text)


def node_config_seeds(out):
    """swinrun serve's configuration files: the smallest accepted, and one with every key (TLS on both
    sides and a STOW-RS destination included)."""
    d = os.path.join(out, "node_config")
    os.makedirs(d)
    small = {"ae_title": "SWINRUN", "port": 11112, "spool": "/var/lib/swinrun", "model": "/opt/model.onnx",
             "callers": [{"ae_title": "SCANNER"}],
             "destinations": [{"name": "pacs", "ae_title": "PACS", "host": "10.0.0.5", "port": 104}]}
    full = dict(small, log="/var/log/swinrun/node.jsonl", merge_order="pre15", normalize=False, norm_groups=16,
                cube=[96, 96, 96], backend="cpu", precision="bf16",
                threads=4, mem_limit="6G", workers=2, stable_age_s=10,
                outputs={"seg": "labelmap", "rtstruct": True, "report": True},
                callers=[{"ae_title": "SCANNER"}, {"ae_title": "ORTHANC", "host": "pacs.example.org"}],
                delivery={"attempts": 6, "first_delay_s": 5, "max_delay_s": 600, "timeout_s": 30},
                limits={"associations": 8, "instance_bytes": "256M", "instances_per_study": 20000,
                        "spool_bytes": 50000000000, "queued_studies": 1000},
                tls={"certificate": "/etc/swinrun/node.pem", "private_key": "/etc/swinrun/node.key",
                     "ca": "/etc/swinrun/ca.pem", "crl": "/etc/swinrun/ca.crl", "verify_peer": True},
                destinations=[dict(small["destinations"][0], tls={"ca": "/etc/swinrun/ca.pem", "crl": "/etc/swinrun/ca.crl",
                                                                  "peer_name": "pacs.example.org"}),
                              {"name": "archive", "ae_title": "ARCHIVE", "host": "10.0.0.6", "port": 2762,
                               "tls": {"certificate": "/etc/swinrun/node.pem", "private_key": "/etc/swinrun/node.key",
                                       "verify_peer": False}},
                              {"name": "web", "kind": "stowrs", "url": "https://pacs.example.org/dicom-web",
                               "token_file": "/etc/swinrun/token",
                               "tls": {"certificate": "/etc/swinrun/node.pem", "private_key": "/etc/swinrun/node.key",
                                       "ca": "/etc/swinrun/ca.pem"}},
                              {"name": "basic", "kind": "stowrs", "url": "http://127.0.0.1:8042/dicom-web",
                               "user": "swinrun", "password_file": "/etc/swinrun/password"},
                              {"name": "azure", "kind": "stowrs", "url": "https://ws.dicom.azurehealthcareapis.com/v1",
                               "oauth": {"token_url": "https://login.microsoftonline.com/t/oauth2/v2.0/token",
                                         "client_id": "swinrun", "client_secret_file": "/etc/swinrun/client_secret",
                                         "scope": "https://dicom.healthcareapis.azure.com/.default"}}])
    for name, cfg in (("small.json", small), ("full.json", full)):
        with open(os.path.join(d, name), "w") as f:
            json.dump(cfg, f, indent=1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    test_data, out = sys.argv[1:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    onnx_seeds(test_data, out)
    nifti_seeds(out)
    mha_seeds(out)
    nrrd_seeds(out)
    npy_seeds(out)
    dicom_seeds(out)
    ckpt_seeds(test_data, out)
    bundle_seeds(out)
    bundle_yaml_seeds(out)
    large_files_seeds(out)
    node_config_seeds(out)


if __name__ == "__main__":
    main()
