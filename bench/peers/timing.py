"""Summaries of measured seconds: median, min and max of a list, and the swinrun/peer ratios of the
rounds in which both ran back to back."""
from __future__ import annotations

import statistics


def stats(ts):
    if not ts:
        return None
    return {"median": statistics.median(ts), "min": min(ts), "max": max(ts), "n": len(ts)}


def pair_ratios(pairs: dict, results: dict) -> list:
    """Per (peer, swinrun configuration): the round ratios swinrun/peer and their median."""
    out = []
    for (o, sw), lst in pairs.items():
        rs = [ts / to for to, ts in lst]
        mo = results.get(o, {}).get("peak_rss_bytes")
        ms = results.get(sw, {}).get("peak_rss_bytes")
        out.append({"ort": o, "peer": o, "swinrun": sw,
                    "pairs": [{"ort_seconds": to, "peer_seconds": to, "swinrun_seconds": ts} for to, ts in lst],
                    "time_ratios": rs, "time_ratio_median": statistics.median(rs),
                    "peak_rss_ratio": (ms / mo) if (mo and ms) else None})
    return out
