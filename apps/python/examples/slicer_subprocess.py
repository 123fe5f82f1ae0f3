"""How a 3D Slicer extension would run swinrun: in a subprocess, with numpy in and out, no torch.

Slicer's own Python keeps its packages; swinrun lives in a separate environment whose python
the extension starts. The volume and its affine go to the child's stdin as one .npz, the
labels come back on its stdout as .npy; progress lines go to stderr.

    python slicer_subprocess.py CT.nii.gz MODEL [SWINRUN_PYTHON]   (the Slicer side, a demo)
    python slicer_subprocess.py --worker MODEL                       (the child)
"""
import io
import subprocess
import sys

import numpy as np


def segment_in_subprocess(volume: np.ndarray, ras_affine: np.ndarray, model: str, python: str) -> np.ndarray:
    """The extension's side: needs numpy only. volume (i, j, k) as Slicer's array (after
    slicer.util.arrayFromVolume, transpose it to (i, j, k)); ras_affine from the volume's IJKToRAS matrix."""
    buf = io.BytesIO()
    np.savez(buf, volume=volume, affine=ras_affine)
    child = subprocess.run([python, __file__, "--worker", model], input=buf.getvalue(), stdout=subprocess.PIPE,
                           check=True)
    return np.load(io.BytesIO(child.stdout), allow_pickle=False)


def worker(model_path: str) -> None:
    """The child: swinrun's environment."""
    import swinrun

    data = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
    labels, report = swinrun.Model(model_path).segment(data["volume"], data["affine"], progress=True)
    out = io.BytesIO()
    np.save(out, labels, allow_pickle=False)
    sys.stdout.buffer.write(out.getvalue())
    print(f"{report['labels_present']} labels, {report['cubes']} cubes", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        import nibabel as nib  # the demo reads a file; Slicer would hand over its volume node's array

        img = nib.load(sys.argv[1])
        python = sys.argv[3] if len(sys.argv) > 3 else sys.executable
        labels = segment_in_subprocess(np.asanyarray(img.dataobj), img.affine, sys.argv[2], python)
        print(f"labels {labels.shape} {labels.dtype}: {np.unique(labels).tolist()}")
