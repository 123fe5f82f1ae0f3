#!/usr/bin/env python3
"""swinrun serve, the DICOM node, against Orthanc (Debian's, on loopback ports, its own storage),
DCMTK's echoscu / storescu / storescp, pydicom and highdicom. One case per CTest test:

  e2e           Orthanc holds a CT series and sends it to the node (REST /modalities/.../store);
                the SEG and RT Structure Set arrive in Orthanc in the CT's study, referencing the
                CT series and every slice; highdicom reads the SEG back equal to the CLI's SEG of
                the same series; the output UIDs are the ones derived from the series and the
                model's SHA-256 (computed here); the series sent again gives Orthanc no new
                instance; storescu as a scanner gets its study segmented too; the log holds no
                StudyInstanceUID or PatientID; the spool is 0700; status.json and --status count
                what happened; SIGTERM exits 0. Prints the time from the last instance sent to the
                SEG in Orthanc, and the node's peak RSS.
  kill_receiving  kill -9 while storescu sends (after some instances were acknowledged); restart,
                the scanner sends again: one SEG and one RT Structure Set in Orthanc, the SEG
                referencing every slice.
  kill_working  kill -9 while one study is segmented and another waits in the queue; restart:
                both delivered, each once.
  kill_delivering  kill -9 while the outputs are being sent (the second destination, a storescp
                that sleeps 2 s after each store); restart: Orthanc (the first, already marked) gets
                nothing twice, the second gets both outputs.
  pacs_down     the PACS refuses connections: with 2 tries the job goes to the dead letters with
                the reason; with more, the PACS started after two failed tries gets the outputs.
  full_spool    over the spool's quota each C-STORE is answered 0xA700 and the node keeps
                answering; every instance it kept is whole, tmp/ is empty; an instance over
                limits.instance_bytes ends its association and nothing of it is kept.
  refused       an unknown calling AE title, an allowed one from another host, a wrong called AE
                title: each refused at association, the reason logged, nothing received; a second
                association beyond limits.associations refused while the first completes.
  malformed     a study whose series has a slice of another size goes to the dead letters with
                the reason; a good study sent alongside is delivered.
  drain         SIGTERM during a segmentation: no new association, the segmentation finishes, exit
                0; after a restart the study is delivered once.
  config        bad configuration files: exit 2 and one line naming the key; a good one --check 0.
  tls           DICOM TLS both ways (certificates made here with openssl: a CA, the node's, a
                scanner's, the archive's, one for another host name, one the CA's CRL revokes, and
                one from another CA): echoscu and storescu with the CA's client certificate get
                through; no TLS, TLS without a certificate, a certificate of another CA and a revoked
                one are refused at the handshake (logged); a silent peer holds the listener for
                timeout_s only; the study is delivered over TLS to a DCMTK storescp +tls and not to
                one whose certificate another CA signed, names another host (unless peer_name names
                it) or is revoked; a missing key, a key that is not the certificate's, a file that is
                not a key, a CRL file without one, peer_name on the listening side: exit 2, one
                line naming the key.
  stowrs        delivery by DICOMweb STOW-RS to Orthanc's DICOMweb plugin: the SEG and RT
                Structure Set in Orthanc once, the node's UIDs; a second destination whose URL
                answers 404 is tried, logged with the status, and the job ends in the dead letters
                with the reason, the first destination not sent to again; a server answering 200
                that lists one of the two instances as failed (a stub that reads the request's
                parts with pydicom) is a failed try.
  load          20 studies from 4 storescu senders at once, 2 workers: each study's SEG and RT
                Structure Set in Orthanc exactly once, nothing failed; the node's peak RSS (VmHWM)
                within the CLI's peak RSS of one such study plus one more worker's plan, every
                association's instance and a margin (LOAD_MARGIN). Prints the peak RSS and the time
                from the last instance sent to the last output in Orthanc.

    node_test.py SWINRUN MODEL WORK --only CASE"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

import numpy as np
import pydicom

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import node_harness as nh  # noqa: E402
from node_harness import check, wait_for  # noqa: E402


def delivered_to(orthanc, study, n=2):
    """Orthanc holds the study's SEG and RTSTRUCT (n instances besides the CT)."""
    s = orthanc.study(study)
    return s if len(s.get("SEG", [])) + len(s.get("RTSTRUCT", [])) >= n else None


def seg_pixels(path_or_ds, sops):
    import highdicom as hd
    seg = hd.seg.segread(path_or_ds) if isinstance(path_or_ds, str) else hd.seg.Segmentation.from_dataset(path_or_ds)
    return seg.get_pixels_by_source_instance(source_sop_instance_uids=sops, combine_segments=True, relabel=False)


def case_e2e(a, work):
    ct = os.path.join(work, "ct")
    study, series, sops = nh.make_series(ct)
    node_port = nh.free_port()
    orthanc = nh.Orthanc(os.path.join(work, "orthanc"), {"swinrun": ("SWINRUN", node_port)})
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model, port=node_port,
                   destinations=[{"name": "pacs", "ae_title": "ORTHANC", "host": "127.0.0.1", "port": orthanc.dicom}])
    try:
        if not (orthanc.start() and node.start()):
            return
        orthanc.upload(ct)
        ct_series = orthanc.study(study)["CT"]
        check("Orthanc holds the CT series", len(ct_series) == len(sops), f"{len(ct_series)} instances")
        series_id = orthanc.post("/tools/lookup", series.encode(), raw=True)[0]["ID"]
        t_sent = time.monotonic()
        r = orthanc.post("/modalities/swinrun/store", {"Resources": [series_id], "Synchronous": True})
        t_last = time.monotonic()
        check("Orthanc sent the series to the node", r.get("InstancesCount") == len(sops) and not r.get("FailedInstancesCount"), str(r)[:120])
        got = wait_for("SEG and RT Structure Set in Orthanc", lambda: delivered_to(orthanc, study), timeout=60, step=0.05)
        latency = time.monotonic() - t_last
        if not got:
            return
        print(f"measured: {len(sops)} instances sent by Orthanc in {t_last - t_sent:.2f} s; last instance to SEG and "
              f"RTSTRUCT in Orthanc {latency:.2f} s (stable_age_s 1)")
        check("one SEG and one RT Structure Set, in the CT's study", len(got["SEG"]) == 1 and len(got["RTSTRUCT"]) == 1
              and len(got["CT"]) == len(sops), str({k: len(v) for k, v in got.items()}))
        d_seg, d_rt = orthanc.instance(got["SEG"][0]), orthanc.instance(got["RTSTRUCT"][0])
        refs = [i.ReferencedSOPInstanceUID for i in d_seg.ReferencedSeriesSequence[0].ReferencedInstanceSequence]
        check("the SEG references the CT series and every slice",
              d_seg.StudyInstanceUID == study and d_seg.ReferencedSeriesSequence[0].SeriesInstanceUID == series
              and sorted(refs) == sorted(sops))
        rt_series = (d_rt.ReferencedFrameOfReferenceSequence[0].RTReferencedStudySequence[0]
                     .RTReferencedSeriesSequence[0])
        check("the RT Structure Set references the CT series and every slice",
              d_rt.StudyInstanceUID == study and rt_series.SeriesInstanceUID == series
              and sorted(i.ReferencedSOPInstanceUID for i in rt_series.ContourImageSequence) == sorted(sops))
        seed = nh.model_seed(a.model)
        want = {k: nh.derived_uid(seed, series, f"{d.SOPClassUID} {k}") for d in (d_seg,) for k in ("instance", "series")}
        want_rt = {k: nh.derived_uid(seed, series, f"{d_rt.SOPClassUID} {k}") for k in ("instance", "series")}
        check("SEG and RTSTRUCT UIDs derived from the series and the model's SHA-256",
              d_seg.SOPInstanceUID == want["instance"] and d_seg.SeriesInstanceUID == want["series"]
              and d_rt.SOPInstanceUID == want_rt["instance"] and d_rt.SeriesInstanceUID == want_rt["series"],
              d_seg.SOPInstanceUID)
        # the CLI on the same series: highdicom reads both SEGs to the same pixels
        cli_seg = os.path.join(work, "cli_seg.dcm")
        r = subprocess.run([a.swinrun, ct + "/", cli_seg, "--model", a.model, "--backend", "cpu"], capture_output=True,
                           text=True)
        if check("swinrun CT_DIR/ seg.dcm (the CLI)", r.returncode == 0, r.stderr[-200:]):
            mine, cli = seg_pixels(d_seg, sops), seg_pixels(cli_seg, sops)
            check("highdicom: the node's SEG = the CLI's SEG, voxel for voxel", mine.shape == cli.shape
                  and np.array_equal(mine, cli) and int(mine.max()) > 0,
                  f"{int(np.sum(mine != cli)) if mine.shape == cli.shape else 'shapes differ'} voxels differ")
            c = pydicom.dcmread(cli_seg)
            check("the same segments (labels and codes)", [s.SegmentLabel for s in c.SegmentSequence]
                  == [s.SegmentLabel for s in d_seg.SegmentSequence])
        # the series again: the same outputs, which Orthanc already holds
        before = sum(len(v) for v in orthanc.study(study).values())
        orthanc.post("/modalities/swinrun/store", {"Resources": [series_id], "Synchronous": True})
        wait_for("the repeat delivered", lambda: len(node.events("done")) >= 2, timeout=60)
        after = sum(len(v) for v in orthanc.study(study).values())
        check("sent again: delivered again, and Orthanc holds no new instance", after == before,
              f"{before} -> {after} instances")
        # a scanner: storescu
        ct2 = os.path.join(work, "ct2")
        study2, _, sops2 = nh.make_series(ct2, seed=5)
        check("echoscu as SCANNER", nh.echo(node.port))
        r = nh.storescu(node.port, nh.files_of(ct2))
        check("storescu as SCANNER: every instance stored", r.returncode == 0, r.stdout[-200:])
        got2 = wait_for("the scanner's study segmented into Orthanc", lambda: delivered_to(orthanc, study2), timeout=60)
        check("its SEG and RTSTRUCT in Orthanc", got2 and len(got2["SEG"]) == 1 and len(got2["RTSTRUCT"]) == 1)
        wait_for("status.json: idle, 3 delivered", lambda: node.idle() and node.status()["delivered"] == 3, timeout=10)
        st = node.status()
        check("status.json: 3 delivered, 0 failed, nothing queued", st and st["delivered"] == 3 and st["failed"] == 0,
              json.dumps(st)[:160])
        r = subprocess.run([a.swinrun, "serve", node.cfg, "--status"], capture_output=True, text=True)
        check("swinrun serve CONFIG --status", r.returncode == 0 and '"delivered": 3' in r.stdout
              and "running" in r.stdout.splitlines()[-1], r.stdout[-100:])
        with open(node.log) as f:
            text = f.read()
        events = node.events()
        patient = pydicom.dcmread(nh.files_of(ct)[0]).PatientID
        check("the log: JSON lines; no StudyInstanceUID, SeriesInstanceUID or PatientID in it",
              all(study not in text and s not in text for s in (series, study2, patient)) and events,
              f"{len(events)} lines")
        kinds = [e["event"] for e in events if e.get("study") == events[-1].get("study")]
        check("the log: received, queued, segmented, delivered, done for a study",
              all(k in kinds for k in ("received", "queued", "segmented", "delivered", "done")), str(kinds))
        modes = {p: stat.S_IMODE(os.stat(os.path.join(node.spool, p)).st_mode) for p in ("", "incoming", "outbox")}
        check("the spool and its folders are 0700", all(m == 0o700 for m in modes.values()), str(modes))
        with open(f"/proc/{node.proc.pid}/status") as f:
            hwm = [line.split()[1] for line in f if line.startswith("VmHWM")][0]
        print(f"measured: node peak RSS {int(hwm) / 1024:.0f} MiB (f=12 test model, 1 worker, 2 threads)")
        rc = node.terminate()
        check("SIGTERM: exit 0, 'stopped' logged", rc == 0 and node.events("stopped"), f"rc {rc}")
    finally:
        node.stop()
        orthanc.stop()


