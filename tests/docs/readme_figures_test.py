#!/usr/bin/env python3
"""Every figure README.md quotes comes from a dated results page.

A figure is a decimal number (6.66, 2.10x, 0.40) or a duration ("45 min
11 s") in README.md's prose and tables (code blocks are commands, not
figures).  Each must appear, as the same text, on at least one page of
docs/results/.  Prints what it checked; exits 1 naming every figure no
page has.

    tests/docs/readme_figures_test.py [REPO_ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.')
readme = (root / 'README.md').read_text()
pages = sorted((root / 'docs' / 'results').glob('*.md'))
if not pages:
    sys.exit('readme_figures_test: no docs/results/*.md pages')
results = '\n'.join(p.read_text() for p in pages)

prose, in_code = [], False
for line in readme.splitlines():
    if line.startswith('```'):
        in_code = not in_code
    elif not in_code:
        prose.append(line)
# Links' targets are no figures (their dates and versions are names).
text = re.sub(r'\]\([^)]*\)', ']', '\n'.join(prose))
text = re.sub(r'\n\s*', ' ', text)   # durations may wrap over lines

figure = re.compile(r'\d+ min \d+ s|(?<![\w.])\d+\.\d+x?(?![\w.])')
# Release numbers are names, not measurements: OVS's 3.x and 4.x, DPDK's
# YY.MM, Apache-2.0; a ratio (2.10x) is always a figure.
version = re.compile(r'([34]\.\d|2\.0|\d\d\.\d\d)$')
checked, missing = 0, []
for m in figure.finditer(text):
    if version.match(m.group(0)) or re.match(r'\d+\.\d+\.\d', text[m.start():]):
        continue
    checked += 1
    # A ratio written 1.18x in the README may be written (1.18) on the page.
    value = m.group(0).rstrip('x')
    on_page = re.search(r'(?<![\w.])' + re.escape(value) + r'(?![\d.]\d)', results)
    if not on_page and m.group(0) not in missing:
        missing.append(m.group(0))
print(f'readme_figures_test: {checked} figures in README.md, '
      f'{len(pages)} results pages, {len(missing)} figures on no page')
for f in missing:
    print(f'  not on any docs/results page: {f}')
sys.exit(1 if missing else 0)
