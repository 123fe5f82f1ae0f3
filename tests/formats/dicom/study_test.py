#!/usr/bin/env python3
"""A folder is a study (issue 29): the series of a study folder or a DICOMDIR, listed and
chosen, on the studies study_make.py writes (its truth.json says what each holds, from the
datasets it wrote).

  list      `swinrun dicom-ls STUDY --json`: every series with its UID, number, description,
            modality, SOP class, slices, files, orientation, thickness and ImageType as
            truth.json has them; the thin CT chosen as the axial CT with the most slices
  choose    `swinrun STUDY out.nii.gz`: the thin CT read (the grid pydicom gives its files,
            the labels of that series' folder read alone), one stderr line saying which and
            why, the choice in --json; `--series UID` and `--series 3` read the thick CT
            (its grid and labels); a localizer series asked for is refused
  ambiguous two axial CT series of as many slices: exit 2, the reason and one line per
            series on stderr, nothing written; dicom-ls lists them with no choice
  mixed     one series folder with a localizer and a secondary capture of its series and a
            dose report: the CT read, 3 files skipped, said on stderr and in --json
  dicomdir  the study under a DICOMDIR (pydicom's FileSet): the DICOMDIR and its folder list
            the same series as the study folder, and the run reads the thin CT

    study_test.py SWINRUN MODEL WORKDIR --studies DIR --only NAME..."""
import argparse
import json
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_dicom import Series  # noqa: E402

ok = True


def check(what, cond, detail=""):
    global ok
    print(f"{what:72s} {'ok' if cond else 'FAIL'} {detail}", flush=True)
    ok &= bool(cond)
    return bool(cond)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def listing(swinrun, path, out, *extra):
    js = os.path.join(out, "ls.json")
    r = run([swinrun, "dicom-ls", path, "--json", js, *extra])
    return r, (json.load(open(js)) if r.returncode == 0 else None)


def same_rows(got, want):
    """got: dicom-ls's series; want: truth.json's, by UID."""
    by_uid = {s["uid"]: s for s in got}
    bad = []
    for w in want:
        g = by_uid.get(w["uid"])
        if g is None:
            bad.append(f"{w['uid']} missing")
            continue
        for k in ("number", "description", "modality", "sop_class", "files", "slices", "orientation", "localizers",
                  "non_images", "image_type"):
            if g[k] != w[k]:
                bad.append(f"{w['description']}: {k} {g[k]!r} != {w[k]!r}")
        if abs(g["slice_thickness_mm"] - w["thickness"]) > 1e-6:
            bad.append(f"{w['description']}: thickness {g['slice_thickness_mm']} != {w['thickness']}")
    return len(got) == len(want) and not bad, "; ".join(bad) or f"{len(got)} series"


def segment(swinrun, env, inp, out, *extra):
    js = out + ".json"
    r = run([swinrun, "segment", inp, out, "--json", js, *extra], env=env)
    j = json.load(open(js))["volumes"][0] if os.path.exists(js) else {}
    return r, j