HTJ2K_RPCL = "1.2.840.10008.1.2.4.202"


def htj2k_series(ct, work):
    """The series' slices re-encoded, in place, as HTJ2K Lossless RPCL (openjph's ojph_compress)."""
    sys.path.insert(0, os.path.join(HERE, "..", "formats", "dicom"))
    import decoders_test
    for p in nh.files_of(ct):
        decoders_test.write("htj2k_rpcl", pydicom.dcmread(p), p, work)


def pynetdicom_store(port, files, syntax):
    """pynetdicom (an SCU that knows HTJ2K) sends the files on one association proposing CT Image
    Storage in `syntax` only; the C-STORE statuses, or None when the association is refused."""
    from pynetdicom import AE
    ae = AE(ae_title="SCANNER")
    ae.add_requested_context("1.2.840.10008.5.1.4.1.1.2", [syntax])
    assoc = ae.associate("127.0.0.1", port, ae_title="SWINRUN")
    if not assoc.is_established:
        return None
    statuses = []
    for f in files:
        r = assoc.send_c_store(pydicom.dcmread(f))
        statuses.append(int(r.Status) if r else None)
    assoc.release()
    return statuses


def case_htj2k(a, work):
    ct, plain = os.path.join(work, "ct"), os.path.join(work, "ct_plain")
    study, series, sops = nh.make_series(ct)
    shutil.copytree(ct, plain)
    htj2k_series(ct, work)
    check("the series re-encoded as HTJ2K Lossless RPCL", all(pydicom.dcmread(p).file_meta.TransferSyntaxUID
                                                              == HTJ2K_RPCL for p in nh.files_of(ct)))
    recv, recv_port = os.path.join(work, "archive"), nh.free_port()
    os.makedirs(recv)
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model, outputs={"seg": "binary", "rtstruct": False},
                   destinations=[{"name": "archive", "ae_title": "ARCHIVE", "host": "127.0.0.1", "port": recv_port}])
    archive = subprocess.Popen(["storescp", "-aet", "ARCHIVE", "-od", recv, str(recv_port)])
    try:
        if not node.start():
            return
        statuses = pynetdicom_store(node.port, nh.files_of(ct), HTJ2K_RPCL)
        check("pynetdicom's HTJ2K association accepted, every C-STORE answered Success",
              statuses == [0] * len(sops), str(statuses)[:120])
        got = wait_for("the SEG at the archive", lambda: os.listdir(recv), timeout=60, step=0.05)
        check("no instance refused", not node.events("store_refused"), str(node.events("store_refused"))[:200])
        if not got:
            return
        cli_seg = os.path.join(work, "cli_seg.dcm")
        r = subprocess.run([a.swinrun, plain + "/", cli_seg, "--model", a.model, "--backend", "cpu", "--threads", "2"],
                           capture_output=True, text=True)
        if check("swinrun CT_DIR/ seg.dcm on the uncompressed series", r.returncode == 0, r.stderr[-200:]):
            mine, cli = seg_pixels(os.path.join(recv, os.listdir(recv)[0]), sops), seg_pixels(cli_seg, sops)
            check("highdicom: the node's SEG of the HTJ2K series = the CLI's of the uncompressed one",
                  mine.shape == cli.shape and np.array_equal(mine, cli) and int(mine.max()) > 0,
                  f"{int(np.sum(mine != cli)) if mine.shape == cli.shape else 'shapes differ'} voxels differ")
        check("nothing left in the spool's tmp/", not os.listdir(os.path.join(node.spool, "tmp")))
    finally:
        node.stop()
        archive.terminate()
        archive.wait()
    # a node that holds its studies an hour: the instance as kept, before any segmentation
    holder = nh.Node(a.swinrun, os.path.join(work, "holder"), a.model, stable_age_s=3600,
                     destinations=[{"name": "archive", "ae_title": "ARCHIVE", "host": "127.0.0.1", "port": recv_port}])
    try:
        if not holder.start():
            return
        sent = nh.files_of(ct)[0]
        check("one instance sent to a node that holds it", pynetdicom_store(holder.port, [sent], HTJ2K_RPCL) == [0])
        kept = [os.path.join(d, n) for d, _, names in os.walk(os.path.join(holder.spool, "incoming")) for n in names]
        k, x = (pydicom.dcmread(kept[0]), pydicom.dcmread(sent)) if len(kept) == 1 else (None, None)
        check("kept with the HTJ2K UID in its file meta, the pixel data byte for byte as sent",
              k is not None and k.file_meta.TransferSyntaxUID == HTJ2K_RPCL and k.PixelData == x.PixelData
              and k.SOPInstanceUID == x.SOPInstanceUID, f"{len(kept)} kept")
    finally:
        holder.stop()


# the big studies: the untrained test model's RT Structure Set of a 96 x 96 x 32 study is tens
# of MB of contours, which Orthanc takes longer to store than a test should wait
SEG_ONLY = {"seg": "binary", "rtstruct": False}


def pacs_and_node(a, work, more_destinations=(), **keys):
    """Orthanc as the PACS, the node's first destination (then more_destinations)."""
    orthanc = nh.Orthanc(os.path.join(work, "orthanc"), {})
    dests = [{"name": "pacs", "ae_title": "ORTHANC", "host": "127.0.0.1", "port": orthanc.dicom}]
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model, destinations=dests + list(more_destinations),
                   **keys)
    return orthanc, node


