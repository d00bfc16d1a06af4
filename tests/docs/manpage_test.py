#!/usr/bin/env python3
"""The man page the packages install says what the reference page says.

packages/md2man.py makes ovs-dpcls-plugin(7) from docs/ref/ovs-dpcls-plugin.md
(packages/build-deb.sh installs it).  Checks that groff reads the page
without a warning, and that every name the reference page lists in its
tables' first column (lookups, commands, other_config keys, log modules,
coverage counters) is in the page.  Prints what it checked; exits 1 naming
what is wrong.

    tests/docs/manpage_test.py [REPO_ROOT]
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.')
md = root / 'docs/ref/ovs-dpcls-plugin.md'
page = subprocess.run([sys.executable, str(root / 'packages/md2man.py'), str(md)],
                      check=True, capture_output=True, text=True).stdout
problems = []
lint = subprocess.run(['groff', '-man', '-Tutf8', '-ww', '-z'], input=page,
                      capture_output=True, text=True)
if lint.returncode != 0 or lint.stderr.strip():
    problems.append(f'groff: exit {lint.returncode}: {lint.stderr.strip()}')
text = page.replace('\\-', '-').replace('\\fB', '').replace('\\fR', '').replace('\\&', '')
names = []
for line in md.read_text().splitlines():
    m = re.match(r'^\| *`([^`]+)`', line)
    if m:
        names.append(m.group(1))
missing = [n for n in names if n not in text]
if not names:
    problems.append('no `name` in the first column of any table of the reference page')
if missing:
    problems.append('not in the man page: ' + ', '.join(missing))
if not page.startswith('.TH OVS\\-DPCLS\\-PLUGIN 7 '):
    problems.append('the page does not start with its .TH line')
print(f'manpage_test: {len(names)} names of {md.relative_to(root)} in ovs-dpcls-plugin(7), '
      f'{page.count(".SH ")} sections, groff {"clean" if not lint.stderr.strip() else "WARNED"}')
for p in problems:
    print('manpage_test: ' + p)
sys.exit(1 if problems else 0)
