"""The functions a C, C++ or CUDA source declares and defines at file scope, read without a compiler.

    declared, defined = file_scope_functions(text)   each a list of (name, line); static ones left out

Enough for check_layers.py on this project's sources: comments, string literals and
preprocessor lines are blanked first; extern "C" and namespace blocks are looked into, every
other block is not. Not seen: what a macro expands to, C++ methods (Class::name) and templates.
"""
import re

_BLANKED = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_NOT_A_FUNCTION = re.compile(r"\s*(typedef|struct|union|enum|class|template|using|_Static_assert|static_assert)\b")
_LOOKED_INTO = re.compile(r'(\bextern\s*""|\bnamespace\b[\w\s:]*)\s*$')
_NO_NAME = {"alignas", "_Alignas", "decltype", "sizeof", "typeof", "__typeof__", "__declspec"}


def _blank(text):
    """Comments and preprocessor lines as spaces, string and character literals as "": the lines stay."""
    def blank(m):
        s = m.group(0)
        return re.sub(r"[^\n]", " ", s) if s.startswith("/") else '""'

    lines, continued = [], False
    for line in _BLANKED.sub(blank, text).split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        lines.append("" if directive else line)
    return "\n".join(lines)


def _statements(text):
    """(text, line, ending) of each file-scope statement: ending ';' (a declaration) or '{' (a definition's head)."""
    found, opened, start, parens = [], [], 0, 0  # opened: per open brace, "scope" (looked into), "body" or "inner"
    for i, c in enumerate(text):
        if c == "(":
            parens += 1
        elif c == ")":
            parens -= 1
        elif c == "}":
            if opened and opened.pop() != "inner":
                start = i + 1
        elif c not in ";{":
            continue
        elif parens or any(o != "scope" for o in opened):
            if c == "{":
                opened.append("inner")
        elif c == "{" and _LOOKED_INTO.search(text[start:i]):
            opened.append("scope")
            start = i + 1
        else:
            found.append((text[start:i], text.count("\n", 0, start) + 1, c))
            if c == "{":
                opened.append("body")
            start = i + 1
    return found


def _function(head):
    """(name, line offset) of the function a statement declares or defines, or None."""
    head = _ATTRIBUTE.sub(lambda m: " " * len(m.group(0)), head)
    if _NOT_A_FUNCTION.match(head):
        return None
    for m in _CALL.finditer(head):
        name, before = m.group(1), head[:m.start()]
        if name in _NO_NAME:
            continue
        if "(" in before or "=" in before or before.rstrip().endswith("::") or re.search(r"\bstatic\b", before):
            return None
        if head[m.end():].lstrip().startswith("*"):
            return None  # a pointer to a function
        return name, head.count("\n", 0, m.start())
    return None


def file_scope_functions(text):
    declared, defined = [], []
    for head, line, ending in _statements(_blank(text)):
        f = _function(head)
        if f:
            (declared if ending == ";" else defined).append((f[0], line + f[1]))
    return declared, defined
