"""Find hand-typed measurements in the docs' Markdown (no Sphinx needed; the build uses it).

A measured number in a page must come from a record (docs/_data/records/, through the
``{measured}`` role) or from the seeds' published data (the ``{published}`` role). This
module finds the ones that do not: a number with a time unit (ns, us, µs, ms, s, sec,
second(s), min, minute(s), h, hour(s)) or a number with a percent sign, in a page's prose.

Exempt, and nothing else:

- code: fenced code blocks (an example command, a listing) except MyST directives whose
  body is prose (``{note}``, ``{figure}``, ...; their ``:option:`` lines are exempt),
  inline literals (backticks) and the contents of every role (``{measured}`` and
  ``{published}`` insert recorded numbers, ``{setting}`` marks a configured value);
- a ``{setting}`` role: a duration or a percentage that is a setting (a parameter's
  value or default, a budget, a timeout, a precision target), not a measurement;
- a confidence level ("95 % CI", "95 % confidence"): it names a method;
- HTML comments and link targets (URLs).

Run as a script to list what it finds: ``python docs/_ext/handtyped.py [FILE...]``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

NUM = r"[+\-±~≈]*\d[\d,]*(?:\.\d+)?"
UNIT = r"(?:ns|us|µs|μs|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hours?)"
JOIN = r"(?:\s*(?:-|–|to|and|or|vs\.?|,|/)\s*)"
MEASURE = re.compile(
    rf"(?<![\w.\-/])(?:{NUM}{JOIN})*{NUM}(?:\s|&nbsp;|\u00a0)?"
    rf"(?:{UNIT}(?![\w%])|%|\s?percent\b)"
)
CONFIDENCE = re.compile(r"^\s*(?:CIs?|confidence|credible|coverage)\b")
# prose-bodied MyST fences are scanned; any other fence is code
PROSE_DIRECTIVES = {"note", "warning", "tip", "important", "caution", "attention", "hint",
                    "seealso", "admonition", "figure", "margin", "sidebar", "topic",
                    "danger", "error", "table", "list-table"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w:-]+)\})?(.*)$")
ROLE_OR_LITERAL = re.compile(r"(\{[\w:-]+\})?(`+)(.+?)\2")
COMMENT = re.compile(r"<!--.*?-->", re.S)
URL = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+")


def _blank(text: str, pattern: re.Pattern) -> str:
    """Replace each match by spaces (newlines kept), so line numbers stay right."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines of a page that are prose, with their 1-based numbers, code blanked out."""
    text = _blank(text, COMMENT)
    out: list[tuple[int, str]] = []
    stack: list[tuple[str, bool]] = []  # (fence, prose) of each open fence
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m and stack and m.group(2)[0] == stack[-1][0][0] \
                and len(m.group(2)) >= len(stack[-1][0]) and not m.group(3) and not m.group(5).strip():
            stack.pop()
            continue
        if m and (not stack or stack[-1][1]):
            directive = m.group(4)
            prose = directive is not None and directive in PROSE_DIRECTIVES
            stack.append((m.group(2), prose))
            if prose and directive == "figure":
                continue  # the argument is a path
            if prose:
                out.append((number, m.group(5)))
            continue
        if stack and not stack[-1][1]:
            continue
        if stack and re.match(r"^\s*:[\w-]+:", line):
            continue  # a directive's option
        if re.match(r"^( {4,}|\t)\S", line) and not stack and not re.match(r"^\s*([-*+]|\d+\.)\s", line):
            if out and out[-1][1].strip() == "":
                continue  # an indented code block after a blank line
        out.append((number, line))
    return out


def find(text: str) -> list[tuple[int, str]]:
    """Every hand-typed measurement in a page: (line, the text found)."""
    found = []
    lines = prose_lines(text)
    in_literal = False
    for i, (number, line) in enumerate(lines):
        following = lines[i + 1][1] if i + 1 < len(lines) else ""
        line = _blank(line, URL)
        if in_literal:  # an inline literal that began on the line before
            end = line.find("`")
            line = " " * (end + 1) + line[end + 1:] if end >= 0 else ""
            in_literal = end < 0
        line = ROLE_OR_LITERAL.sub(lambda m: " " * len(m.group(0)), line)
        if "`" in line:  # a literal that goes on to the next line
            in_literal = True
            line = line[:line.index("`")]
        for m in MEASURE.finditer(line):
            if m.group(0).rstrip().endswith(("%", "percent")) and \
                    CONFIDENCE.match(line[m.end():] or following):
                continue
            found.append((number, m.group(0).strip()))
    return found


def check_tree(docs: Path) -> list[str]:
    """``path:line: text`` for every hand-typed measurement in docs/**/*.md."""
    problems = []
    for page in sorted(docs.rglob("*.md")):
        if any(part.startswith(("_", ".")) for part in page.relative_to(docs).parts):
            continue
        for line, hit in find(page.read_text()):
            problems.append(f"{page.relative_to(docs)}:{line}: {hit}")
    return problems


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    files = [Path(a) for a in sys.argv[1:]]
    if files:
        hits = [f"{f}:{n}: {h}" for f in files for n, h in find(f.read_text())]
    else:
        hits = check_tree(root)
    print("\n".join(hits))
    print(f"{len(hits)} hand-typed measurement(s)", file=sys.stderr)
    sys.exit(1 if hits else 0)
