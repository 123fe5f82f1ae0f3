#!/usr/bin/env python3
"""Checks which folder of the tree may include which, and that the README's layer table says the same.

    check_layers.py [--root DIR] [--readme FILE]   exit 0 when every rule holds, else 1
    check_layers.py --self-test [--root DIR]        plants violations in a copy of the tree; each must fail

The rules, each violation reported as file:line:

1. Layers. A source includes project headers of its own layer and of the layers ALLOWED (below)
   lists for it, nothing else; FOLDERS says which folder is which layer. Bottom up: core; ops
   (kernels/ own files); weights, cpu (kernels/cpu/), cuda (kernels/cuda/); runtime; fileio;
   formats (formats/ and its format folders); pipeline; node (apps/node/); cli (apps/cli/),
   triton (apps/triton/), python (apps/python/).
2. Formats. A format is one folder under formats/ (formats/nifti, formats/dicom) implementing
   the interface in formats/ own files (formats/format.h). A format's folder is included only
   by itself, by the sources of formats/ (formats/registry.c, the table of the formats) and
   by another format that writes this one's files (DICOM input, a NIfTI label map out; rule
   3 keeps two formats from using each other): not by the layers above (the pipeline never
   names DICOM), not by the interface headers.
3. No include cycle between folders (the folder of a source -> the folder of the header it
   includes), within one layer too; each edge of a cycle is reported with its first include.
   The registry's includes of the formats are no edge (the formats depend on formats/).
   Only the product is in this graph: not tests/, bench/, tools/, apps/triton/tests or
   apps/triton/fuzz.
4. No two modules of one folder call each other, nor do more in a cycle (a module: the files
   sharing a stem; module X calls Y when a source of X, X.c, includes Y.h): e.g.
   forward_cnn.c including inplace.h while inplace.c includes forward_cnn.h.
5. The README's layer table, between <!-- layers:begin --> and <!-- layers:end -->, with the
   columns | layer | folder | may include |, has one row per layer of rule 1 and the same
   allowed layers ("nothing" for none).
6. Declarations. A product header declares only functions that a product source of its own
   layer, or of a layer rule 1 lets it include, defines (c_functions.py finds the file-scope,
   non-static ones): a call through a header declared below the layer that defines the
   function reaches up (or across) unseen by rule 1, e.g. a runtime header declaring
   swin_segment, which the pipeline defines.

Outside the layers: the CUDA emulator tests/cuemu/ (cuemu) includes nothing of the project;
tests/ (the emulator's own tests tests/cuemu/selftest/ and the emulated CLI's glue
tests/cuemu/swinrun_emu/ among them), bench/, tools/, apps/triton/tests/ and
apps/triton/fuzz/ may include anything. Only quoted includes of a path under one of these
folders are checked (system headers and generated ones are not the project's); a quoted
include without a folder, or one starting ./ or ../, is read relative to the including file
(the public headers include each other so, cmake/install.cmake).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

from c_functions import file_scope_functions

# (folder prefix, layer); the longest matching prefix wins. A prefix ending in "/*"
# matches the files directly in that folder only.
FOLDERS = [
    ("core/", "core"),
    ("kernels/*", "ops"),
    ("weights/", "weights"),
    ("kernels/cpu/", "cpu"),
    ("kernels/cuda/", "cuda"),
    ("runtime/", "runtime"),
    ("fileio/", "fileio"),
    ("formats/", "formats"),
    ("pipeline/", "pipeline"),
    ("apps/cli/", "cli"),
    ("apps/node/", "node"),
    ("apps/triton/", "triton"),
    ("apps/python/", "python"),
    ("apps/triton/tests/", "tooling"),
    ("apps/triton/fuzz/", "tooling"),
    ("tests/cuemu/", "emu"),
    ("tests/cuemu/selftest/", "tooling"),
    ("tests/cuemu/swinrun_emu/", "tooling"),
    ("tests/", "tooling"),
    ("bench/", "tooling"),
    ("tools/", "tooling"),
]
ALLOWED = {
    "core": set(),
    "ops": {"core"},
    "weights": {"core"},
    "cpu": {"core", "ops"},
    "cuda": {"core", "ops"},
    "runtime": {"core", "ops", "weights", "cpu", "cuda"},
    "fileio": {"core"},
    "formats": {"core", "fileio"},
    "pipeline": {"core", "fileio", "formats", "runtime"},
    "cli": {"core", "fileio", "formats", "pipeline", "runtime", "node"},
    "node": {"core", "fileio", "pipeline", "runtime"},
    "triton": {"core", "fileio", "pipeline", "runtime"},
    "python": {"core", "pipeline", "runtime"},
    "emu": set(),
    "tooling": None,  # anything
}
NOT_PRODUCT = {"emu", "tooling"}
LAYERS = [layer for layer in ALLOWED if layer not in NOT_PRODUCT]
FORMATS = "formats/"

README_BEGIN, README_END = "<!-- layers:begin -->", "<!-- layers:end -->"
README_HEADER = "| layer | folder | may include |"

SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cpp")
HEADER_EXT = (".h", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
Include = collections.namedtuple("Include", "path line target")


def layer_of(path):
    best, best_len = None, -1
    for prefix, layer in FOLDERS:
        if prefix.endswith("/*"):
            folder = prefix[:-1]
            hit = path.startswith(folder) and "/" not in path[len(folder):]
        else:
            hit = path.startswith(prefix)
        if hit and len(prefix) > best_len:
            best, best_len = layer, len(prefix)
    return best


def is_product(path):
    return layer_of(path) not in NOT_PRODUCT


def format_folder(path):
    """'formats/nifti' for a file in formats/nifti/; None for formats/ own files and outside formats/."""
    rest = path[len(FORMATS):] if path.startswith(FORMATS) else ""
    return FORMATS + rest.split("/")[0] if "/" in rest else None


def sources(root):
    for top in sorted({p.split("/")[0] for p, _ in FOLDERS}):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def includes_of(root, path):
    """(line, project path) of each quoted include of a project header in one source."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if "/" not in target or target.startswith(("./", "../")):
                target = os.path.normpath(os.path.join(os.path.dirname(path), target)).replace(os.sep, "/")
            if layer_of(target) is not None:
                yield lineno, target


