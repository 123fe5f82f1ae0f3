#!/usr/bin/env python3
"""The .nii.gz writer and reader (formats/gzip_members.c, formats/gzip_read.c) against gzip,
zlib and nibabel.

Writer: outputs of several chunks (uint8 and uint16 labels, 4D float32) written with 1 and 2
threads pass `gzip -t`, are one gzip member per 1 MiB of the uncompressed stream (counted
with zlib), decompress (zlib, `gzip -dc`) to the NIfTI header and exactly the expected
values, and read back through nibabel to them; 1 and 2 threads write the same bytes.

Reader: one NIfTI file compressed in every way a tool may: nibabel's single member, `gzip -9`
(a name in the header), members of 997 bytes (boundaries inside the header), members with
the optional header fields (FEXTRA, FNAME, FCOMMENT, FHCRC), a member or the last of many
holding bytes past the voxel data, trailing garbage after the last member, no compression at
all under a .gz name: swinrun reads each to nibabel's values. A wrong ISIZE, a wrong CRC, a
member cut short and a flipped bit are refused with one line, as gzip -t refuses them.

    test_gzip.py PROBE WORKDIR"""
import gzip
import os
import struct
import subprocess
import sys
import zlib

import nibabel as nib
import numpy as np

CHUNK = 1 << 20  # formats/gzip_members.h SWIN_GZ_CHUNK
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def members(blob):
    """The uncompressed length of each gzip member of blob (zlib)."""
    out = []
    while blob:
        d = zlib.decompressobj(16 + 15)
        data = d.decompress(blob)
        if not d.eof:
            raise ValueError("a member is cut short")
        out.append(len(data))
        blob = d.unused_data
    return out


def gunzip_all(blob):
    out = b""
    while blob:
        d = zlib.decompressobj(16 + 15)
        out += d.decompress(blob)
        blob = d.unused_data
    return out


def probe_read(probe, path, work, name):
    npy, aff = os.path.join(work, name + ".npy"), os.path.join(work, name + ".txt")
    r = subprocess.run([probe, "read", path, npy, aff], capture_output=True, text=True)
    return r, (np.load(npy) if r.returncode == 0 else None)


def writer_tests(probe, work):
    rng = np.random.default_rng(5)
    shape = (200, 180, 40)  # 1.44 MB of uint8: two members and a bit
    src = rng.integers(0, 250, size=shape).astype(np.int16)
    src[:, :90] = 7  # half of it compresses well
    ct = os.path.join(work, "w_src.nii")
    nib.save(nib.Nifti1Image(src, np.diag([0.8, 0.8, 2.5, 1.0])), ct)
    for dt, np_dt, vols in (("u8", np.uint8, 1), ("u16", np.uint16, 1), ("f32", np.float32, 3)):
        expect = np.stack([(src.astype(np.float32) + v).astype(np_dt) for v in range(vols)], axis=-1)
        if vols == 1:
            expect = expect[..., 0]
        blobs = []
        for threads in (1, 2):
            out = os.path.join(work, f"w_{dt}_t{threads}.nii.gz")
            r = subprocess.run([probe, "write", ct, out, dt, str(vols), str(threads)], capture_output=True, text=True)
            check(r.returncode == 0, f"write {dt} x{vols} with {threads} threads: {r.stderr.strip()}")
            if r.returncode:
                continue
            blob = open(out, "rb").read()
            blobs.append(blob)
            check(subprocess.run(["gzip", "-t", out]).returncode == 0, f"{os.path.basename(out)}: gzip -t")
            raw = gunzip_all(blob)
            lens = members(blob)
            want = [CHUNK] * (len(raw) // CHUNK) + ([len(raw) % CHUNK] if len(raw) % CHUNK else [])
            check(lens == want, f"{os.path.basename(out)}: {len(lens)} members of 1 MiB and the rest "
                                f"({len(raw)} bytes; expected {len(want)})")
            gz_dc = subprocess.run(["gzip", "-dc", out], capture_output=True).stdout
            check(gz_dc == raw, f"{os.path.basename(out)}: gzip -dc and zlib give the same bytes")
            offset = 352
            check(raw[offset:] == expect.tobytes(order="F"),
                  f"{os.path.basename(out)}: the data after the header are the expected values")
            try:
                got = np.asarray(nib.load(out).dataobj)
            except OSError as e:
                got = np.array(str(e))
            check(got.dtype == np_dt and np.array_equal(got, expect), f"{os.path.basename(out)}: nibabel reads them")
        if len(blobs) == 2:
            check(blobs[0] == blobs[1], f"write {dt}: 1 and 2 threads write the same bytes")


def gzip_member(data, flags=()):
    """One gzip member of data with the optional header fields named in flags (RFC 1952)."""
    flg, extra = 0, b""
    if "extra" in flags:
        flg |= 4
        extra += struct.pack("<H", 6) + b"ab" + struct.pack("<H", 2) + b"xy"
    if "name" in flags:
        flg |= 8
        extra += b"ct.nii\0"
    if "comment" in flags:
        flg |= 16
        extra += b"a comment\0"
    head = b"\x1f\x8b\x08" + bytes([flg]) + struct.pack("<I", 0) + b"\x00\x03" + extra
    if "hcrc" in flags:
        head = bytes([*head[:3], head[3] | 2, *head[4:]])
        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return head + body + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)


