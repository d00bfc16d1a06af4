#!/usr/bin/env python3
"""Every relative link in the project's Markdown points at a file that exists.

Docs move (docs/ is laid out like OVS's Documentation/); a link left
behind is a page an operator cannot reach.  Checks the top folder's pages
(README.md, CONTRIBUTING.md), docs/ and
every folder's README.md; prints what it checked; exits 1 naming each
broken link.

    tests/docs/links_test.py [REPO_ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.')
files = sorted({*root.glob('*.md'), *root.glob('docs/**/*.md'),
                *root.glob('*/README.md'), *root.glob('*/*/README.md')})
link = re.compile(r'\]\(([^)#\s]+)(?:#[^)]*)?\)')
checked, broken = 0, []
for f in files:
    in_code = False
    for n, line in enumerate(f.read_text().splitlines(), 1):
        if line.startswith('```'):
            in_code = not in_code
        if in_code:
            continue
        for target in link.findall(line):
            if re.match(r'[a-z]+:', target):
                continue
            checked += 1
            if not (f.parent / target).exists():
                broken.append(f'{f.relative_to(root)}:{n}: {target}')
print(f'links_test: {checked} relative links in {len(files)} files, '
      f'{len(broken)} broken')
for b in broken:
    print(f'  broken: {b}')
sys.exit(1 if broken else 0)