def layer_violations(includes):
    for i in includes:
        src, dst = layer_of(i.path), layer_of(i.target)
        allowed = ALLOWED[src]
        if allowed is None or dst == src or dst in allowed:
            continue
        yield (f"{i.path}:{i.line}: layer '{src}' includes \"{i.target}\" of layer '{dst}' "
               f"(allowed: {', '.join(sorted(allowed)) or 'nothing'})")


def declaration_violations(root, paths):
    """A product header's functions defined by a product source of a layer its own may not include."""
    declared, defined = [], collections.defaultdict(set)
    for p in paths:
        if not is_product(p):
            continue
        with open(os.path.join(root, p), encoding="utf-8", errors="replace") as f:
            decls, defs = file_scope_functions(f.read())
        if p.endswith(HEADER_EXT):
            declared += [(p, line, name) for name, line in decls]
        else:
            for name, _ in defs:
                defined[name].add(p)
    for h, line, name in declared:
        mine, allowed = layer_of(h), ALLOWED[layer_of(h)]
        for d in sorted(defined[name]):
            if layer_of(d) != mine and layer_of(d) not in allowed:
                yield (f"{h}:{line}: layer '{mine}' declares {name}, which {d} of layer '{layer_of(d)}' defines "
                       f"(allowed: {', '.join(sorted(allowed)) or 'nothing'})")


def sees_formats(layer):
    """The formats layer and the layers allowed to include it (tooling may include anything)."""
    return layer == "formats" or "formats" in (ALLOWED[layer] or ())


def is_registry_entry(i):
    """An include of a format's folder by a formats/ own source: the registry listing the formats."""
    return (layer_of(i.path) == "formats" and format_folder(i.path) is None
            and not i.path.endswith(HEADER_EXT) and format_folder(i.target) is not None)


