#!/usr/bin/env python3
"""core/yaml.c against PyYAML's yaml.safe_load, which MONAI's ConfigParser calls on a YAML bundle.

    yaml_conformance.py YAML_DUMP

YAML_DUMP (tests/core/yaml_dump.c) writes what the reader makes of each file as JSON (a crash
fails the run). Three sets:
  written    documents of each construct the reader handles (block and flow collections, the
             scalar styles and their folding, YAML 1.1's types, anchors, merges, tags, markers)
             and ones PyYAML refuses: the same value as PyYAML's, or an error where it errs
  refused    what PyYAML reads but swinrun refuses on purpose (core/yaml.h): each with its reason
  generated  random configurations written by yaml.safe_dump in its styles (block, flow,
             canonical, narrow widths that fold scalars, 2-7 spaces of indentation)
  mutated    documents of both sets with characters inserted and deleted: never a value other
             than PyYAML's, never accepted where PyYAML errs, refused only for the reasons of
             core/yaml.h
Numbers are compared with their type (1 is not 1.0); a document PyYAML reads with a date or a
float key is left out of the comparison (JSON has neither).
"""
import datetime
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import yaml

DUMP = sys.argv[1]
WORK = tempfile.mkdtemp(prefix="yaml_conformance_")
fails = []

# the reasons core/yaml.h gives for refusing what PyYAML reads
DELIBERATE = ["anchor or tag on a mapping key", "on a key", "the tag ",
              "NUL character", "passes 64 bits", "not a character", "%TAG", "line breaks are not read",
              "'<<' key", "collection as a mapping key", "anchor or tag on an alias"]

