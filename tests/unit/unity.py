#!/usr/bin/env python3
"""unity.py OUTPUT PART PARTS [--first HEADER] FILE... - one translation unit of many test files.

The engine is header-only, so every test file compiles again every engine
function it calls: the unit suite's files one by one took about nine times the
compiler's time of the same files in a few units, and one program per layer
(nine units) half as long again as two. This writes part PART (from 0) of
PARTS: the files are dealt out by size, largest first, each to the part that
has the fewest bytes so far, so the parts cost about the same and build side by
side. Each file's test cases are in the doctest test suite named after its
folder, the engine's layer it tests (tests/unit/core/json_test.cpp: "core"), so
that the suite runs layer by layer (tests/unit/meson.build).

A part first includes HEADER, if given (tests/unit/every_header.hpp: then every
part includes every engine header, and a definition in a header that is not
inline fails the link), then every header its files include (a top-level `#if` block
of nothing but preprocessor lines is taken whole), then each file inside a
namespace of its own, `unit_<stem>`: what one file declares at its top level,
in an anonymous namespace or not, cannot meet another's. Each header's own
guard makes its second inclusion, inside that namespace, empty. Test names and
failures still name the file and line they are in.

Exit status: 0, or 64 for a wrong command line.
"""
import os
import re
import sys

DIRECTIVE = re.compile(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif|include)\b")
OPENS = re.compile(r"\s*#\s*(if|ifdef|ifndef)\b")
CLOSES = re.compile(r"\s*#\s*endif\b")
INCLUDE = re.compile(r"\s*#\s*include\b")


def headers(path):
    """The include lines of `path` at its top level, and its top-level `#if`
    blocks that hold nothing but preprocessor lines, in order."""
    out = []
    block = []
    depth = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if depth == 0 and INCLUDE.match(line):
                out.append(line.rstrip("\n"))
                continue
            if OPENS.match(line):
                depth += 1
            if depth > 0:
                block.append(line.rstrip("\n"))
                if CLOSES.match(line):
                    depth -= 1
                    if depth == 0:
                        if all(DIRECTIVE.match(b) for b in block):
                            out.extend(block)
                        block = []
    return out


def main(argv):
    first = None
    if len(argv) > 4 and argv[3] == "--first":
        first = argv[4]
        argv = argv[:3] + argv[5:]
    if len(argv) < 4 or not argv[1].isdigit() or not argv[2].isdigit() or int(argv[1]) >= int(argv[2]):
        print("usage: unity.py OUTPUT PART PARTS [--first HEADER] FILE...", file=sys.stderr)
        return 64
    output, part, parts, files = argv[0], int(argv[1]), int(argv[2]), argv[3:]
    bins = [[] for _ in range(parts)]
    sizes = [0] * parts
    for f in sorted(files, key=lambda f: (-os.path.getsize(f), f)):
        k = sizes.index(min(sizes))
        bins[k].append(f)
        sizes[k] += os.path.getsize(f)
    mine = sorted(bins[part])
    lines = ["// Written by tests/unit/unity.py: part %d of %d of the unit suite's files." % (part, parts)]
    if first is not None:
        lines.append('#include "%s"' % os.path.abspath(first))
    seen = set()
    for f in mine:
        for h in headers(f):
            if h not in seen or not INCLUDE.match(h):
                lines.append(h)
                seen.add(h)
    for f in mine:
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(f))[0])
        layer = os.path.basename(os.path.dirname(os.path.abspath(f)))
        lines += ["", "namespace unit_%s {" % stem, 'TEST_SUITE_BEGIN("%s");' % layer,
                  '#include "%s"' % os.path.abspath(f), "TEST_SUITE_END();", "}  // namespace unit_%s" % stem]
    text = "\n".join(lines) + "\n"
    # Written only when it changes, so that nothing is compiled again for nothing.
    if not os.path.exists(output) or open(output, encoding="utf-8").read() != text:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