def format_violations(includes):
    for i in includes:
        dst, src = format_folder(i.target), format_folder(i.path)
        layer = layer_of(i.path)
        if dst is None or dst == src or src is not None or not sees_formats(layer) or is_registry_entry(i):
            continue
        who = f"format folder {src}/" if src else f"layer '{layer}'"
        yield (f"{i.path}:{i.line}: {who} includes \"{i.target}\" of the format folder {dst}/: a format's "
               f"folder is included by itself, the registry and other formats only")


def first_include_per_edge(pairs):
    """{(from, to): the first include making that edge} for the (from, to, include) given, from != to."""
    edges = {}
    for a, b, i in pairs:
        if a != b:
            edges.setdefault((a, b), i)
    return edges


def folder_edges(includes):
    """Folder -> folder; the registry's includes are left out: the formats depend on formats/, not back."""
    return first_include_per_edge((os.path.dirname(i.path), os.path.dirname(i.target), i)
                                  for i in includes
                                  if is_product(i.path) and is_product(i.target) and not is_registry_entry(i))


def module_edges(includes):
    """Module -> module of one folder, from the includes of its sources (not of its header)."""
    return first_include_per_edge((os.path.splitext(i.path)[0], os.path.splitext(i.target)[0], i)
                                  for i in includes
                                  if is_product(i.path) and not i.path.endswith(HEADER_EXT)
                                  and os.path.dirname(i.path) == os.path.dirname(i.target))


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan), each a sorted list."""
    graph = collections.defaultdict(list)
    for a, b in sorted(edges):
        graph[a].append(b)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def cycle_violations(edges, kind):
    for component in cycles(edges):
        members = set(component)
        for (a, b), i in sorted(edges.items()):
            if a in members and b in members:
                yield (f"{i.path}:{i.line}: {kind} cycle {{{', '.join(component)}}}: "
                       f"{a} -> {b} (includes \"{i.target}\")")


def readme_rows(readme):
    """{layer: (line, allowed set)} of the README's layer table, or None when it has none."""
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    begin = next((n for n, line in enumerate(lines) if line.strip() == README_BEGIN), None)
    end = next((n for n, line in enumerate(lines) if line.strip() == README_END), None)
    if begin is None or end is None or end < begin:
        return None
    rows = {}
    for n in range(begin + 1, end):
        cells = [c.strip().strip("`").strip() for c in lines[n].strip().strip("|").split("|")]
        if not lines[n].strip().startswith("|") or len(cells) < 3:
            continue
        if cells[0] == "layer" or not cells[0].strip("-: "):
            continue  # the header and the separator row
        may = cells[2]
        rows[cells[0]] = (n + 1, set() if may == "nothing" else {s.strip().strip("`") for s in may.split(",")})
    return rows


def readme_violations(readme, shown):
    rows = readme_rows(readme)
    if rows is None:
        yield f"{shown}: README has no layer table between {README_BEGIN} and {README_END}"
        return
    for layer, (line, allowed) in rows.items():
        if layer not in ALLOWED or layer in NOT_PRODUCT:
            yield f"{shown}:{line}: the layer table names '{layer}', which is no layer of the check"
        elif allowed != ALLOWED[layer]:
            yield (f"{shown}:{line}: the layer table says '{layer}' may include "
                   f"{', '.join(sorted(allowed)) or 'nothing'}; the check allows "
                   f"{', '.join(sorted(ALLOWED[layer])) or 'nothing'}")
    for layer in LAYERS:
        if layer not in rows:
            yield f"{shown}: the layer table has no row for layer '{layer}'"


def readme_table():
    """The layer table as the check enforces it, in the README's format."""
    def folders(layer):
        return ", ".join(p[:-1] + " (its own files)" if p.endswith("/*") else p
                         for p, owner in FOLDERS if owner == layer)
    rows = [f"| {layer} | {folders(layer)} | {', '.join(sorted(ALLOWED[layer])) or 'nothing'} |" for layer in LAYERS]
    return "\n".join([README_BEGIN, README_HEADER, "|---|---|---|"] + rows + [README_END])


def shown_path(path, root):
    """path relative to root when it lies in the tree, else as given."""
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


