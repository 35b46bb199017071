#!/usr/bin/env python3
"""Answers sbx's question about a host on a pseudo-terminal, as a person would.

Usage: answer_question.py KEY -- COMMAND [ARG...]

COMMAND runs on a new pseudo-terminal (its controlling terminal). The driver
waits up to 30 s for sbx's question (it ends in "? " after "[N] not at all"
or "[y/N]"), types KEY and a newline, reads to the end, and prints all it
read, then "status: N", the command's exit status. With KEY "none" it answers
nothing and fails if a question comes. Exits 0 when it could do that, 1 when
no question came (or one came that it was not to answer), 2 on usage.
"""
import os
import select
import sys
import time

from terminal_question import spawn


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    key, argv = sys.argv[1], sys.argv[3:]
    pid, master = spawn(argv)
    seen = bytearray()
    asked = False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every slave descriptor closed
            break
        if not chunk:
            break
        seen += chunk
        if not asked and (seen.rstrip().endswith(b"not at all?") or seen.rstrip().endswith(b"[y/N]")):
            asked = True
            if key != "none":
                os.write(master, key.encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(seen.decode(errors="replace"))
    print("\nstatus:", os.waitstatus_to_exitcode(status))
    return 0 if asked == (key != "none") else 1


if __name__ == "__main__":
    sys.exit(main())