def same_labels_and_grid(name, out, ref, series):
    a, b = nib.load(out), nib.load(ref)
    la, lb = np.asarray(a.dataobj), np.asarray(b.dataobj)
    check(f"{name}: the grid pydicom gives the series' files",
          la.shape == (series.cols, series.rows, len(series.sop)) and np.abs(a.affine - series.affine).max() < 1e-4,
          f"{la.shape}")
    check(f"{name}: the labels of the series' folder read alone", la.shape == lb.shape and np.array_equal(la, lb),
          f"labels {sorted(int(v) for v in np.unique(la))}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("swinrun")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--studies", required=True)
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    sw, st = a.swinrun, a.studies
    truth = json.load(open(os.path.join(st, "truth.json")))
    out = os.path.join(a.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ, SWINRUN_MODEL=a.model)
    want = lambda n: not a.only or n in a.only  # noqa: E731
    study, t = os.path.join(st, "study"), truth["study"]

    if want("list"):
        r, j = listing(sw, study, out)
        if check("list: dicom-ls STUDY --json", r.returncode == 0, r.stderr.strip()[-200:]):
            check("list: every series as written", *same_rows(j["series"], t["series"]))
            check("list: the thin CT chosen, as the axial CT with the most slices",
                  j["chosen"] == t["chosen"] and "most slices" in j["reason"], j["reason"])
            check("list: files counted", j["files"] == t["files"] and j["not_dicom"] == 0, f"{j['files']}")
        r = run([sw, "dicom-ls", study])
        lines = r.stdout.strip().splitlines()
        check("list: the text form, a line per series and the choice",
              r.returncode == 0 and len(lines) == 2 + len(t["series"]) + 1 and
              all(any(s["uid"] in ln for ln in lines) for s in t["series"]) and
              any(ln.startswith("*") and t["chosen"] in ln for ln in lines), r.stdout[-300:])

    if want("choose"):
        thin, thick = Series(os.path.join(study, "ct_thin")), Series(os.path.join(study, "ct_thick"))
        refs = {}
        for name in ("ct_thin", "ct_thick"):
            refs[name] = os.path.join(out, f"ref_{name}.nii.gz")
            r = run([sw, os.path.join(study, name), refs[name]], env=env)
            check(f"choose: the {name} folder alone", r.returncode == 0, r.stderr.strip()[-200:])
        o = os.path.join(out, "default.nii.gz")
        r, j = segment(sw, env, study, o)
        lines = r.stderr.strip().splitlines()
        if check("choose: swinrun STUDY out.nii.gz", r.returncode == 0, r.stderr.strip()[-300:]):
            same_labels_and_grid("choose: default", o, refs["ct_thin"], thin)
            check("choose: one line: the series, why, what was skipped",
                  len(lines) == 1 and t["thin"] in lines[0] and "most slices" in lines[0] and
                  "9 files of 3 other series" in lines[0], r.stderr.strip())
            check("choose: --json has the choice",
                  j.get("dicom_series") == t["thin"] and "most slices" in j.get("dicom_series_reason", "") and
                  j.get("dicom_series_found") == 4 and j.get("dicom_skipped") == 9, str(j.get("dicom_series_reason")))
        for how, pick in (("UID", t["thick"]), ("number", "3")):
            o = os.path.join(out, f"thick_{how}.nii.gz")
            r, j = segment(sw, env, study, o, "--series", pick)
            if check(f"choose: --series by {how} reads the thick CT", r.returncode == 0, r.stderr.strip()[-300:]):
                same_labels_and_grid(f"choose: --series {how}", o, refs["ct_thick"], thick)
                check(f"choose: --json says it was asked for by its {how}",
                      j.get("dicom_series") == t["thick"] and j.get("dicom_series_reason") == f"asked for by its {how}",
                      str(j.get("dicom_series_reason")))
        before = set(os.listdir(out))
        r = run([sw, study, os.path.join(out, "scout.nii.gz"), "--series", t["scout"]], env=env)
        check("choose: a localizer series asked for: exit 2, no image to segment, nothing written",
              r.returncode == 2 and "holds no image" in r.stderr and set(os.listdir(out)) == before,
              r.stderr.strip()[:200])
        r = run([sw, study, os.path.join(out, "none.nii.gz"), "--series", "77"], env=env)
        check("choose: --series naming no series: exit 2", r.returncode == 2 and "no series has" in r.stderr,
              r.stderr.strip()[:200])

    if want("ambiguous"):
        amb, uids = os.path.join(st, "ambiguous"), truth["ambiguous"]["uids"]
        before = set(os.listdir(out))
        r = run([sw, amb, os.path.join(out, "amb.dcm")], env=env)
        lines = r.stderr.strip().splitlines()
        check("ambiguous: exit 2, the reason, then a header and a line per series, nothing written",
              r.returncode == 2 and "ambiguous: 2 axial CT series of 12 slices" in lines[0] and len(lines) == 5 and
              all(any(u in ln for ln in lines[2:]) for u in uids) and set(os.listdir(out)) == before,
              r.stderr.strip()[-400:])
        r, j = listing(sw, amb, out)
        check("ambiguous: dicom-ls lists 3 series and chooses none (exit 0)",
              r.returncode == 0 and j["chosen"] is None and len(j["series"]) == 3 and "ambiguous" in j["reason"],
              r.stderr.strip()[-200:])
        r = run([sw, amb, os.path.join(out, "amb4.nii.gz"), "--series", "4"], env=env)
        check("ambiguous: --series 4 settles it", r.returncode == 0, r.stderr.strip()[-200:])

    if want("mixed"):
        o = os.path.join(out, "mixed.nii.gz")
        r, j = segment(sw, env, os.path.join(st, "mixed"), o)
        lines = r.stderr.strip().splitlines()
        if check("mixed: a series folder with a localizer, a secondary capture and a dose report",
                 r.returncode == 0, r.stderr.strip()[-300:]):
            check("mixed: one line naming what was skipped",
                  len(lines) == 1 and "1 localizer image, 1 non-image object (Secondary Capture) in the series; "
                  "1 file of 1 other series" in lines[0], r.stderr.strip())
            check("mixed: --json: the CT series, 3 files skipped",
                  j.get("dicom_series") == truth["mixed"]["chosen"] and j.get("dicom_skipped") == 3 and
                  nib.load(o).shape == (48, 40, 12), str(j.get("dicom_skipped_what")))

    if want("dicomdir"):
        dd = os.path.join(st, "dicomdir")
        for what, path in (("DICOMDIR", os.path.join(dd, "DICOMDIR")), ("its folder", dd)):
            r, j = listing(sw, path, out)
            if check(f"dicomdir: dicom-ls on {what}", r.returncode == 0, r.stderr.strip()[-200:]):
                check(f"dicomdir: {what}: the study's series", *same_rows(j["series"], t["series"]))
                check(f"dicomdir: {what}: the thin CT chosen", j["chosen"] == t["chosen"], j["reason"])
        o = os.path.join(out, "dicomdir.nii.gz")
        r, j = segment(sw, env, os.path.join(dd, "DICOMDIR"), o)
        ref = os.path.join(out, "ref_ct_thin.nii.gz")
        if check("dicomdir: swinrun DICOMDIR out.nii.gz reads the thin CT",
                 r.returncode == 0 and j.get("dicom_series") == t["thin"], r.stderr.strip()[-300:]):
            if not os.path.exists(ref):
                run([sw, os.path.join(study, "ct_thin"), ref], env=env)
            la, lb = np.asarray(nib.load(o).dataobj), np.asarray(nib.load(ref).dataobj)
            check("dicomdir: the labels of the thin CT's folder", np.array_equal(la, lb))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