def check(root, readme):
    paths = list(sources(root))
    unlayered = [f"{p}: in no layer: add its folder to FOLDERS in tools/ci/check_layers.py"
                 for p in paths if layer_of(p) is None]
    includes = [Include(p, line, target) for p in paths if layer_of(p) is not None
                for line, target in includes_of(root, p)]
    table = list(readme_violations(readme, shown_path(readme, root)))
    rules = [
        ("source(s) in no layer", unlayered),
        ("include(s) reach up a layer or across: move the shared type down (into core/), or the code up",
         list(layer_violations(includes))),
        ("function(s) declared by a layer below (or beside) the one defining them: a call through such a header "
         "reaches that layer unseen by the includes; declare each in a header of the layer that defines it",
         list(declaration_violations(root, paths))),
        ("include(s) of a format's folder from outside it: go through formats/format.h",
         list(format_violations(includes))),
        ("include(s) close a cycle between folders", list(cycle_violations(folder_edges(includes), "folder"))),
        ("include(s) close a cycle between the modules of a folder: move what both need into a third module",
         list(cycle_violations(module_edges(includes), "module"))),
        ("disagreement(s) between the README's layer table and the check", table),
    ]
    for why, found in rules:
        for v in found:
            print(v)
        if found:
            print(f"{len(found)} {why}", file=sys.stderr)
    if table:
        print("the table the check enforces:\n" + readme_table(), file=sys.stderr)
    if any(found for _, found in rules):
        return 1
    print(f"layers ok: {len(paths)} sources checked, the README's table agrees")
    return 0


# (why, what the failures name (nothing: the planted lines pass), [(file, text to replace or None
# to add a first line, new text)])
PLANTS = [
    ("core includes runtime", ("of layer",), [("core/status.h", None, '#include "runtime/plan.h"')]),
    ("core includes runtime relative to itself", ("of layer",),
     [("core/json.h", None, '#include "../runtime/plan.h"')]),
    ("the op table includes the loader", ("of layer",), [("kernels/ops.h", None, '#include "weights/onnx/onnx_loader.h"')]),
    ("weights includes the public API", ("of layer",), [("weights/onnx/strmap.c", None, '#include "pipeline/swinrun.h"')]),
    ("a production .cu includes the emulator", ("of layer",),
     [("kernels/cuda/pack.cu", None, '#include "tests/cuemu/cuemu_api.h"')]),
    ("one backend includes another", ("of layer",),
     [("kernels/cpu/copy.c", None, '#include "kernels/cuda/cuda_backend.h"')]),
    ("runtime includes the pipeline", ("of layer",), [("runtime/plan.c", None, '#include "pipeline/sliding.h"')]),
    ("the pipeline includes the CLI", ("of layer",), [("pipeline/png.c", None, '#include "apps/cli/cli.h"')]),
    ("the emulator includes the project", ("of layer",), [("tests/cuemu/half.c", None, '#include "core/status.h"')]),
    ("the CLI includes the emulator", ("of layer",), [("apps/cli/main.c", None, '#include "tests/cuemu/cuemu_api.h"')]),
    ("a runtime header declares what the pipeline defines: a call back up", ("declares",),
     [("runtime/api.h", None, "SWIN_API swin_segment_params swin_segment_default_params(void);")]),
    ("a pipeline header declares what the pipeline and core define", (),
     [("pipeline/png.h", None, "swin_status swin_segment_file(swin_context_t *, const char *, const char *, "
       "const swin_segment_params *, swin_segment_report *, swin_error *);"),
      ("pipeline/preview.h", None, "swin_status swin_error_set(swin_error *, swin_status, const char *, ...);")]),
    ("the pipeline names DICOM", ("of the format folder",),
     [("pipeline/segment.c", None, '#include "formats/dicom/series.h"')]),
    ("the CLI names NIfTI", ("of the format folder",),
     [("apps/cli/main.c", None, '#include "formats/nifti/nifti_io.h"')]),
    ("Triton names DICOM", ("of layer",), [("apps/triton/backend.c", None, '#include "formats/dicom/series.h"')]),
    ("the interface names NIfTI", ("of the format folder",),
     [("formats/format.h", None, '#include "formats/nifti/nifti_io.h"')]),
    ("the registry lists the formats, which implement the interface the pipeline uses", (),
     [("formats/registry.c", None, '#include "formats/dicom/series.h"'),
      ("formats/dicom/classes.c", None, '#include "formats/format.h"'),
      ("formats/nifti/nifti_header.c", None, '#include "formats/format.h"'),
      ("pipeline/cubes.c", None, '#include "formats/format.h"')]),
    ("the tests include what they test", (),
     [("apps/triton/tests/test_config.c", None, '#include "formats/dicom/series.h"'),
      ("tests/cuemu/selftest/test_warp.c", None, '#include "apps/cli/cli.h"')]),
    ("DICOM includes the pipeline", ("of layer",), [("formats/dicom/series.c", None, '#include "pipeline/segment.h"')]),
    ("NIfTI includes DICOM, which writes NIfTI", ("folder cycle",),
     [("formats/nifti/nifti_read.c", None, '#include "formats/dicom/series.h"')]),
    # a cycle names the first include of each edge: these files come first in their folders
    ("fileio and runtime include each other", ("of layer", "folder cycle"),
     [("fileio/atomic_file.c", None, '#include "runtime/plan.h"'), ("runtime/api.c", None, '#include "fileio/npy.h"')]),
    ("NIfTI and DICOM include each other", ("folder cycle",),
     [("formats/nifti/nifti_header.c", None, '#include "formats/dicom/series.h"'),
      ("formats/dicom/classes.c", None, '#include "formats/nifti/nifti_io.h"')]),
    ("two runtime modules include each other", ("module cycle",),
     [("runtime/plan.c", None, '#include "runtime/exec.h"'), ("runtime/exec.c", None, '#include "runtime/plan.h"')]),
    ("the README's table lets formats include the pipeline", ("layer table",),
     [("README.md", "| formats | formats/ | core, fileio |", "| formats | formats/ | core, fileio, pipeline |")]),
]


