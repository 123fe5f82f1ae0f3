"""results.png: time per window and peak memory per configuration (and the whole-volume pairs when
measured), drawn from the results document with matplotlib."""
from __future__ import annotations

from report_md import MiB, machine_line


def chart(doc: dict, path: str) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [(c, e) for c, e in doc["configs"].items() if e["status"] != "skipped" and e.get("time_per_window")]
    if not rows:
        raise RuntimeError("no configuration ran")
    names = [c for c, _ in rows]
    palette = {"onnxruntime": "#1f77b4", "openvino": "#2ca02c", "pytorch": "#9467bd", "swinrun": "#ff7f0e"}
    colors = [palette.get(e["runtime"], "#7f7f7f") for _, e in rows]
    pv = doc.get("per_volume", {})
    vol = pv.get("pairs", []) if pv.get("measured") else []
    if vol:
        fig, axes = plt.subplots(1, 3, figsize=(18, 0.6 * len(rows) + 2.8), gridspec_kw={"width_ratios": [3, 3, 2]})
        ax1, ax2, ax3 = axes
    else:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 0.6 * len(rows) + 2.8))
    med = [e["time_per_window"]["median"] for _, e in rows]
    lo = [m - e["time_per_window"]["min"] for m, (_, e) in zip(med, rows)]
    hi = [e["time_per_window"]["max"] - m for m, (_, e) in zip(med, rows)]
    y = list(range(len(rows)))
    ax1.barh(y, med, xerr=[lo, hi], color=colors, capsize=4)
    ratio_of = {}
    for r in doc["ratios"]:
        ratio_of.setdefault(r["ort"], []).append(f"{r['swinrun'].replace('swinrun-cpu', 'sw').replace('-', ' ')} "
                                                 f"{r['time_ratio_median']:.2f}")
    for i, (c, e) in enumerate(rows):
        txt = f"{med[i]:.2f} s"
        if c in ratio_of:
            txt += "  (swinrun/this: " + ", ".join(ratio_of[c]) + ")"
        ax1.text(med[i] + hi[i], i, " " + txt, va="center", fontsize=8)
    from matplotlib.patches import Patch
    ax1.legend(handles=[Patch(color=palette[k], label=lab) for k, lab in
                        (("onnxruntime", "ONNX Runtime"), ("openvino", "OpenVINO"), ("pytorch", "PyTorch"),
                         ("swinrun", "swinrun")) if k in {e["runtime"] for _, e in rows}],
               fontsize=8, loc="lower right")
    ax1.set_yticks(y, names)
    ax1.invert_yaxis()
    ax1.set_xlabel("seconds per window (median; whiskers min-max)")
    ax1.set_title("time per window")
    ax1.set_xlim(0, max(m + h for m, h in zip(med, hi)) * 2.0)
    rss = [(e.get("peak_rss_bytes") or 0) / MiB for _, e in rows]
    base = [(e.get("rss_base_bytes") or 0) / MiB for _, e in rows]
    ax2.barh(y, rss, color=colors, label="peak RSS (process)")
    ax2.barh(y, base, color="none", edgecolor="black", hatch="//", label="base RSS (interpreter/libraries)")
    for i, (c, e) in enumerate(rows):
        pl = e.get("planned")
        if pl and pl.get("total_bytes"):
            ax2.plot([pl["total_bytes"] / MiB], [i], marker="D", color="black", linestyle="none",
                     label="swinrun planned (weights + arena)")
        ax2.text(rss[i], i, f" {rss[i]:,.0f} MiB", va="center", fontsize=9)
    h, l = ax2.get_legend_handles_labels()
    seen = {}
    for hh, ll in zip(h, l):
        seen.setdefault(ll, hh)
    ax2.legend(seen.values(), seen.keys(), fontsize=8, loc="lower right")
    ax2.set_yticks(y, names)
    ax2.invert_yaxis()
    ax2.set_xlabel("MiB")
    ax2.set_title("peak memory")
    ax2.set_xlim(0, max(rss) * 1.35)
    if vol:
        names3, vals3, cols3, rss3 = [], [], [], []
        for pr in vol:
            for who, key, col in ((pr["ort"] + " (MONAI+ORT)", "ort", "#1f77b4"), (pr["swinrun"], "swinrun", "#ff7f0e")):
                names3.append(who)
                vals3.append(pr[f"{key}_seconds"]["median"])
                rss3.append(pr[f"{key}_peak_rss_bytes"] / MiB)
                cols3.append(col)
        y3 = list(range(len(names3)))
        ax3.barh(y3, vals3, color=cols3)
        for i in y3:
            ax3.text(vals3[i], i, f" {vals3[i]:.1f} s, {rss3[i]:,.0f} MiB", va="center", fontsize=9)
        ax3.set_yticks(y3, names3)
        ax3.invert_yaxis()
        ax3.set_xlim(0, max(vals3) * 1.7)
        ax3.set_xlabel("seconds per volume (median; labels: peak RSS)")
        ax3.set_title(f"whole volume ({vol[0]['runs'][0]['windows']} windows)")
    m = doc["model"]
    f = m.get("feature_size")
    ortv = next((e.get("ort_version") for e in doc["configs"].values() if e.get("ort_version")), "")
    la = doc["load_before"].get("loadavg") or ["?"]
    fig.suptitle(f"Swin UNETR{f' f={f}' if f else ''}, window {'x'.join(map(str, m['cube']))}: swinrun vs ONNX Runtime "
                 f"{ortv}, OpenVINO, PyTorch (CPU threads: {doc['threads'] or 'all'}; {doc['runs']} runs after {doc['warmup']} warm-up)\n"
                 f"{machine_line(doc['machine'])}; load average {la[0]} at start - {doc['date_utc']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