def exactly_once(orthanc, node, studies, what, kinds=("SEG", "RTSTRUCT")):
    wait_for("the node idle", node.idle, timeout=90)
    time.sleep(1.5)  # a second delivery, were there one, would land now
    counts = [orthanc.study(s) for s in studies]
    check(f"{what}: each study's {' and '.join(kinds)} in Orthanc exactly once",
          all(len(c.get(k, [])) == 1 for c in counts for k in kinds),
          str([{k: len(v) for k, v in c.items()} for c in counts]))
    return counts


def case_kill_receiving(a, work):
    ct = os.path.join(work, "ct")
    study, series, sops = nh.make_series(ct)
    orthanc, node = pacs_and_node(a, work)
    try:
        if not (orthanc.start() and node.start()):
            return
        sender = nh.storescu(node.port, nh.files_of(ct), wait=False)
        incoming = lambda: sum(len(f) for _, _, f in os.walk(os.path.join(node.spool, "incoming")))  # noqa: E731
        wait_for("some instances acknowledged", lambda: incoming() >= 5, timeout=30, step=0.01)
        node.kill9()
        kept = incoming()
        sender.wait()
        check("killed while receiving: the sender saw the failure", sender.returncode != 0 and 5 <= kept < len(sops),
              f"{kept} of {len(sops)} instances on disk")
        if not node.start():
            return
        r = nh.storescu(node.port, nh.files_of(ct))  # the scanner sends again what failed (here: all)
        check("sent again", r.returncode == 0, r.stdout[-200:])
        counts = exactly_once(orthanc, node, [study], "kill -9 while receiving")
        if counts[0].get("SEG"):
            d = orthanc.instance(counts[0]["SEG"][0])
            refs = [i.ReferencedSOPInstanceUID for i in d.ReferencedSeriesSequence[0].ReferencedInstanceSequence]
            check("the SEG references all slices", sorted(refs) == sorted(sops), f"{len(refs)} of {len(sops)}")
    finally:
        node.stop()
        orthanc.stop()


def case_kill_working(a, work):
    big, small = os.path.join(work, "big"), os.path.join(work, "small")
    study_a, _, _ = nh.make_series(big, big=True)
    study_b, _, _ = nh.make_series(small, seed=7, slices=4)
    orthanc, node = pacs_and_node(a, work, threads=1, outputs=SEG_ONLY)
    try:
        if not (orthanc.start() and node.start()):
            return
        nh.storescu(node.port, nh.files_of(big))
        outbox = os.path.join(node.spool, "outbox")
        wait_for("the big study segmenting", lambda: [n for n in os.listdir(outbox) if n.startswith(".")], timeout=60,
                 step=0.02)
        nh.storescu(node.port, nh.files_of(small))  # queued 1 s after it arrived, the big one still running

        def busy_and_queued():
            running = [n for n in os.listdir(outbox) if n.startswith(".")]
            return running and len(node.jobs("queue")) == 2 and not node.events("segmented")
        caught = wait_for("one study segmenting, the other queued", busy_and_queued, timeout=60, step=0.02)
        node.kill9()
        check("killed with one study in inference and one queued", caught and len(node.jobs("queue")) == 2,
              str(node.jobs("queue")))
        if not node.start():
            return
        exactly_once(orthanc, node, [study_a, study_b], "kill -9 during inference and in the queue", ("SEG",))
    finally:
        node.stop()
        orthanc.stop()


def case_kill_delivering(a, work):
    ct = os.path.join(work, "ct")
    study, _, _ = nh.make_series(ct)
    slow_port, recv = nh.free_port(), os.path.join(work, "slow")
    os.makedirs(recv)
    orthanc, node = pacs_and_node(a, work, [{"name": "archive", "ae_title": "ARCHIVE", "host": "127.0.0.1",
                                             "port": slow_port}])
    slow = subprocess.Popen(["storescp", "--fork", "-aet", "ARCHIVE", "--sleep-after", "2", "-od", recv, str(slow_port)])
    try:
        if not (orthanc.start() and node.start()):
            return
        nh.storescu(node.port, nh.files_of(ct))
        sending = wait_for("delivered to the PACS, the archive being sent to",
                           lambda: node.events("delivered") and os.listdir(os.path.join(node.spool, "outbox")),
                           timeout=60, step=0.02)
        time.sleep(0.5)
        node.kill9()
        check("killed during delivery (the PACS done, the archive not)", sending and len(os.listdir(recv)) < 2,
              f"archive holds {len(os.listdir(recv))} files")
        if not node.start():
            return
        exactly_once(orthanc, node, [study], "kill -9 during delivery")
        sops = {pydicom.dcmread(os.path.join(recv, n)).SOPInstanceUID for n in os.listdir(recv)}
        check("the archive got both outputs after the restart", len(sops) == 2, f"{len(sops)} distinct instances")
        to_pacs = [e for e in node.events("delivered") if e["destination"] == "pacs"]
        check("the PACS, marked done before the kill, was not sent to again", len(to_pacs) == 1, f"{len(to_pacs)}")
    finally:
        node.stop()
        orthanc.stop()
        slow.terminate()
        slow.wait()


def case_pacs_down(a, work):
    ct, ct2 = os.path.join(work, "ct"), os.path.join(work, "ct2")
    nh.make_series(ct)
    study2, _, _ = nh.make_series(ct2, seed=9)
    orthanc, node = pacs_and_node(a, work, delivery={"attempts": 2, "first_delay_s": 0.2, "max_delay_s": 0.2,
                                                    "timeout_s": 5})
    try:
        if not node.start():
            return
        nh.storescu(node.port, nh.files_of(ct))
        dead = wait_for("the job in the dead letters", lambda: node.jobs("dead"), timeout=60)
        if dead:
            with open(os.path.join(node.spool, "dead", dead[0], "reason.txt")) as f:
                reason = f.read()
            check("after 2 tries: dead/JOB/reason.txt says why", "not delivered after 2 tries" in reason
                  and "ORTHANC" in reason and os.path.exists(os.path.join(node.spool, "dead", dead[0], "seg.dcm")),
                  reason.strip()[:160])
        node.terminate()
        with open(node.cfg) as f:
            cfg = json.load(f)
        cfg["delivery"] = {"attempts": 50, "first_delay_s": 0.3, "max_delay_s": 0.5, "timeout_s": 5}
        with open(node.cfg, "w") as f:
            json.dump(cfg, f)
        if not node.start():
            return
        nh.storescu(node.port, nh.files_of(ct2))
        wait_for("two failed tries", lambda: len(node.events("delivery_failed")) >= 4, timeout=60)
        if not orthanc.start():
            return
        got = wait_for("delivered once the PACS is back", lambda: delivered_to(orthanc, study2), timeout=60)
        check("the PACS back: SEG and RTSTRUCT delivered", got and len(got["SEG"]) == 1 and len(got["RTSTRUCT"]) == 1)
        check("the dead letter stays dead (not sent)", len(orthanc.get("/studies") or []) == 1)
    finally:
        node.stop()
        orthanc.stop()


def case_full_spool(a, work):
    ct = os.path.join(work, "ct")
    nh.make_series(ct)
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model, limits={"spool_bytes": 40000},
                   destinations=[{"name": "pacs", "ae_title": "PACS", "host": "127.0.0.1", "port": nh.free_port()}])
    try:
        if not node.start():
            return
        r = nh.storescu(node.port, nh.files_of(ct))
        refused = r.stdout.count("Received Store Response (Refused: OutOfResources)")
        kept = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(node.spool, "incoming")) for f in fs]
        check("over the quota: C-STORE answered Out of Resources (0xA700)", refused > 0 and len(kept) < 16,
              f"{len(kept)} kept, {refused} refusal lines from storescu")
        whole = all(len(pydicom.dcmread(p).pixel_array.ravel()) == 48 * 40 for p in kept)
        check("every instance kept is whole; tmp/ empty", whole and not os.listdir(os.path.join(node.spool, "tmp")))
        logged = node.events("store_refused")
        check("refusals logged with status 0xA700 and the quota", logged and logged[0]["status"] == "0xA700"
              and "quota" in logged[0]["reason"], str(logged[:1])[:160])
        check("the node still answers", nh.echo(node.port) and node.proc.poll() is None)
        node.terminate()
        # an instance over limits.instance_bytes: its association ends, nothing of it kept
        shutil.rmtree(node.spool)
        with open(node.cfg) as f:
            cfg = json.load(f)
        cfg["limits"] = {"instance_bytes": 2000}
        with open(node.cfg, "w") as f:
            json.dump(cfg, f)
        if not node.start():
            return
        r = nh.storescu(node.port, nh.files_of(ct)[:1])
        kept = [f for _, _, fs in os.walk(os.path.join(node.spool, "incoming")) for f in fs]
        check("over limits.instance_bytes: refused, nothing kept, still answering",
              r.returncode != 0 and not kept and nh.echo(node.port), r.stdout.strip()[-120:])
    finally:
        node.stop()