WRITTEN = [
    # block collections, indentation, comments
    "a: 1\nb:\n  c: x\n  d:\n  - 1\n  - [2, 3]\ne: y\n", "- a\n-\n- c\n", "-\n  a: 1\n", "- - - x\n",
    "a:\n- 1\n- 2\nb: 3\n", "- a: 1\n  b: 2\n- c\n", "a:   # c\n  b\n", "# c\n---\n# d\na: 1\n# e\n...\n# f\n",
    "a: b # c\n", "a: b#c\n", "a: http://x.org/a?b=c#d\n", "'a': 1\n\"b\" : 2\n", "a: 1\n\n\n",
    # plain scalars: folding, continuation, indicators inside
    "plain: multi\n  line\n  # comment\n  more\n", "plain: a\n\n  b\n\n\n  c\n", "- a\n  - b\n", "a: -x\n",
    "a: $@network_def.to(@device)\n", "a: x, y\n", "a: [http://x:80/]\n", "a: {b: c:d}\n", "{a :1}\n",
    # quoted scalars
    "a: 'it''s'\n", "a: 'multi\n  line\n\n  para'\n", "a: \"q\n\n  r\"\n", "a: \"x\\ty\\u00e9\\U0001F600\"\n",
    "a: \"a\\\n   b\"\n", "a: \"\\e\\a\\b\\v\\f\\r\\/\\N\\_\\L\\P\"\n", "a: \" spaced \"\n", "a: ''\n", "\"x\"#c\n",
    # block scalars
    "a: |\n  x\n\n\n", "a: |+\n  x\n\n\n", "a: |-\n  lit\n", "a: >\n  x\n  y\n\n  z\n   w\n", "a: >-\n  f\n  t\n\n",
    "a: |2\n   x\n  y\n", "a: |\n\n\n  after blanks\n", "a: >\n  a\n    indented\n  b\n", "a: |\nb: 1\n",
    "a: | # c\n  y\n", "--- |\n  lit\n", "a: |2-\n   x\n", "a: |-2\n   x\n",
    # YAML 1.1 scalars
    "[yes, No, ON, off, true, FALSE, y, n, ~, null, Null, NULL, nULL, '']\n",
    "[0, 010, 00, 09, 0x1F, -0x1F, 0b101, +12_3, 0_, 1:30, 190:20:30, 1:60, -0, 123456789012345678901234567890]\n",
    "[1.5, 1., .5, -.5, 1e3, 1.0e3, 1.0e+3, 1.5E-2, 12e+3, 1_000.5_0, 1:30.5, .inf, -.Inf, .NaN, +.nan, 0.]\n",
    "a: 2001-12-14\n", "a: =\n", "a: '='\n", "a: 0x_\n",
    # flow collections
    "x: [a, [b, c], {d: e}]\n", "x: {a: [1, 2], b: {c: d}}\n", "x: {a: 1,\n  b: 2}\n", "x: [\n  1, # c\n  2\n]\n",
    "[1, 2,]\n", "{a: 1, b}\n", "{\"a\":1}\n", "[a: 1]\n", "x: [a: 1, b]\n", "{a\n: 1}\n", "[,1]\n", "{,}\n",
    "a: [1, 2\n", "a: {b: 1\n", "a: ]\n",
    # explicit keys, as PyYAML writes long and multi-line ones
    "? a\n: b\n", "? long key\n  folded\n: - x\n", "? 'q\n\n  k'\n: 1\nc: 2\n", "? x\n", "{? a: 1}\n",
    "[? a : b]\n", "a: {&x k: 1, !!str 2: b}\n", "? [a]\n: 1\n", "[a, b]: 1\n",
    # anchors, aliases, merges, tags
    "x: &r [96, 96, 96]\ny: *r\n", "a: &anc\n  b: 1\nc: *anc\n", "a: &e\nb: *e\n", "- &a\n  b: 1\n- *a\n",
    "base: &b {a: 1, b: 2}\nd:\n  <<: [*b, {a: 3, c: 4}]\n  b: 5\n", "x: {<<: {a: 1}, b: 2}\n", "\"<<\": 1\n",
    "x:\n  <<: 5\n", "a: *nope\n", "a: &s [*s]\n", "a: &a [1]\nb: &a 2\n", "x: &a !!int \"5\"\ny: *a\n",
    "a: !!float 1\n", "a: !!int \"0x1A\"\n", "a: !!bool \"yes\"\n", "a: !!null x\n", "!!str 1\n", "! 1\n",
    "! \"1\"\n", "a: !!str\nb: 1\n", "!!int 1.5\n", "!!map [1]\n", "!!seq [1]\n", "!!bool \"y\"\n",
    # documents, directives, errors PyYAML makes
    "", "---\n", "---\n...\n", "a: 1\n...\n...\n", "%YAML 1.1\n---\na: 1\n", "%YAML 1.1\na: 1\n", "a: 1\n---\nb: 2\n",
    "--- a: 1\n", "a: b: c\n", "k: v\n k2: v2\n", "a: - b\n", "a: 1\t\n", "a:\t1\n", "a: @x\n", "a: %m\n",
    "a: \"unterminated\n", "a: 'x' y\n", "a: [1] 2\n", "\ufeffa: 1\n", "a: é\né: [ü, 日本]\n", "a:\r\n  b: 1\r\n",
    "a: |\r\n  x\r\n  y\r\n", "a: b\rc: d\n", "a: x\x7f\n", "- a\n b\n", "a: 1\n  b: 2\n",
    "a:\n|\n x\n",
]
# what PyYAML reads but swinrun refuses on purpose (core/yaml.h), with the reason it gives
REFUSED = {"&a x: 1\n": "anchor or tag on a mapping key", "- &a : 1\n": "anchor or tag on a mapping key",
           "a: !!binary aGVsbG8=\n": "the tag !!binary", "\"\\x00\"\n": "NUL character",
           "a: \"\\uD800\"\n": "not a character", "%TAG ! tag:x,2000:\n---\na: 1\n": "%TAG",
           "a: 0x8000000000000000\n": "passes 64 bits", "x: [<<: {a: 1}]\n": "'<<' key",
           "a: \u2028\n": "line breaks are not read", "a: !!seq\n- 1\n": "the tag !!seq on a scalar"}


def norm(v):
    """PyYAML's value as json.loads reads core/yaml.c's: keys as json.dumps writes them."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(k, float) or isinstance(k, (datetime.date, datetime.datetime)):
                raise TypeError("float or date key")
            out["true" if k is True else "false" if k is False else "null" if k is None else str(k)] = norm(x)
        return out
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, (datetime.date, datetime.datetime)):
        raise TypeError("a date")
    return v


def same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def ours_all(docs):
    """yaml_dump's reading of each document: (value, None), or (None, its error)."""
    paths = []
    for i, doc in enumerate(docs):
        paths.append(os.path.join(WORK, f"doc{i}.yaml"))
        with open(paths[-1], "wb") as f:
            f.write(doc.encode("utf-8", "surrogatepass"))
    r = subprocess.run([DUMP] + paths, capture_output=True)
    lines = r.stdout.decode().split("\n")[:-1]
    if r.returncode or len(lines) != len(docs):
        sys.exit(f"yaml_dump exit {r.returncode} after {len(lines)} of {len(docs)} documents: "
                 f"{r.stderr.decode()[-500:]}")
    for p in paths:
        os.remove(p)
    return [(json.loads(line[3:]), None) if line.startswith("ok ") else (None, line[6:]) for line in lines]


def ours(doc):
    return ours_all([doc])[0]


