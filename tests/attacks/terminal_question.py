#!/usr/bin/env python3
"""Drives a command on a pseudo-terminal the way a person answers sbx's question.

Usage: terminal_question.py frozen|control|interrupt HOST -- COMMAND [ARG...]

COMMAND runs on a new pseudo-terminal (its controlling terminal). It is expected
to keep printing a forged question about good.example while it makes a
connection that sbx asks about; the real question names HOST. The driver waits
for the question, watches the terminal for half a second, answers "n", and
reads the rest.

frozen:  nothing may arrive between the question and the answer (the command is
         stopped), the command's output must resume after it, and sbx must say
         what it decided; curl's code:403 must follow.
control: the forged text must arrive between the question and the answer (the
         command keeps running), which is the attack the freeze prevents.
interrupt: the launcher is sent SIGTERM while the question is open: it must end,
         and no process whose command line names good.example (the sandbox's
         writer) may be left, stopped or running.
Prints one line per finding; exits 0 when every expectation holds, 1 otherwise.
"""
import os
import pty
import select
import signal
import sys
import time

FORGED = b"good.example"


def spawn(argv):
    """Runs argv on a new pseudo-terminal, its controlling terminal: (pid, master)."""
    pid, master = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    return pid, master


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("frozen", "control", "interrupt") or sys.argv[3] != "--":
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    mode, host, argv = sys.argv[1], sys.argv[2].encode(), sys.argv[4:]
    question = b"sbx: the command wants to reach " + host
    pid, master = spawn(argv)
    seen = bytearray()
    problems = []

    def read_for(seconds, until=None):
        """Reads for up to `seconds`, or until `until` returns true; False at EOF."""
        deadline = time.monotonic() + seconds
        while until is None or not until():
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every slave descriptor closed
                return False
            if not chunk:
                return False
            seen.extend(chunk)
        return True

    def question_end():
        at = seen.find(question)
        if at < 0:
            return -1
        # The question ends in "[y/N] ", or in "not at all? " where it offers more.
        for ending in (b"[y/N] ", b"not at all? "):
            end = seen.find(ending, at)
            if end >= 0:
                return end + len(ending)
        return -1

    try:
        read_for(30, lambda: question_end() >= 0)
        end = question_end()
        if end < 0:
            problems.append("no question naming %s in 30 s" % host.decode())
        elif mode == "interrupt":
            interrupt(pid, read_for, problems)
        else:
            check(mode, host, master, seen, end, read_for, problems)
    except Ended:
        pid = 0
    finally:
        # The launcher's end ends the sandbox (--die-with-parent).
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    for p in problems:
        print("problem: " + p)
    if problems:
        print("terminal output (last 600 bytes): %r" % bytes(seen[-600:]))
    return 1 if problems else 0


def writers_left():
    """Processes whose command line names the forged host."""
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():  # our own argv names it
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                if FORGED in f.read():
                    left.append(int(entry))
        except OSError:
            pass
    return left


def interrupt(pid, read_for, problems):
    """SIGTERM to the launcher with the question open: the sandbox ends with it."""
    os.kill(pid, signal.SIGTERM)
    ended = False
    for _ in range(100):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            ended = True
            break
        if not read_for(0.1):  # at the end of the terminal's output, read_for does not wait
            time.sleep(0.1)
    if not ended:
        problems.append("the launcher did not end within 10 s of SIGTERM with a question open")
        return
    print("the launcher ended on SIGTERM")
    for _ in range(50):
        if not writers_left():
            break
        time.sleep(0.1)
    left = writers_left()
    if left:
        problems.append("processes of the sandbox were left behind: %s" % left)
    # Reaped here: main's kill and waitpid must not touch the id again.
    raise Ended()


class Ended(Exception):
    """The child was reaped already."""


def check(mode, host, master, seen, end, read_for, problems):
    """The expectations once the question is on the terminal, up to its end at `end`."""
    question = b"sbx: the command wants to reach " + host
    print("question seen: %r" % bytes(seen[seen.find(question):end]))
    if FORGED not in seen[:end]:
        problems.append("the forged question was not printed before the real one (the writer did not run)")
    read_for(0.5)
    between = bytes(seen[end:])
    print("bytes between the question and the answer: %d" % len(between))
    if mode == "frozen" and between:
        problems.append("the command wrote while the question was open: %r" % between[:200])
    if mode == "control" and FORGED not in between:
        problems.append("control: the forged text did not interleave with the question: %r" % between[:200])
    answered_at = len(seen)
    os.write(master, b"n\n")
    read_for(30, lambda: False)
    after = bytes(seen[answered_at:])
    if mode == "frozen":
        decided = b"sbx: " + host + b":80 refused"
        if decided not in after:
            problems.append("no line saying what was decided (%r)" % decided)
        if FORGED not in after:
            problems.append("the command's output did not resume after the answer")
        if b"\x1b[0m" not in seen[:end] or b"\x1b[?25h" not in seen[:end]:
            problems.append("the terminal's rendition was not reset before the question")
    if b"code:403" not in after:
        problems.append("curl did not get 403 after the answer: %r" % after[-300:])


if __name__ == "__main__":
    sys.exit(main())
