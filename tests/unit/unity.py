#!/usr/bin/env python3
"""unity.py OUTPUT FILE... - one translation unit of many test files.

The engine is header-only, so every test file compiles again every engine
function it calls: the unit suite's files one by one took about nine times the
compiler's time of the same files in a few units. This writes one unit of a
layer's test files (tests/unit/meson.build).

The unit first includes every header its files include (a top-level `#if` block
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
    if len(argv) < 2:
        print("usage: unity.py OUTPUT FILE...", file=sys.stderr)
        return 64
    output, mine = argv[0], sorted(argv[1:])
    lines = ["// Written by tests/unit/unity.py: %s in one unit." % ", ".join(os.path.basename(f) for f in mine)]
    seen = set()
    for f in mine:
        for h in headers(f):
            if h not in seen or not INCLUDE.match(h):
                lines.append(h)
                seen.add(h)
    for f in mine:
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(f))[0])
        lines += ["", "namespace unit_%s {" % stem, '#include "%s"' % os.path.abspath(f), "}  // namespace unit_%s" % stem]
    text = "\n".join(lines) + "\n"
    # Written only when it changes, so that nothing is compiled again for nothing.
    if not os.path.exists(output) or open(output, encoding="utf-8").read() != text:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
