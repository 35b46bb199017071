#!/usr/bin/env python3
"""The engine's folders are layers: a header may include its own folder and the
folders below it, never one above. The order, lowest first:

    core < net < settings < rules < plan, route < review, linux, mac < io

Every layer but io is pure (no system headers that reach the kernel:
<fcntl.h>, <unistd.h>, <sys/...>, <dirent.h>); io holds the headers that
touch the disk, and nothing below io includes it. Prints each header that breaks
the order with the line, and exits 1 if any does. Also checks that
tests/unit/every_header.hpp, which both parts of the unit suite include, includes
every header, and that the engine's sources (tools/engine/, one per layer)
compile every header of their layer under the guard of that layer.

The launchers' folders are layers too (launchers/meson.build), lowest first:

    base < proxy, stage < shared < linux, mac

A launcher's file includes another by its folder ("shared/signals.hpp"), its own
folder's and those below, never one on its own level (proxy and stage, linux and
mac are apart); the engine includes none of them.

The unit tests (tests/unit/) are in folders named after the engine's, and each
file includes a header of its folder.
"""
import pathlib
import re
import sys

LEVEL = {"core": 0, "net": 1, "settings": 2, "rules": 3, "plan": 4, "route": 4, "review": 5, "linux": 5, "mac": 5,
         "io": 6}
PURE = {"core", "net", "settings", "rules", "plan", "review", "route", "linux", "mac"}
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
every = (root.parents[1] / "tests" / "unit" / "every_header.hpp").read_text()
for header in headers:
    if f'#include "sbx/{header.relative_to(root)}"' not in every:
        bad.append(f"tests/unit/every_header.hpp: does not include sbx/{header.relative_to(root)}")

# The engine compiled once (sbx/core/inline.hpp): a header's definitions at its
# end are read by every program, or with SBX_COMPILED_ENGINE only by the source
# of its layer, tools/engine/LAYER.cpp, which includes every header of the layer.
# A header under the wrong layer's guard, or left out of its layer's source, would
# leave sbx's own programs with a function defined twice or not at all.
engine = root.parents[1] / "tools" / "engine"
for folder in LEVEL:
    source = engine / f"{folder}.cpp"
    if not source.is_file():
        bad.append(f"tools/engine/{folder}.cpp: missing: the {folder} layer is compiled nowhere")
        continue
    text = source.read_text()
    if f"#define SBX_DEFINE_{folder.upper()}\n" not in text:
        bad.append(f"tools/engine/{folder}.cpp: does not define SBX_DEFINE_{folder.upper()}")
    for header in headers:
        rel = header.relative_to(root)
        if rel.parts[0] == folder and f'#include "sbx/{rel}"' not in text:
            bad.append(f"tools/engine/{folder}.cpp: does not include sbx/{rel}")
for header in headers:
    rel = header.relative_to(root)
    text = header.read_text()
    guards = re.findall(r"^#if !defined\(SBX_COMPILED_ENGINE\) \|\| defined\(SBX_DEFINE_(\w+)\)$", text, re.M)
    if "SBX_INLINE" in text and rel != pathlib.Path("core/inline.hpp"):
        if guards != [rel.parts[0].upper()]:
            bad.append(f"{rel}: defines SBX_INLINE functions, so its end block is read under "
                       f"`#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_{rel.parts[0].upper()})`, once")
        if '#include "sbx/core/inline.hpp"' not in text:
            bad.append(f"{rel}: uses SBX_INLINE without including sbx/core/inline.hpp")

# The launchers' folders, the same way (launchers/meson.build): a file includes
# its own folder and the ones below it, never one beside it or above. Every
# include of a launcher's file names its folder, and the engine includes none.
LAUNCHER_LEVEL = {"base": 0, "proxy": 1, "stage": 1, "shared": 2, "linux": 3, "mac": 3}
QUOTED = re.compile(r'#include "([^"]+)"')
launchers = root.parents[1] / "launchers"
launcher_files = sorted(f for f in launchers.rglob("*") if f.suffix in (".cpp", ".hpp"))
for source in launcher_files:
    rel = source.relative_to(launchers)
    if len(rel.parts) != 2 or rel.parts[0] not in LAUNCHER_LEVEL:
        bad.append(f"launchers/{rel}: not in one of the folders {', '.join(LAUNCHER_LEVEL)}")
        continue
    folder = rel.parts[0]
    for n, line in enumerate(source.read_text().splitlines(), 1):
        m = QUOTED.match(line.strip())
        if not m or m.group(1).startswith("sbx/"):
            continue
        target = m.group(1).split("/")
        if len(target) != 2 or target[0] not in LAUNCHER_LEVEL or not (launchers / m.group(1)).is_file():
            bad.append(f"launchers/{rel}:{n}: includes \"{m.group(1)}\", not a launcher file named by its folder")
        elif target[0] != folder and LAUNCHER_LEVEL[target[0]] >= LAUNCHER_LEVEL[folder]:
            bad.append(f"launchers/{rel}:{n}: {folder}/ includes {target[0]}/, which is not below it")
for header in headers:
    for n, line in enumerate(header.read_text().splitlines(), 1):
        m = QUOTED.match(line.strip())
        if m and m.group(1).split("/")[0] in LAUNCHER_LEVEL:
            bad.append(f"{header.relative_to(root)}:{n}: the engine includes the launchers' {m.group(1)}")

# The unit tests mirror the engine: each test file is in the folder of a layer
# and includes a header of that folder. Apart from them, link/link_test.cpp, the
# suite's check that it links with every header in both its parts.
unit_root = root.parents[1] / "tests" / "unit"
unit_tests = sorted(unit_root.rglob("*_test.cpp"))
for test in unit_tests:
    rel = test.relative_to(unit_root)
    if rel == pathlib.Path("link/link_test.cpp"):
        continue
    if len(rel.parts) != 2 or rel.parts[0] not in LEVEL:
        bad.append(f"tests/unit/{rel}: not in a folder named after a layer ({', '.join(LEVEL)})")
    elif f'#include "sbx/{rel.parts[0]}/' not in test.read_text():
        bad.append(f"tests/unit/{rel}: includes no header of sbx/{rel.parts[0]}/")

for b in bad:
    print(b)
print(f"{len(headers)} headers, {len(launcher_files)} launcher files, {len(unit_tests)} unit test files, "
      f"{len(bad)} breaking the layers")
sys.exit(1 if bad else 0)