def plant(tmp, path, old, new):
    """Applies one edit (to a new, empty file when there is none); returns the line it landed on."""
    full = os.path.join(tmp, path)
    text = ""
    if os.path.exists(full):
        with open(full, encoding="utf-8") as f:
            text = f.read()
    if old is None:
        at, text = 0, new + "\n" + text
    else:
        at = text.index(old)
        text = text[:at] + new + text[at + len(old):]
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)
    return text[:at].count("\n") + 1


def copy_tree(root, tmp):
    for path in sources(root):
        os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
        shutil.copyfile(os.path.join(root, path), os.path.join(tmp, path))
    with open(os.path.join(tmp, "README.md"), "w", encoding="utf-8") as f:
        f.write("# the tree\n\n" + readme_table() + "\n")


def self_test(root):
    """Each plant, in a fresh copy, must fail and name every planted file:line with each rule it breaks;
    a plant of allowed includes must name none of its lines. The tree may have violations of its own.
    The copy's README holds the table as the check enforces it (its parser is tested there)."""
    ok = True
    for why, rules, edits in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            copy_tree(root, tmp)
            where = [f"{path}:{plant(tmp, path, old, new)}:" for path, old, new in edits]
            # the real command line, as CTest runs it
            r = subprocess.run([sys.executable, __file__, "--root", tmp], capture_output=True, text=True)
            lines = r.stdout.splitlines()
            if rules:
                good = r.returncode == 1 and all(any(line.startswith(w) and rule in line for line in lines)
                                                 for w in where for rule in rules)
            else:
                good = not any(line.startswith(w) for line in lines for w in where)
            print(f"{'ok  ' if good else 'FAIL'} planted: {why} ({' '.join(where)} {' + '.join(rules) or 'pass'})")
            ok &= good
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--readme", help="the README holding the layer table (default: ROOT/README.md)")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.root)
    return check(a.root, a.readme or os.path.join(a.root, "README.md"))


if __name__ == "__main__":
    sys.exit(main())