def case_refused(a, work):
    ct = os.path.join(work, "ct")
    nh.make_series(ct)
    many = os.path.join(work, "many")
    nh.make_series(many, slices=40, seed=13)
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model, limits={"associations": 1},
                   callers=[{"ae_title": "SCANNER"}, {"ae_title": "REMOTE", "host": "10.11.12.13"}],
                   destinations=[{"name": "pacs", "ae_title": "PACS", "host": "127.0.0.1", "port": nh.free_port()}])
    try:
        if not node.start():
            return
        cases = [("INTRUDER", "SWINRUN", "not on the allow-list"), ("REMOTE", "SWINRUN", "allowed from 10.11.12.13"),
                 ("SCANNER", "OTHERNODE", "called AE title")]
        for calling, called, reason in cases:
            r = nh.storescu(node.port, nh.files_of(ct)[:2], aet=calling, called=called)
            logged = [e for e in node.events("association_refused") if reason in e["reason"]]
            check(f"{calling} -> {called}: refused at association, '{reason}' logged",
                  r.returncode != 0 and "Association Rejected" in r.stdout and logged, r.stdout.strip()[-80:])
        kept = [f for _, _, fs in os.walk(os.path.join(node.spool, "incoming")) for f in fs]
        check("nothing received", not kept)
        # limits.associations 1: a second association while storescu sends is refused
        sender = nh.storescu(node.port, nh.files_of(many), wait=False)
        wait_for("the first association receiving", lambda: os.listdir(os.path.join(node.spool, "incoming")),
                 timeout=20, step=0.02)
        second = nh.echo(node.port)
        sender.wait()
        logged = [e for e in node.events("association_refused") if "associations busy" in e["reason"]]
        check("a second association over limits.associations 1: refused, logged; the first completes",
              not second and logged and sender.returncode == 0, f"storescu rc {sender.returncode}")
    finally:
        node.stop()


def case_malformed(a, work):
    bad, good = os.path.join(work, "bad"), os.path.join(work, "good")

    def shrink(name, ds):  # one slice of another size: not one volume
        if name.endswith("0005.dcm"):
            ds.Rows, ds.Columns = 20, 48
            ds.PixelData = ds.PixelData[: 20 * 48 * 2]
    nh.make_series(bad, edit=shrink)
    study_good, _, _ = nh.make_series(good, seed=11)
    orthanc, node = pacs_and_node(a, work)
    try:
        if not (orthanc.start() and node.start()):
            return
        nh.storescu(node.port, nh.files_of(bad))
        nh.storescu(node.port, nh.files_of(good))
        dead = wait_for("the malformed study in the dead letters", lambda: node.jobs("dead"), timeout=60)
        if dead:
            with open(os.path.join(node.spool, "dead", dead[0], "reason.txt")) as f:
                reason = f.read()
            check("dead/JOB/reason.txt names the problem", "mixed geometry" in reason, reason.strip()[:160])
            failed = node.events("failed")
            check("the failure logged (UIDs hashed)", failed and "mixed geometry" in failed[0]["reason"])
        got = wait_for("the good study delivered", lambda: delivered_to(orthanc, study_good), timeout=60)
        check("the good study unharmed: its SEG and RTSTRUCT in Orthanc", got and len(got["SEG"]) == 1)
    finally:
        node.stop()
        orthanc.stop()


def case_drain(a, work):
    big = os.path.join(work, "big")
    study, _, _ = nh.make_series(big, big=True)
    orthanc, node = pacs_and_node(a, work, threads=1, outputs=SEG_ONLY)
    try:
        if not (orthanc.start() and node.start()):
            return
        nh.storescu(node.port, nh.files_of(big))
        outbox = os.path.join(node.spool, "outbox")
        wait_for("a segmentation running", lambda: [n for n in os.listdir(outbox) if n.startswith(".")], timeout=60,
                 step=0.02)
        node.proc.send_signal(signal.SIGTERM)
        time.sleep(1.5)  # the listening loop looks at the stop every second
        refused = not nh.echo(node.port)
        try:
            rc = node.proc.wait(120)
        except subprocess.TimeoutExpired:
            rc = None
        kinds = [e["event"] for e in node.events()]
        check("SIGTERM: no new association; the segmentation finished; exit 0",
              refused and rc == 0 and kinds.index("draining") < kinds.index("segmented") < kinds.index("stopped"),
              f"rc {rc}, {kinds[-5:]}")
        if not node.start():
            return
        exactly_once(orthanc, node, [study], "drained, then restarted", ("SEG",))
    finally:
        node.stop()
        orthanc.stop()


def multi_label_bundle(work):
    """A bundle whose post-processing takes each channel's sigmoid (its masks overlap)."""
    sys.path.insert(0, os.path.join(HERE, "..", "formats", "dicom"))
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
    import multi_label_test
    bundle = os.path.join(work, "multi_label_bundle")
    multi_label_test.sigmoid_bundle(bundle)
    return bundle


def option_checkpoint(work):
    """A state dict that needs norm_groups 3, normalize false and merge order pre15."""
    folder = os.path.join(work, "option_ckpt")
    if not os.path.exists(os.path.join(folder, "logits.npy")):
        subprocess.run([sys.executable, os.path.join(HERE, "..", "weights", "make_option_checkpoint.py"), folder],
                       check=True)
    return os.path.join(folder, "model.pt")


