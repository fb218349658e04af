#!/usr/bin/env python3
"""Every relative link of the project's Markdown pages leads somewhere.

A link to a file must name one that exists; a link to a section
(`page.md#anchor`, `#anchor`) must name a heading of that page, by the
anchor GitHub makes of it. Links in code (fenced blocks, `inline`) and to
other sites are not checked. The README is split into pages under docs/ that
link each other by section: a heading reworded or a page moved breaks them
silently, so this test names each broken link instead.

Usage: doc_links_test.py SOURCE_DIR
"""
import re
import sys
from pathlib import Path

# [text](target) and [text](target "title"); images too.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
INDENTED_CODE = re.compile(r"^(    |\t)")
INLINE_CODE = re.compile(r"`+[^`]*`+")


def prose(text):
    """The page with its code (fenced and indented blocks, `inline`) blanked, lines kept."""
    lines = []
    in_fence = in_indented = False
    previous_blank = True
    for line in text.split("\n"):
        blank = not line.strip()
        if FENCE.match(line):
            in_fence = not in_fence
            line = ""
        elif in_fence:
            line = ""
        elif not blank and INDENTED_CODE.match(line) and (previous_blank or in_indented):
            in_indented = True
            line = ""
        else:
            in_indented = in_indented and blank
            line = INLINE_CODE.sub("", line)
        previous_blank = blank
        lines.append(line)
    return "\n".join(lines)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    """The anchors of a Markdown page's headings, duplicates numbered as GitHub does."""
    seen = {}
    result = set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if in_fence or not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def broken_link(page, target, root):
    """What is wrong with a link of page to target, or None."""
    file_part, _, anchor = target.partition("#")
    linked = (page.parent / file_part).resolve() if file_part else page.resolve()
    if not linked.exists():
        return "no such file"
    if root not in [linked, *linked.parents]:
        return "outside the repository"
    if anchor and linked.suffix != ".md":
        return "an anchor into a file that is not Markdown"
    if anchor and anchor not in anchors(linked):
        return f"no heading with this anchor in {linked.relative_to(root)}"
    return None


def broken_links(page, root):
    problems = []
    text = prose(page.read_text(encoding="utf-8"))
    for match in LINK.finditer(text):  # a link's text may run over two lines
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, mailto:...
            continue
        why = broken_link(page, target, root)
        if why:
            number = text.count("\n", 0, match.start(1)) + 1
            problems.append(f"{page.relative_to(root)}:{number}: {target}: {why}")
    return problems


def main():
    root = Path(sys.argv[1]).resolve()
    pages = sorted([*root.glob("*.md"), *(root / "docs").glob("*.md")])
    if not pages:
        print(f"{root}: no Markdown pages", file=sys.stderr)
        return 1
    problems = [problem for page in pages for problem in broken_links(page, root)]
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    print(f"doc links: {len(pages)} pages, {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
