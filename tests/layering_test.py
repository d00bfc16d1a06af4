#!/usr/bin/env python3
"""The layers' includes point down, and no folder has an include cycle.

    tests/layering_test.py [ROOT]

The folders are layers (README.md, CONTRIBUTING.md):

    classifier/        the core: OVS's structs, the classifier, the registry
    lookups/ tail/     the lookups, the tail index          (on classifier/)
    jit/               generated lookups             (on classifier/, lookups/)
    reference/         OVS's own code, for comparison   (on classifier/)
    standalone/ plugin/  what links them: programs, ovs-vswitchd
    tests/ perf/       everything but plugin/

A quoted include names its layer by its first path component
(#include "jit/engine.hpp"); one of a layer not below the including file's
is an error, as is a cycle among one folder's files.  Includes of OVS's
headers (not this project's folders) are not checked here: the CMake
targets decide which files may see OVS's tree.  Prints what it checked;
exits 1 on any violation.
"""
import os
import re
import sys

BELOW = {
    "classifier": set(),
    "lookups": {"classifier"},
    "tail": {"classifier"},
    "jit": {"classifier", "lookups"},
    "reference": {"classifier"},
    "standalone": {"classifier", "lookups", "tail", "jit"},
    "plugin": {"classifier", "lookups", "tail", "jit"},
    "tests": {"classifier", "lookups", "tail", "jit", "reference", "standalone"},
    "perf": {"classifier", "lookups", "tail", "jit", "reference", "standalone"},
}
SOURCES = (".c", ".h", ".cpp", ".hpp", ".def")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for layer in BELOW:
        for top, dirs, files in os.walk(os.path.join(root, layer)):
            dirs[:] = [d for d in dirs if d not in ("build", "corpus")]
            for f in files:
                if f.endswith(SOURCES):
                    yield layer, os.path.relpath(os.path.join(top, f), root)


def resolve(root, layer, path, target):
    """The project file an include names, or None (an OVS or system header)."""
    for base in (root, os.path.join(root, layer), os.path.join(root, os.path.dirname(path))):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, root)
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    errors = []
    graph = {}
    files = includes = 0
    for layer, path in sources(root):
        files += 1
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        graph[path] = []
        for target in INCLUDE.findall(text):
            found = resolve(root, layer, path, target)
            if found is None:
                continue
            includes += 1
            to_layer = found.split(os.sep)[0]
            if to_layer != layer and to_layer not in BELOW[layer]:
                errors.append(f"{path}: includes {found}: {to_layer}/ is not below {layer}/")
            if os.path.dirname(found) == os.path.dirname(path):
                graph[path].append(found)

    # Cycles among one folder's files: depth-first, a back edge is a cycle.
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                errors.append("include cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])

    for e in errors:
        print("FAILED: " + e)
    print(f"layering: {files} files in {len(BELOW)} layers, {includes} project includes: "
          f"{len(errors)} pointing up or in a cycle")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
