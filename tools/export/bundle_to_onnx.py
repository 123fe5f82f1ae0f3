#!/usr/bin/env python3
"""The ONNX twin of a MONAI bundle: its network with its weights (in the merge order they were
trained in, as tools/export/bundle_reference.py builds it) exported at one cube, for peers that
take ONNX (ONNX Runtime, OpenVINO) beside swinrun running the bundle itself.

    bundle_to_onnx.py BUNDLE_DIR OUT.onnx --size D H W [--exporter torchscript|dynamo]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    import bundle_reference
    import export_swin_unetr as ex
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("out")
    ap.add_argument("--size", type=int, nargs=3, required=True, metavar=("D", "H", "W"))
    ap.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    a = ap.parse_args()
    net = bundle_reference.bundle_network(a.bundle)
    cfg = {"cube": a.size, "in_channels": net.swinViT.patch_embed.proj.in_channels, "exporter": a.exporter,
           "opset": None, "dynamic": False}
    tmp = a.out + ".part.onnx"
    ex.export(net, cfg, tmp)
    os.replace(tmp, a.out)
    print(f"{a.out}: the ONNX twin of {a.bundle} at {a.size} ({cfg['exporter']}, opset {cfg['opset']})")


if __name__ == "__main__":
    main()
