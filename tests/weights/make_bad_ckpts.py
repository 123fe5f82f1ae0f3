#!/usr/bin/env python3
"""Hostile and unsupported weights files for the checkpoint loader's tests.

    make_bad_ckpts.py GOOD.pt OUTDIR WORK_DIR

GOOD.pt: a plain torch.save'd SwinUNETR state dict (tools/export/make_ckpt_data.py's plain case).
WORK_DIR: the tests' work folders; the pickles that name a command would create a file in
WORK_DIR/<their name> if anything ran them (the tests check those stay empty). Each file is named after what it tests (CMakeLists.txt).
"""
from __future__ import annotations

import io
import os
import pickle
import struct
import sys
import zipfile


class Call:
    """Pickles as a call of fn(*args): what a hostile checkpoint holds."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def torch_zip(path: str, pkl: bytes, records: dict[str, bytes] | None = None, name: str = "archive") -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", pkl)
        z.writestr(f"{name}/byteorder", b"little")
        for k, v in (records or {}).items():
            z.writestr(f"{name}/{k}", v)
        z.writestr(f"{name}/version", b"3\n")


def rebuild_pickle(storage_numel: int, offset: int, size: tuple, stride: tuple, key: str = "0") -> bytes:
    """A state dict {'swinViT.patch_embed.proj.weight': tensor} pickled by hand as torch does it."""
    out = io.BytesIO()
    w = out.write
    w(b"\x80\x02}q\x00X\x1f\x00\x00\x00swinViT.patch_embed.proj.weightq\x01")
    w(b"ctorch._utils\n_rebuild_tensor_v2\nq\x02(")
    w(b"(X\x07\x00\x00\x00storageq\x03ctorch\nFloatStorage\nq\x04X" + struct.pack("<I", len(key)) + key.encode())
    w(b"X\x03\x00\x00\x00cpuq\x05\x8a\x08" + struct.pack("<q", storage_numel) + b"tq\x06Q")
    w(b"\x8a\x08" + struct.pack("<q", offset))
    w(b"(" + b"".join(b"\x8a\x08" + struct.pack("<q", s) for s in size) + b"t")
    w(b"(" + b"".join(b"\x8a\x08" + struct.pack("<q", s) for s in stride) + b"t")
    w(b"\x89}tRq\x07s.")
    return out.getvalue()


def script_modules(n: int, fanout: int, cycle: bool) -> bytes:
    """A TorchScript data.pkl of n modules (objects of a __torch__ class, their attributes set by
    BUILD), module i holding fanout attributes that all name module i + 1; the last names the
    first when cycle, else nothing: fanout^k attribute paths k deep through n objects."""
    out = io.BytesIO()
    w = out.write
    w(b"\x80\x02")
    for i in range(n):  # memo i: module i, built empty
        w(b"c__torch__\nM\n)\x81q" + bytes([i]) + b"0")
    for i in range(n):  # each module's state, then BUILD on it
        w(b"h" + bytes([i]) + b"}(")
        for a in range(fanout if cycle or i + 1 < n else 0):
            w(b"X\x01\x00\x00\x00" + bytes([ord("a") + a]) + b"h" + bytes([(i + 1) % n]))
        w(b"ub0")
    w(b"h\x00.")
    return out.getvalue()


def main(argv: list[str]) -> int:
    import torch
    good, out, work = argv
    os.makedirs(out, exist_ok=True)
    sd = torch.load(good, weights_only=True)
    p = lambda n: os.path.join(out, n)  # noqa: E731

    # a weight replaced by a call of posix.system / builtins.eval (torch.save pickles the call)
    evil = dict(sd)
    evil["swinViT.patch_embed.proj.weight"] = Call(os.system, f"touch {work}/posix_system/ran")
    torch.save(evil, p("posix_system.pt"))
    torch.save(Call(eval, f"open('{work}/builtins_eval/ran', 'w')"), p("builtins_eval.pt"))
    torch.save({"state_dict": sd, "best_acc": Call(os.system, f"touch {work}/extra_placeholder/ran")}, p("extra_placeholder.pt"))
    # no tensor at all: the one would-be weight is the call
    torch.save({"state_dict": {"x": Call(os.system, f"touch {work}/only_placeholder/ran")}}, p("only_placeholder.pt"))
    # container
    with open(good, "rb") as f:
        blob = f.read()
    with open(p("truncated.pt"), "wb") as f:
        f.write(blob[: len(blob) // 2])
    with zipfile.ZipFile(good) as z:
        names = z.namelist()
        pkl = z.read([n for n in names if n.endswith("data.pkl")][0])
    torch_zip(p("dotdot.pt"), pkl, {"../../etc/passwd": b"x"})
    torch_zip(p("absolute.pt"), pkl, {"x": b"x"}, name="/abs")
    with zipfile.ZipFile(p("deflated.pt"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", pkl)
    # overlap: the central directory gives data.pkl 64 more bytes than it has, reaching into the next entry
    b = bytearray(blob)
    name = [n for n in names if n.endswith("data.pkl")][0].encode()
    i = 0
    while True:
        i = b.find(b"PK\x01\x02", i)
        if b[i + 46:i + 46 + len(name)] == name:
            break
        i += 4
    for off in (20, 24):
        struct.pack_into("<I", b, i + off, struct.unpack_from("<I", b, i + off)[0] + 64)
    with open(p("overlap.pt"), "wb") as f:
        f.write(bytes(b))
    # a local header that names another file than the central directory says
    b = bytearray(blob)
    j = b.find(b"PK\x03\x04")
    b[j + 30] ^= 0x01
    with open(p("local_name_mismatch.pt"), "wb") as f:
        f.write(bytes(b))
    # storages and tensors
    torch_zip(p("storage_short.pt"), rebuild_pickle(1000, 0, (12, 1, 2, 2, 2), (8, 8, 4, 2, 1)), {"data/0": b"\0" * 400})
    torch_zip(p("offset_out_of_range.pt"), rebuild_pickle(96, 90, (12, 1, 2, 2, 2), (8, 8, 4, 2, 1)), {"data/0": b"\0" * 384})
    torch_zip(p("absurd_shape.pt"), rebuild_pickle(96, 0, (1 << 40, 1 << 40, 2, 2, 2), (8, 8, 4, 2, 1)), {"data/0": b"\0" * 384})
    torch_zip(p("missing_storage.pt"), rebuild_pickle(96, 0, (12, 1, 2, 2, 2), (8, 8, 4, 2, 1), key="7"), {"data/0": b"\0" * 384})
    # pickles
    torch_zip(p("deep_marks.pt"), b"\x80\x02" + b"(" * 5000 + b"t" * 5000 + b".")
    torch_zip(p("deep_lists.pt"), b"\x80\x02" + b"]" * 200000 + b"a" * 199999 + b".")
    torch_zip(p("memo_huge.pt"), b"\x80\x02Nr\xff\xff\xff\x7f.")
    torch_zip(p("no_stop.pt"), b"\x80\x02}")
    # formats swinrun refuses with a message
    torch.save(sd, p("legacy.pt"), _use_new_zipfile_serialization=False)
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), p("torchscript_linear.pt"))
    torch.jit.save(torch.jit.script(torch.nn.ReLU()), p("torchscript_no_params.pt"))
    script = {"constants.pkl": b"\x80\x02).", "code/__torch__.py": b""}
    torch_zip(p("torchscript_dict.pt"), b"\x80\x02}q\x00.", script)
    torch_zip(p("torchscript_cycle.pt"), script_modules(1, 1, cycle=True), script)
    torch_zip(p("torchscript_fanout.pt"), script_modules(21, 2, cycle=False), script)
    torch.save({k: v for k, v in sd.items() if k.startswith("swinViT.")}, p("encoder_only.pt"))
    torch.save(dict(sd, **{"swinViT.layers1.0.blocks.0.attn.hyena_filter.weight": torch.zeros(3)}), p("unknown_key.pt"))
    torch.save({"optimizer": {"lr": 1.0}}, p("no_state_dict.pt"))
    from monai.networks.nets import SwinUNETR
    torch.save(SwinUNETR(in_channels=1, out_channels=2, feature_size=12, spatial_dims=2).state_dict(), p("spatial_2d.pt"))
    hdr = b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1000]}}'
    with open(p("safetensors_out_of_range.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr + b"\0" * 16)
    hdr = b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}'
    with open(p("safetensors_overlap.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr + b"\0" * 24)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
