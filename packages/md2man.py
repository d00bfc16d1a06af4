#!/usr/bin/env python3
"""Writes the ovs-dpcls-plugin(7) man page from docs/ref/ovs-dpcls-plugin.md.

    packages/md2man.py [--date YYYY-MM-DD] [--version V] MARKDOWN > PAGE.7

The reference page is the one source: the packages install what this
makes of it (packages/build-deb.sh), so `man ovs-dpcls-plugin` and the
docs cannot drift.  It knows the Markdown that page uses, no more: `#`
and `##` headings, paragraphs, bullet-free tables (one `.TP` entry per row:
the first cell is the tag, the others follow with their column's header),
`code` spans (bold) and [links](...) (their text).  Anything else is an
error, so that a new construct in the page is noticed here, not printed
wrong.
"""
import argparse
import re
import sys


def inline(text):
    """Markdown inline text -> roff: escapes, `code` in bold, links' text."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"`([^`]*)`", lambda m: "\\fB" + m.group(1).replace("-", "\\-") + "\\fR", text)
    return text


def line_safe(text):
    """A roff text line must not start with a control character."""
    return "\\&" + text if text[:1] in (".", "'") else text


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def convert(lines, date, version):
    out = []
    title = None
    i = 0
    paragraph = []

    def flush():
        if paragraph:
            out.append(".PP")
            out.extend(line_safe(inline(p)) for p in paragraph)
            paragraph.clear()

    while i < len(lines):
        line = lines[i].rstrip("\n")
        if line.startswith("# "):
            if title is not None:
                raise SystemExit(f"md2man: line {i + 1}: a second '# ' title")
            title = line[2:].strip()
            out.append(f'.TH OVS\\-DPCLS\\-PLUGIN 7 "{date}" "ovs-dpcls-plugin {version}" "Open vSwitch"')
            out.append(".SH NAME")
            out.append("ovs\\-dpcls\\-plugin \\- " + inline(title.split(":", 1)[-1].strip()))
            out.append(".SH DESCRIPTION")
        elif line.startswith("## "):
            flush()
            # Upper case, as man pages' sections are, but not inside code.
            parts = re.split(r"(`[^`]*`)", line[3:].strip())
            out.append(".SH " + "".join(inline(p) if p.startswith("`") else inline(p.upper()) for p in parts))
        elif line.startswith("|"):
            flush()
            header = cells(line)
            if i + 1 >= len(lines) or not re.match(r"^\|[-| :]+\|$", lines[i + 1].strip()):
                raise SystemExit(f"md2man: line {i + 1}: a table without its |---| line")
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                row = cells(lines[i])
                if len(row) != len(header):
                    raise SystemExit(f"md2man: line {i + 1}: {len(row)} cells, the header has {len(header)}")
                out.append(".TP")
                out.append(line_safe(inline(row[0])))
                rest = []
                for name, value in zip(header[1:], row[1:]):
                    rest.append(inline(value) if name in ("what", "counts", "what it logs")
                                else f"{inline(name)}: {inline(value)}")
                out.append(line_safe("; ".join(rest) + "."))
                i += 1
            continue
        elif line.strip() == "":
            flush()
        elif re.match(r"^\s*([-*+]|\d+\.|```|>)", line):
            raise SystemExit(f"md2man: line {i + 1}: lists, code blocks and quotes are not supported: {line!r}")
        else:
            paragraph.append(line.strip())
        i += 1
    flush()
    if title is None:
        raise SystemExit("md2man: no '# ' title")
    out.append(".SH SEE ALSO")
    out.append("\\fBovs\\-vswitchd\\fR(8), \\fBovs\\-appctl\\fR(8), \\fBovs\\-vsctl\\fR(8)")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--date", default="2026-12-04")
    ap.add_argument("--version", default="")
    ap.add_argument("markdown")
    args = ap.parse_args()
    with open(args.markdown, encoding="utf-8") as f:
        sys.stdout.write(convert(f.readlines(), args.date, args.version))


if __name__ == "__main__":
    main()
