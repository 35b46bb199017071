#!/usr/bin/env python3
"""The engine's folders are layers: a header may include its own folder and the
folders below it, never one above. The order, lowest first:

    core < net < settings < rules < plan, review < linux, mac < io

core, net, settings, rules and plan are pure (no system headers that reach the
kernel: <fcntl.h>, <unistd.h>, <sys/...>, <dirent.h>); io holds the headers that
touch the disk, and nothing below io includes it. Prints each header that breaks
the order with the line, and exits 1 if any does. Also checks that
tests/unit/link_a.cpp and link_b.cpp include every header.
"""
import pathlib
import re
import sys

LEVEL = {"core": 0, "net": 1, "settings": 2, "rules": 3, "plan": 4, "review": 4, "linux": 5, "mac": 5, "io": 6}
PURE = {"core", "net", "settings", "rules", "plan", "review", "linux", "mac"}
SYSTEM = re.compile(r"#include <(fcntl\.h|unistd\.h|dirent\.h|sys/[^>]+)>")
LOCAL = re.compile(r'#include "sbx/([^"]+)"')

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2]) / "include" / "sbx"
bad = []
headers = sorted(root.rglob("*.hpp"))
for header in headers:
    rel = header.relative_to(root)
    if len(rel.parts) != 2 or rel.parts[0] not in LEVEL:
        bad.append(f"{rel}: not in one of the folders {', '.join(LEVEL)}")
        continue
    folder = rel.parts[0]
    for n, line in enumerate(header.read_text().splitlines(), 1):
        m = LOCAL.match(line.strip())
        if m:
            target = m.group(1).split("/")
            if len(target) != 2 or target[0] not in LEVEL:
                bad.append(f"{rel}:{n}: includes sbx/{m.group(1)}, which is in no layer")
            elif target[0] != folder and LEVEL[target[0]] >= LEVEL[folder]:
                bad.append(f"{rel}:{n}: {folder}/ includes {target[0]}/, which is not below it")
            elif not (root / m.group(1)).is_file():
                bad.append(f"{rel}:{n}: includes sbx/{m.group(1)}, which does not exist")
        if folder in PURE and SYSTEM.match(line.strip()):
            bad.append(f"{rel}:{n}: {folder}/ is pure but includes {line.strip()[9:]}")

# The two translation units that catch a definition missing `inline` include every header.
for unit in ("link_a.cpp", "link_b.cpp"):
    text = (root.parents[1] / "tests" / "unit" / unit).read_text()
    for header in headers:
        if f'#include "sbx/{header.relative_to(root)}"' not in text:
            bad.append(f"tests/unit/{unit}: does not include sbx/{header.relative_to(root)}")

for b in bad:
    print(b)
print(f"{len(headers)} headers, {len(bad)} breaking the layers")
sys.exit(1 if bad else 0)