def case_config(a, work):
    base = {"ae_title": "SWINRUN", "port": 11112, "spool": os.path.join(work, "spool"), "model": a.model,
            "callers": [{"ae_title": "SCANNER"}],
            "destinations": [{"name": "pacs", "ae_title": "PACS", "host": "127.0.0.1", "port": 4242}]}
    bad = [("not JSON", "{\"port\": ", "not JSON"),
           ("unknown key", dict(base, prot=1), "unknown key \"prot\""),
           ("port", dict(base, port=70000), "port takes a port 1..65535, not 70000"),
           ("AE title", dict(base, ae_title="A" * 17), "ae_title takes an AE title"),
           ("no callers", {k: v for k, v in base.items() if k != "callers"}, "\"callers\" is required"),
           ("size", dict(base, limits={"spool_bytes": "12Q"}), "limits.spool_bytes takes a size"),
           ("destination", dict(base, destinations=[{"name": "x", "ae_title": "P", "host": "h"}]),
            "destinations[0] needs name, ae_title, host and port"),
           ("caller host", dict(base, callers=[{"ae_title": "S", "host": "a b"}]), "callers[0].host takes a host"),
           ("cube", dict(base, cube=[96, 96, 100]), "cube takes three multiples of 32"),
           ("nothing to send", dict(base, outputs={"seg": "none", "rtstruct": False}), "nothing to send"),
           ("no model", dict(base, model=os.path.join(work, "none.onnx")), "none.onnx"),
           ("memory limit", dict(base, mem_limit="1M", workers=2),
            "mem_limit 1.0 MiB gives each of the 2 worker(s) 0.5 MiB, and a context at cube"),
           ("STOW-RS URL", dict(base, destinations=[{"name": "w", "kind": "stowrs", "url": "ftp://h/x"}]),
            "destinations[0].url takes an http:// or https:// URL"),
           ("STOW-RS with a port", dict(base, destinations=[{"name": "w", "kind": "stowrs", "url": "http://h/x",
                                                            "port": 104}]), "(stowrs) takes name, url, tls, user"),
           ("credentials over http to another machine", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "http://pacs.example.org/dw", "token_file": "/t"}]),
            "credentials go over https only"),
           ("a user without password_file", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "user": "u"}]), "user and password_file together"),
           ("oauth's secret over http to another machine", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "oauth": {
                   "token_url": "http://login.example.org/token", "client_id": "c", "client_secret_file": "/s"}}]),
            "oauth.token_url: the client secret goes over https only"),
           ("oauth without client_id", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "oauth": {
                   "token_url": "https://login.example.org/token", "client_secret_file": "/s"}}]),
            "oauth needs token_url, client_id and client_secret_file"),
           ("oauth and a token file", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "token_file": "/t", "oauth": {
                   "token_url": "https://login.example.org/token", "client_id": "c", "client_secret_file": "/s"}}]),
            "token_file (a bearer token) or oauth"),
           ("a password and a token", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "user": "u", "password_file": "/p",
                "token_file": "/t"}]), "one of user and password_file"),
           ("https unverified", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "tls": {"verify_peer": False}}]),
            "an https destination is always verified"),
           ("tls on an http url", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "http://h/dw", "tls": {"ca": "/ca.pem"}}]),
            "tls is for an https:// url"),
           ("a missing password file", dict(base, destinations=[
               {"name": "w", "kind": "stowrs", "url": "https://h/dw", "user": "u",
                "password_file": os.path.join(work, "none.pw")}]), "destinations[0].password_file"),
           ("a label map SEG of a multi-label model", dict(base, model=multi_label_bundle(work),
                                                            outputs={"seg": "labelmap"}), "set outputs.seg to"),
           ("merge order", dict(base, merge_order="1.4"), "merge_order takes \"v15\", \"pre15\" or \"v2\""),
           ("bfloat16 on CUDA, in the configuration's words", dict(base, backend="cuda", precision="bf16"),
            "use \"precision\" fp32 or fp16, or \"backend\" cpu"),
           ("normalize", dict(base, normalize="no"), "normalize takes true or false"),
           ("groups", dict(base, norm_groups=0), "norm_groups takes an integer 1..4096"),
           ("groups the checkpoint's channels refuse", dict(base, model=option_checkpoint(work), norm_groups=5,
                                                             cube=[32, 32, 32]), "5 norm groups do not divide"),
           ("a checkpoint without a cube", dict(base, model=option_checkpoint(work)), "set \"cube\": [D, H, W]")]
    for what, cfg, want in bad:
        p = os.path.join(work, "bad.json")
        with open(p, "w") as f:
            f.write(cfg if isinstance(cfg, str) else json.dumps(cfg))
        r = subprocess.run([a.swinrun, "serve", p, "--check"], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        check(f"config {what}: exit 2, one line", r.returncode == 2 and len(lines) == 1 and want in r.stderr,
              r.stderr.strip()[:140])
    p = os.path.join(work, "good.json")
    with open(p, "w") as f:
        json.dump(base, f)
    r = subprocess.run([a.swinrun, "serve", p, "--check"], capture_output=True, text=True)
    check("a good configuration: --check exits 0", r.returncode == 0 and "ready" in r.stdout, r.stderr[-160:])
    # a checkpoint that cannot say how it was built: the load options reach the loader
    opts = dict(merge_order="pre15", normalize=False, norm_groups=3, cube=[32, 32, 32])
    for what, cfg, want in (("with the load options", dict(base, model=option_checkpoint(work), **opts),
                             "group norm (3 groups), merging (MONAI < 1.5 order"),
                            ("without them", dict(base, model=option_checkpoint(work), cube=[32, 32, 32]),
                             "instance norm, merging (MONAI >= 1.5 order), normalize true")):
        with open(p, "w") as f:
            json.dump(cfg, f)
        r = subprocess.run([a.swinrun, "serve", p, "--check"], capture_output=True, text=True)
        want_normalize = "normalize false" if "norm_groups" in cfg else "normalize true"
        check(f"a checkpoint {what}: --check says {want}", r.returncode == 0 and want in r.stdout
              and want_normalize in r.stdout,
              (r.stdout + r.stderr)[-200:])
    r = subprocess.run([a.swinrun, "serve", "--help"], capture_output=True, text=True)
    check("swinrun serve --help", r.returncode == 0 and "--check" in r.stdout and "--status" in r.stdout)


def openssl(work, *args):
    subprocess.run(["openssl", *args], cwd=work, check=True, capture_output=True)


def issue_certificate(work, name, ca):
    """NAME.key and NAME.pem (CN=NAME) signed by ca, for 127.0.0.1 and localhost but elsewhere."""
    names = "DNS:pacs.elsewhere.test" if name == "elsewhere" else "IP:127.0.0.1,DNS:localhost"
    openssl(work, "req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", f"/CN={name}", "-keyout",
            f"{name}.key", "-out", f"{name}.csr", "-addext", f"subjectAltName={names}")
    openssl(work, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-sha256", "-days", "2", "-out", f"{name}.pem", "-copy_extensions", "copyall")


def make_certificates(work):
    """ca (signs node, scanner, archive, elsewhere, revoked) and rogue_ca (signs rogue): NAME.key /
    NAME.pem in work, each for 127.0.0.1 and localhost (subjectAltName: what an https client
    checks) but elsewhere, for pacs.elsewhere.test only; ca.crl: ca's revocation list, revoked in it."""
    for ca in ("ca", "rogue_ca"):
        openssl(work, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", f"/CN=test {ca}",
                "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, ca in (("node", "ca"), ("scanner", "ca"), ("archive", "ca"), ("rogue", "rogue_ca"), ("elsewhere", "ca"),
                     ("revoked", "ca")):
        issue_certificate(work, name, ca)
    with open(os.path.join(work, "ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\n"
                "default_crl_days = 2\n")
    open(os.path.join(work, "index.txt"), "w").close()
    with open(os.path.join(work, "crlnumber"), "w") as f:
        f.write("01\n")
    openssl(work, "ca", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-revoke", "revoked.pem")
    openssl(work, "ca", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-gencrl", "-out", "ca.crl")
    return lambda name: os.path.join(work, name)


def tls_args(p, who):
    return ["+tls", p(f"{who}.key"), p(f"{who}.pem"), "+cf", p("ca.pem")]


def case_tls(a, work):
    p = make_certificates(work)
    ct = os.path.join(work, "ct")
    study, _, _ = nh.make_series(ct)
    archive_port, recv = nh.free_port(), os.path.join(work, "archive")
    impostor_port, impostor_recv = nh.free_port(), os.path.join(work, "impostor")
    elsewhere_port, elsewhere_recv = nh.free_port(), os.path.join(work, "elsewhere")
    revoked_port, revoked_recv = nh.free_port(), os.path.join(work, "revoked")
    for d in (recv, impostor_recv, elsewhere_recv, revoked_recv):
        os.makedirs(d)
    node_tls = {"certificate": p("node.pem"), "private_key": p("node.key"), "ca": p("ca.pem"), "crl": p("ca.crl"),
                "verify_peer": True}

    def dest(name, port, **tls):
        return {"name": name, "ae_title": "ARCHIVE", "host": "127.0.0.1", "port": port, "tls": dict(node_tls, **tls)}
    # elsewhere's certificate names pacs.elsewhere.test only: "misnamed" (checked against its host,
    # 127.0.0.1) must not send to it, "named" (peer_name) must
    failing = ("impostor", "misnamed", "revoked_peer")
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model, tls=node_tls,
                   delivery={"attempts": 2, "first_delay_s": 0.2, "max_delay_s": 0.2, "timeout_s": 5},
                   destinations=[dest("archive", archive_port), dest("impostor", impostor_port),
                                 dest("misnamed", elsewhere_port), dest("named", elsewhere_port,
                                                                        peer_name="pacs.elsewhere.test"),
                                 dest("revoked_peer", revoked_port)])

    def storescp(who, folder, port):
        return subprocess.Popen(["storescp", "-aet", "ARCHIVE", "+tls", p(f"{who}.key"), p(f"{who}.pem"), "+cf",
                                 p("ca.pem"), "-od", folder, str(port)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    archive = storescp("archive", recv, archive_port)
    # a peer whose certificate the node's CA did not sign (it would take the node's: same CA file)
    impostor = storescp("rogue", impostor_recv, impostor_port)
    elsewhere = storescp("elsewhere", elsewhere_recv, elsewhere_port)
    revoked = storescp("revoked", revoked_recv, revoked_port)
    base = ["-to", "5", "-aet", "SCANNER", "-aec", "SWINRUN"]

    def echo(*tls):
        return subprocess.run(["echoscu", *base, *tls, "127.0.0.1", str(node.port)], capture_output=True, text=True)
    try:
        node.err = open(os.path.join(node.work, "node.stderr"), "ab")
        node.proc = subprocess.Popen([node.swinrun, "serve", node.cfg], stdout=node.err, stderr=subprocess.STDOUT)
        up = wait_for("the node answers C-ECHO over TLS",
                      lambda: node.proc.poll() is None and echo(*tls_args(p, "scanner")).returncode == 0, timeout=60)
        if not check("echoscu +tls with a certificate of the CA: C-ECHO answered", up):
            return
        r = subprocess.run(["storescu", *base, *tls_args(p, "scanner"), "127.0.0.1", str(node.port),
                            *nh.files_of(ct)], capture_output=True, text=True)
        check("storescu +tls: every instance stored", r.returncode == 0, r.stderr.strip()[-160:])
        refused_before = len(node.events("association_refused"))
        plain, anonymous = echo(), echo("+tla", "+cf", p("ca.pem"))
        rogue = echo("+tls", p("rogue.key"), p("rogue.pem"), "+cf", p("ca.pem"))
        revoked_caller = echo(*tls_args(p, "revoked"))
        check("no TLS, TLS without a certificate, a certificate of another CA, a revoked one (tls.crl): each refused",
              plain.returncode and anonymous.returncode and rogue.returncode and revoked_caller.returncode,
              f"rc {plain.returncode} {anonymous.returncode} {rogue.returncode} {revoked_caller.returncode}")
        logged = [e for e in node.events("association_refused")[refused_before:] if "TLS" in e["reason"]]
        check("the refused handshakes logged", len(logged) == 4, str([e["reason"] for e in logged])[:160])
        check("still answering over TLS", echo(*tls_args(p, "scanner")).returncode == 0)
        # the handshake runs in the listening thread: a silent peer holds it for timeout_s (5 s)
        # only. The bound sits halfway to DCMTK's 60 s, as the node's worker may be segmenting the
        # study just stored on the same cores meanwhile.
        with socket.create_connection(("127.0.0.1", node.port)):
            t0 = time.monotonic()
            held = echo("-to", "45", *tls_args(p, "scanner"))
            took = time.monotonic() - t0
        check("a peer connected and silent holds the listener for delivery.timeout_s, not DCMTK's 60 s",
              held.returncode == 0 and took < 30, f"{took:.1f} s")
        got = wait_for("SEG and RTSTRUCT in the archive over TLS", lambda: len(os.listdir(recv)) >= 2, timeout=60)
        sent = [pydicom.dcmread(os.path.join(recv, n)) for n in os.listdir(recv)] if got else []
        check("delivered over TLS to storescp +tls: the SEG and RT Structure Set of the study",
              sorted(d.Modality for d in sent) == ["RTSTRUCT", "SEG"] and all(d.StudyInstanceUID == study for d in sent)
              and node.events("delivered"), str([d.Modality for d in sent]))
        wait_for("the failing destinations given up", lambda: node.jobs("dead"), timeout=30)
        for name, folder, what in (("impostor", impostor_recv, "a peer whose certificate another CA signed"),
                                   ("misnamed", None, "a peer whose certificate names another host"),
                                   ("revoked_peer", revoked_recv, "a peer whose certificate tls.crl revokes")):
            failed = [e for e in node.events("delivery_failed") if e["destination"] == name]
            check(f"{what}: not sent to (2 failed tries, nothing received), the reason naming what is checked",
                  len(failed) == 2 and (folder is None or not os.listdir(folder))
                  and all("name 127.0.0.1 (tls.peer_name)" in e["reason"] for e in failed),
                  str([e["reason"] for e in failed[:1]])[:160])
        landed = [pydicom.dcmread(os.path.join(elsewhere_recv, n)).Modality for n in os.listdir(elsewhere_recv)]
        check("the same peer given as peer_name (the name its certificate carries): sent to, once",
              sorted(landed) == ["RTSTRUCT", "SEG"], str(landed))
        rc = node.terminate()
        check("SIGTERM: exit 0", rc == 0, f"rc {rc}")
    finally:
        node.stop()
        for peer in (archive, impostor, elsewhere, revoked):
            peer.terminate()
            peer.wait()
    # --check describes the lists: the fresh one, then the one past its nextUpdate (still exit 0:
    # the job refreshing it may be about to)
    described = []
    for name, times in (("fresh.crl", ()), ("old.crl", ("-crl_lastupdate", "20200101000000Z", "-crl_nextupdate",
                                                         "20200102000000Z"))):
        openssl(work, "ca", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-gencrl", *times, "-out", name)
        shutil.copy(p(name), p("ca.crl"))
        r = subprocess.run([a.swinrun, "serve", node.cfg, "--check"], capture_output=True, text=True)
        described.append((r.returncode, [ln for ln in r.stdout.splitlines() if ln.startswith("tls.crl: ")]))
    check("serve --check: tls.crl's lists and their next update, PASSED once past it",
          described[0][0] == 0 and described[1][0] == 0 and len(described[0][1]) == 1
          and described[0][1][0].startswith("tls.crl: 1 list, the soonest next update ")
          and "PASSED" not in described[0][1][0]
          and described[1][1] == ["tls.crl: 1 list, the soonest next update 2020-01-02T00:00:00Z: PASSED, peers are "
                                  "refused until a newer list replaces it"], str(described)[:300])
    # the files, checked at start
    with open(p("garbage.pem"), "w") as f:
        f.write("not a key\n")
    bad = [("a missing key", dict(node_tls, private_key=p("none.key")), "tls.private_key " + p("none.key") + ": No such"),
           ("a key that is not the certificate's", dict(node_tls, private_key=p("scanner.key")), "is not private_key"),
           ("not a key", dict(node_tls, private_key=p("garbage.pem")), "not an unencrypted PEM private key"),
           ("a CA file without a certificate", dict(node_tls, ca=p("garbage.pem")), "tls.ca"),
           ("verify_peer without ca", {k: v for k, v in node_tls.items() if k != "ca"}, "tls.verify_peer needs ca"),
           ("a destination's missing certificate", None, "destinations[0].tls.certificate"),
           ("a CRL file without a CRL", dict(node_tls, crl=p("garbage.pem")), "tls.crl " + p("garbage.pem")),
           # a certificate in the crl file must not become a trusted CA
           ("a CRL file holding another CA's certificate, no list", dict(node_tls, crl=p("rogue_ca.pem")),
            "tls.crl " + p("rogue_ca.pem") + ": no PEM certificate revocation list in it"),
           ("peer_name on the listening side", dict(node_tls, peer_name="scanner"), 'unknown key "peer_name" in tls'),
           ("crl without verify_peer", dict(node_tls, verify_peer=False), "tls.crl is checked only with verify_peer")]
    with open(node.cfg) as f:
        good = json.load(f)
    for what, tls, want in bad:
        cfg = json.loads(json.dumps(good))
        if tls is None:
            cfg["destinations"][0]["tls"]["certificate"] = p("none.pem")
        else:
            cfg["tls"] = tls
        path = os.path.join(work, "bad.json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        r = subprocess.run([a.swinrun, "serve", path, "--check"], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        check(f"tls: {what}: exit 2, one line", r.returncode == 2 and len(lines) == 1 and want in r.stderr,
              r.stderr.strip()[:160])


def case_stowrs(a, work):
    if not os.path.exists(nh.DICOMWEB_PLUGIN):
        check(f"Orthanc's DICOMweb plugin ({nh.DICOMWEB_PLUGIN}; Debian: orthanc-dicomweb)", False)
        return
    ct = os.path.join(work, "ct")
    study, series, _ = nh.make_series(ct)
    orthanc = nh.Orthanc(os.path.join(work, "orthanc"), {}, dicomweb=True)
    web = f"http://127.0.0.1:{orthanc.http}"
    node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model,
                   delivery={"attempts": 2, "first_delay_s": 0.2, "max_delay_s": 0.2, "timeout_s": 5},
                   destinations=[{"name": "web", "kind": "stowrs", "url": web + "/dicom-web/"},
                                 {"name": "wrong", "kind": "stowrs", "url": web + "/no-dicom-web"}])
    try:
        if not (orthanc.start() and node.start()):
            return
        nh.storescu(node.port, nh.files_of(ct))
        dead = wait_for("the job in the dead letters (the wrong URL)", lambda: node.jobs("dead"), timeout=60)
        got = delivered_to(orthanc, study)
        check("STOW-RS to Orthanc's DICOMweb plugin: its SEG and RT Structure Set, once",
              got and len(got.get("SEG", [])) == 1 and len(got.get("RTSTRUCT", [])) == 1,
              str({k: len(v) for k, v in (got or {}).items()}))
        if got:
            d = orthanc.instance(got["SEG"][0])
            want = nh.derived_uid(nh.model_seed(a.model), series, f"{d.SOPClassUID} instance")
            check("the SEG stored is the node's (its derived SOPInstanceUID, the CT's study)",
                  d.SOPInstanceUID == want and d.StudyInstanceUID == study)
        failed = [e for e in node.events("delivery_failed") if e["destination"] == "wrong"]
        to_web = [e for e in node.events("delivered") if e["destination"] == "web"]
        check("a URL answering 404: 2 tries logged with the status; the first destination sent to once",
              len(failed) == 2 and "HTTP 404" in failed[0]["reason"] and len(to_web) == 1,
              str([e["reason"] for e in failed[:1]])[:160])
        if dead:
            with open(os.path.join(node.spool, "dead", dead[0], "reason.txt")) as f:
                reason = f.read()
            check("dead/JOB/reason.txt: the URL and the status", "no-dicom-web/studies" in reason
                  and "HTTP 404" in reason, reason.strip()[:160])
        node.terminate()
        # a server that answers 200 but lists one instance as failed: not delivered
        ct2 = os.path.join(work, "ct2")
        nh.make_series(ct2, seed=8)
        stub, got = stow_server()
        with open(node.cfg) as f:
            cfg = json.load(f)
        cfg["destinations"] = [{"name": "partial", "kind": "stowrs", "url": f"http://127.0.0.1:{stub.server_port}/dw"}]
        with open(node.cfg, "w") as f:
            json.dump(cfg, f)
        if not node.start():
            return
        nh.storescu(node.port, nh.files_of(ct2))
        wait_for("the partial server given up", lambda: len(node.jobs("dead")) == 2, timeout=60)
        failed = [e for e in node.events("delivery_failed") if e["destination"] == "partial"]
        check("HTTP 200 listing a failed instance: a failed try, 'FailureReason 0xA700' logged",
              len(failed) == 2 and "1 of 2 instances stored, 1 failed (FailureReason 0xA700)" in failed[0]["reason"]
              and not [e for e in node.events("delivered") if e["destination"] == "partial"],
              str([e["reason"] for e in failed[:1]])[:160])
        check("the request: multipart/related, one application/dicom part per output (SEG, RTSTRUCT)",
              got and all(sorted(r) == ["RTSTRUCT", "SEG"] for r, _, _ in got), str(got)[:120])
        stub.shutdown()
    finally:
        node.stop()
        orthanc.stop()


def send_json(handler, code, obj, content_type):
    """A JSON answer of status code from an http.server handler."""
    data = json.dumps(obj).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def serve_http(handler_class, ssl_context=None):
    """handler_class, quiet, on a free loopback port (over TLS with ssl_context) in a daemon thread;
    the caller's finally shuts it down."""
    import http.server
    import threading
    handler_class.log_message = lambda self, *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    if ssl_context:
        server.socket = ssl_context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stow_server(store_all=False, token=None, ssl_context=None):
    """A STOW-RS server on a free port that reads each request's parts with pydicom and answers
    200 with the first instance stored and the second failed (0xA700), or all stored
    (store_all); with token (a list of one, which the test may change): 401 unless the request
    carries `Authorization: Bearer token[0]`; over TLS with ssl_context. Returns (server, per
    request: (the parts' modalities, its Authorization header, the client certificate's CN))."""
    import http.server
    import io
    got = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            ctype = self.headers["Content-Type"]
            body = self.rfile.read(int(self.headers["Content-Length"]))
            auth = self.headers.get("Authorization")
            peer = self.connection.getpeercert() if ssl_context else None
            cn = dict(x[0] for x in peer["subject"]).get("commonName") if peer else None
            boundary = ctype.split("boundary=")[1].strip('"').encode()
            parts = [p for p in body.split(b"--" + boundary)[1:-1]]
            dss = [pydicom.dcmread(io.BytesIO(p.split(b"\r\n\r\n", 1)[1][:-2])) for p in parts
                   if b"Content-Type: application/dicom" in p.split(b"\r\n\r\n", 1)[0]]
            got.append(([d.Modality for d in dss], auth, cn))
            if token and auth != "Bearer " + token[0]:
                self.send_response(401)
                self.send_header("WWW-Authenticate", "Bearer")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return

            def ref(d, extra=None):
                item = {"00081150": {"vr": "UI", "Value": [str(d.SOPClassUID)]},
                        "00081155": {"vr": "UI", "Value": [str(d.SOPInstanceUID)]}}
                return dict(item, **(extra or {}))
            stored = dss if store_all else dss[:1]
            answer = {"00081199": {"vr": "SQ", "Value": [ref(d) for d in stored]},
                      "00081198": {"vr": "SQ", "Value": [ref(d, {"00081197": {"vr": "US", "Value": [0xA700]}})
                                                         for d in dss[len(stored):]]}}
            send_json(self, 200, answer, "application/dicom+json")
    return serve_http(Handler, ssl_context), got


def token_server(client_id, secret, lifetime_s, newest):
    """An OAuth 2 token endpoint on a free loopback port (client credentials, client_secret_post):
    each good request gets a new access token oauth-N that lives lifetime_s, kept as newest[0]
    before it is answered; a wrong client 401 invalid_client. Returns (server, the tokens issued,
    in order)."""
    import http.server
    import urllib.parse
    issued = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
            good = (form.get("grant_type") == ["client_credentials"] and form.get("client_id") == [client_id]
                    and form.get("client_secret") == [secret] and form.get("scope") == ["dicom.write"])
            if good:
                issued.append(f"oauth-{len(issued) + 1}")
                newest[0] = issued[-1]
                answer, code = {"access_token": issued[-1], "token_type": "Bearer", "expires_in": lifetime_s}, 200
            else:
                answer, code = {"error": "invalid_client", "error_description": "bad client credentials"}, 401
            send_json(self, code, answer, "application/json")
    return serve_http(Handler), issued


def case_stowrs_auth(a, work):
    if not os.path.exists(nh.DICOMWEB_PLUGIN):
        check(f"Orthanc's DICOMweb plugin ({nh.DICOMWEB_PLUGIN}; Debian: orthanc-dicomweb)", False)
        return
    import ssl
    p = make_certificates(work)
    for name, text in (("password", "s3cret-pw\n"), ("wrong", "guessed-pw\n"), ("token", "tok-one\n"),
                       ("client_secret", "c-s3cret\n")):
        with open(p(name), "w") as f:
            f.write(text)
    ct = os.path.join(work, "ct")
    study, _, _ = nh.make_series(ct)
    orthanc = nh.Orthanc(os.path.join(work, "orthanc"), {}, dicomweb=True, users={"swinrun": "s3cret-pw"})
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(p("archive.pem"), p("archive.key"))
    ctx.load_verify_locations(p("ca.pem"))
    ctx.verify_mode = ssl.CERT_REQUIRED  # mutual TLS: the node's certificate, signed by ca
    token = ["tok-one"]
    stub, got = stow_server(store_all=True, token=token, ssl_context=ctx)
    # an https server whose certificate ca.crl revokes
    revoked_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    revoked_ctx.load_cert_chain(p("revoked.pem"), p("revoked.key"))
    revoked_stub, revoked_got = stow_server(store_all=True, token=token, ssl_context=revoked_ctx)
    # OAuth 2 client credentials: tokens of 2 s, the STOW-RS server taking only the newest
    newest = [None]
    tokens, issued = token_server("swinrun-node", "c-s3cret", 2, newest)
    oauth_stub, oauth_got = stow_server(store_all=True, token=newest)

    def oauth_dest(name, secret):
        return {"name": name, "kind": "stowrs", "url": f"http://127.0.0.1:{oauth_stub.server_port}/dw",
                "oauth": {"token_url": f"http://127.0.0.1:{tokens.server_port}/token", "client_id": "swinrun-node",
                          "client_secret_file": p(secret), "scope": "dicom.write"}}
    node = None
    try:
        web, secure = f"http://127.0.0.1:{orthanc.http}/dicom-web", f"https://127.0.0.1:{stub.server_port}/dw"
        node = nh.Node(a.swinrun, os.path.join(work, "node"), a.model,
                       delivery={"attempts": 2, "first_delay_s": 0.2, "max_delay_s": 0.2, "timeout_s": 5},
                       destinations=[{"name": "web", "kind": "stowrs", "url": web, "user": "swinrun",
                                      "password_file": p("password")},
                                     {"name": "wrongpw", "kind": "stowrs", "url": web, "user": "swinrun",
                                      "password_file": p("wrong")},
                                     {"name": "mtls", "kind": "stowrs", "url": secure, "token_file": p("token"),
                                      "tls": {"certificate": p("node.pem"), "private_key": p("node.key"),
                                              "ca": p("ca.pem")}},
                                     {"name": "nocert", "kind": "stowrs", "url": secure, "token_file": p("token"),
                                      "tls": {"ca": p("ca.pem")}},
                                     {"name": "revokedweb", "kind": "stowrs", "token_file": p("token"),
                                      "url": f"https://127.0.0.1:{revoked_stub.server_port}/dw",
                                      "tls": {"ca": p("ca.pem"), "crl": p("ca.crl")}},
                                     oauth_dest("oauth", "client_secret"), oauth_dest("oauthbad", "wrong")])
        if not (orthanc.start() and node.start()):
            return
        nh.storescu(node.port, nh.files_of(ct))
        wait_for("the job in the dead letters (a wrong password, no client certificate)", lambda: node.jobs("dead"),
                 timeout=60)
        have = delivered_to(orthanc, study)
        check("HTTP Basic to Orthanc (its users on): the SEG and RT Structure Set, once",
              have and len(have.get("SEG", [])) == 1 and len(have.get("RTSTRUCT", [])) == 1,
              str({k: len(v) for k, v in (have or {}).items()}))
        failed = {d: [e["reason"] for e in node.events("delivery_failed") if e["destination"] == d]
                  for d in ("wrongpw", "nocert")}
        check("a wrong password: 2 tries, HTTP 401, 'refused the credentials'", len(failed["wrongpw"]) == 2
              and "HTTP 401" in failed["wrongpw"][0] and "refused the credentials" in failed["wrongpw"][0],
              str(failed["wrongpw"][:1])[:200])
        check("https without the client certificate: 2 tries, refused in the handshake, no request reached the "
              "server", len(failed["nocert"]) == 2 and all(cn == "node" for _, _, cn in got),
              str(failed["nocert"][:1])[:200])
        revoked_failed = [e["reason"] for e in node.events("delivery_failed") if e["destination"] == "revokedweb"]
        check("https to a server whose certificate tls.crl revokes: 2 tries, no request reached it",
              len(revoked_failed) == 2 and not revoked_got, str(revoked_failed[:1])[:200])
        check("mutual TLS and a bearer token: one request, the node's certificate, 'Bearer tok-one', both outputs",
              [(sorted(m), auth, cn) for m, auth, cn in got] == [(["RTSTRUCT", "SEG"], "Bearer tok-one", "node")],
              str(got)[:200])
        dead = node.jobs("dead")
        reason = open(os.path.join(node.spool, "dead", dead[0], "reason.txt")).read() if dead else ""
        check("destinations apart: the ones after a failing one delivered, dead/JOB/reason.txt names those given up",
              "wrongpw: not delivered after 2 tries" in reason and "nocert: not delivered after 2 tries" in reason
              and not re.search(r"(^|\s)(web|mtls):", reason), reason.strip()[:240])
        # the token rotated in its file: the next delivery carries the new one
        with open(p("token"), "w") as f:
            f.write("tok-two\n")
        token[0] = "tok-two"
        ct2 = os.path.join(work, "ct2")
        nh.make_series(ct2, seed=9)
        nh.storescu(node.port, nh.files_of(ct2))
        wait_for("the second study delivered to the TLS server", lambda: len(got) == 2, timeout=60)
        check("the token file re-read at each delivery: the second request carries 'Bearer tok-two'",
              len(got) == 2 and got[1][1] == "Bearer tok-two", str([g[1] for g in got]))
        wait_for("both jobs settled", lambda: len(node.jobs("dead")) == 2, timeout=60)
        bad = [e["reason"] for e in node.events("delivery_failed") if e["destination"] == "oauthbad"]
        check("OAuth 2 client credentials: a token per 2 s life, each study sent once with the token then current",
              [(sorted(m), auth) for m, auth, _ in oauth_got] == [(["RTSTRUCT", "SEG"], "Bearer oauth-1"),
                                                                  (["RTSTRUCT", "SEG"], "Bearer oauth-2")],
              f"{[(m, auth) for m, auth, _ in oauth_got]} issued {issued}")
        check("a wrong client secret: the token endpoint's 401 invalid_client in the reason, nothing sent",
              len(bad) == 4 and "HTTP 401: invalid_client (bad client credentials)" in bad[0], str(bad[:1])[:200])
        with open(node.log) as f:
            log = f.read()
        check("no password, client secret or token in the event log",
              not any(x in log for x in ("s3cret", "guessed", "tok-", "oauth-")))
    finally:
        if node:
            node.stop()
        orthanc.stop()
        stub.shutdown()
        revoked_stub.shutdown()
        oauth_stub.shutdown()
        tokens.shutdown()


LOAD_STUDIES, LOAD_SENDERS, LOAD_WORKERS, LOAD_SLICES = 20, 4, 2, 32
# What the node holds beyond the CLI's one segmentation: DCMTK's network buffers and a malloc
# arena for each of its threads (receivers, workers, delivery, scheduler)
LOAD_MARGIN = 64 << 20


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return int([line.split()[1] for line in f if line.startswith(key + ":")][0]) * 1024


def case_load(a, work):
    studies, folders = [], []
    for i in range(LOAD_STUDIES):
        folders.append(os.path.join(work, f"ct{i:02d}"))
        studies.append(nh.make_series(folders[-1], seed=100 + i, slices=LOAD_SLICES)[0])
    # the CLI on one of them: its peak RSS and plan, the reference of the node's bound
    cli_json = os.path.join(work, "cli.json")
    r = subprocess.run([a.swinrun, folders[0] + "/", os.path.join(work, "cli_seg.dcm"), "--rtstruct",
                        os.path.join(work, "cli_rt.dcm"), "--model", a.model, "--backend", "cpu", "--threads", "1",
                        "--json", cli_json], capture_output=True, text=True)
    if not check("the CLI segments one study (the reference)", r.returncode == 0, r.stderr[-200:]):
        return
    with open(cli_json) as f:
        cli = json.load(f)
    r = subprocess.run([a.swinrun, "plan", a.model, "--backend", "cpu", "--threads", "1", "--json", "-"],
                       capture_output=True, text=True)
    plan = json.loads(r.stdout)
    orthanc, node = pacs_and_node(a, work, threads=1, workers=LOAD_WORKERS)
    try:
        if not (orthanc.start() and node.start()):
            return
        per_sender = [folders[k::LOAD_SENDERS] for k in range(LOAD_SENDERS)]
        t0 = time.monotonic()
        senders = [nh.storescu(node.port, [f for d in mine for f in nh.files_of(d)], wait=False) for mine in per_sender]
        rcs = [s.wait() for s in senders]
        t_sent = time.monotonic()
        check(f"{LOAD_SENDERS} storescu senders at once: every instance stored", rcs == [0] * LOAD_SENDERS, str(rcs))
        want = 2 * LOAD_STUDIES

        def outputs():
            s = orthanc.get("/statistics")
            return s and s["CountInstances"] >= want and time.monotonic()
        t_done = wait_for(f"{want} outputs in Orthanc", outputs, timeout=90, step=0.1)
        exactly_once(orthanc, node, studies, f"{LOAD_STUDIES} studies from {LOAD_SENDERS} senders")
        st = orthanc.get("/statistics") or {}
        check("Orthanc holds exactly those outputs; no job failed, none dead",
              st.get("CountInstances") == want and st.get("CountStudies") == LOAD_STUDIES
              and not node.events("failed") and not node.jobs("dead") and len(node.events("done")) == LOAD_STUDIES,
              f"{st.get('CountInstances')} instances, {st.get('CountStudies')} studies, "
              f"{len(node.events('done'))} done")
        hwm = vm(node.proc.pid, "VmHWM")
        job = plan["arena_bytes"] + plan.get("context_bytes", 0) + cli["planned_pipeline_bytes"]
        assoc = LOAD_SENDERS * os.path.getsize(nh.files_of(folders[0])[0])
        bound = cli["peak_rss_bytes"] + (LOAD_WORKERS - 1) * job + assoc + LOAD_MARGIN
        mib = 1 << 20
        print(f"measured: {LOAD_STUDIES} studies of 48 x 40 x {LOAD_SLICES}, {LOAD_SENDERS} senders, "
              f"{LOAD_WORKERS} workers x 1 thread: sending {t_sent - t0:.1f} s, last instance sent to the last "
              f"output in Orthanc {t_done - t_sent if t_done else float('nan'):.1f} s; node peak RSS "
              f"{hwm / mib:.0f} MiB (bound {bound / mib:.0f} MiB: the CLI's peak {cli['peak_rss_bytes'] / mib:.0f} MiB "
              f"+ {LOAD_WORKERS - 1} x {job / mib:.1f} MiB + {assoc / 1024:.0f} KiB + {LOAD_MARGIN // mib} MiB)")
        check("the node's peak RSS within the bound", hwm <= bound, f"{hwm / mib:.0f} <= {bound / mib:.0f} MiB")
    finally:
        node.stop()
        orthanc.stop()


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("swinrun")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--only", choices=sorted(CASES), required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    t0 = time.monotonic()
    CASES[a.only](a, a.work)
    print(f"{a.only}: {time.monotonic() - t0:.1f} s")
    print("PASS" if nh.ok else "FAIL")
    return 0 if nh.ok else 1


if __name__ == "__main__":
    sys.exit(main())