def compare(doc, got, err):
    """'same', 'both-error', 'skip', 'deliberate' or a failure's text, of our reading (got, err)."""
    try:
        ref, ref_err = norm(yaml.safe_load(doc)), None
    except TypeError:
        return "skip"
    except Exception as e:  # PyYAML's scanner, parser, composer and constructor errors, and the ValueErrors
        ref, ref_err = None, f"{type(e).__name__}: {str(e).splitlines()[0]}"
    if ref_err and err:
        return "both-error"
    if ref_err:
        return f"accepted what PyYAML refuses ({ref_err}): {json.dumps(got)[:200]}"
    if err:
        if any(d in err for d in DELIBERATE):
            return "deliberate"
        return f"refused what PyYAML reads ({err}): {json.dumps(ref, default=str)[:200]}"
    return "same" if same(ref, got) else f"PyYAML {json.dumps(ref)[:300]} but read {json.dumps(got)[:300]}"


def run(name, docs):
    counts = {}
    for doc, (got, err) in zip(docs, ours_all(docs)):
        verdict = compare(doc, got, err)
        ok = verdict in ("same", "both-error", "skip", "deliberate")
        counts[verdict if ok else "failed"] = counts.get(verdict if ok else "failed", 0) + 1
        if not ok:
            fails.append(f"{name}: {doc!r:.300}: {verdict}")
    print(f"{name}: {len(docs)} documents, " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return counts


WORDS = ["a", "key", "yes", "No", "null", "~", "1.0", "1e3", "0x1F", "010", "1:30", "-", "- x", "a: b", "a #b", "#c",
         "@network_def", "$@net.to(@dev)", "%cfg#x", " lead", "trail ", "multi\nline", "tab\there", "é ü", "日本",
         '"q"', "'s'", "\\", "[x]", "{y}", "", "*a", "&b", "!t", "|", ">", "?", ":", ",", "x, y", "=", "<<",
         "a" * 90 + " " + "b" * 50, "long words " * 12, "end\n", "\nstart", "a\n\nb", "  ", "on", "OFF"]


def generated(rnd, n):
    def value(depth):
        r = rnd.random()
        if depth > 4 or r < 0.5:
            k = rnd.randrange(8)
            if k == 0:
                return rnd.randint(-10 ** 6, 10 ** 6)
            if k == 1:
                return rnd.choice([0.5, -1.25, 1e-5, 3.0, 1e20, float("inf"), -float("inf"), 123.456])
            if k == 2:
                return rnd.choice([True, False, None])
            return rnd.choice(WORDS)
        if r < 0.75:
            return [value(depth + 1) for _ in range(rnd.randrange(5))]
        return {rnd.choice(WORDS) if rnd.random() < 0.8 else rnd.randint(0, 99): value(depth + 1)
                for _ in range(rnd.randrange(5))}
    docs = []
    for _ in range(n):
        style = dict(default_flow_style=rnd.choice([False, True, None]), width=rnd.choice([10, 20, 80, 1000]),
                     indent=rnd.choice([2, 3, 4, 7]), allow_unicode=rnd.random() < 0.5,
                     explicit_start=rnd.random() < 0.3, explicit_end=rnd.random() < 0.2,
                     canonical=rnd.random() < 0.1, sort_keys=False)
        docs.append(yaml.safe_dump({"root": value(0)}, **style))
    return docs


def mutated(rnd, bases, n):
    pieces = [" ", "\n", ":", "-", "#", '"', "'", "[", "]", "{", "}", ",", "&a ", "*a", "!!str ", "? ", "|", ">",
              "\t", "  ", "\n  ", ": ", "- ", "<<: ", "\\", "...", "---", "!", "@", "%"]
    docs = []
    for _ in range(n):
        d = rnd.choice(bases)
        for _ in range(rnd.randint(1, 3)):
            p = rnd.randrange(len(d) + 1)
            d = d[:p] + d[p + 1:] if rnd.random() < 0.4 and d else d[:p] + rnd.choice(pieces) + d[p:]
        docs.append(d)
    return docs


def main():
    rnd = random.Random(20261201)
    run("written", WRITTEN)
    for doc, reason in REFUSED.items():
        yaml.safe_load(doc)
        got, err = ours(doc)
        if not err or reason not in err:
            fails.append(f"refused: {doc!r}: expected an error naming {reason!r}, got {err or json.dumps(got)}")
    print(f"refused: {len(REFUSED)} documents PyYAML reads, each refused with its reason")
    gen = generated(rnd, 200)
    run("generated", gen)
    run("mutated", mutated(rnd, WRITTEN + list(REFUSED) + gen[:40], 800))
    for f in fails[:30]:
        print("FAIL", f)
    if fails:
        print(f"{len(fails)} failed")
        sys.exit(1)
    print("all agree with PyYAML", yaml.__version__)


if __name__ == "__main__":
    main()