def reader_tests(probe, work):
    rng = np.random.default_rng(9)
    data = rng.integers(-1000, 2000, size=(61, 53, 47)).astype(np.int16)
    plain = os.path.join(work, "r_plain.nii")
    img = nib.Nifti1Image(data, np.diag([0.9, 0.9, 2.0, 1.0]))
    nib.save(img, plain)
    raw = open(plain, "rb").read()
    expect = data.astype(np.float32).transpose(2, 1, 0)  # probe read: (nz, ny, nx)
    extra = raw + rng.integers(0, 256, size=5000, dtype=np.uint8).tobytes()

    def split(blob, n):
        return b"".join(gzip.compress(blob[i:i + n], mtime=0) for i in range(0, len(blob), n))

    nib.save(img, os.path.join(work, "r_nibabel.nii.gz"))
    gz9 = subprocess.run(["gzip", "-9", "-c", plain], capture_output=True, check=True).stdout
    good = {
        "r_nibabel": open(os.path.join(work, "r_nibabel.nii.gz"), "rb").read(),
        "r_gzip9_named": gz9,
        "r_members_997": split(raw, 997),
        "r_header_fields": gzip_member(raw[:5000], ("extra", "name", "comment", "hcrc")) + gzip_member(raw[5000:]),
        "r_one_member_past_data": gzip.compress(extra, mtime=0),
        "r_members_past_data": split(extra, 4096),
        "r_trailing_garbage": gzip.compress(raw, mtime=0) + b"\0" * 37 + b"junk",
        "r_not_compressed": raw,
    }
    for name, blob in good.items():
        path = os.path.join(work, name + ".nii.gz")
        open(path, "wb").write(blob)
        r, got = probe_read(probe, path, work, name)
        check(r.returncode == 0 and got is not None and np.array_equal(got, expect),
              f"read {name}: nibabel's values {r.stderr.strip()}")
    one = gzip.compress(raw, mtime=0)
    mid = len(one) // 2
    bad = {
        "b_isize": one[:-4] + struct.pack("<I", (len(raw) + 1) & 0xFFFFFFFF),
        "b_crc": one[:-8] + struct.pack("<I", (zlib.crc32(raw) ^ 1) & 0xFFFFFFFF) + one[-4:],
        "b_cut": one[:-100],
        "b_flipped": one[:mid] + bytes([one[mid] ^ 0x10]) + one[mid + 1:],
    }
    for name, blob in bad.items():
        path = os.path.join(work, name + ".nii.gz")
        open(path, "wb").write(blob)
        r, _ = probe_read(probe, path, work, name)
        msg = r.stderr.strip()
        check(subprocess.run(["gzip", "-t", path], capture_output=True).returncode != 0, f"{name}: gzip -t refuses it")
        check(r.returncode == 1 and "truncated or corrupt" in msg and msg.count("\n") == 0,
              f"{name}: refused in one line ({msg})")


def main():
    probe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    writer_tests(probe, work)
    reader_tests(probe, work)
    if failures:
        print(f"{len(failures)} failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
