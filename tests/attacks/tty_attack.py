#!/usr/bin/env python3
"""Attacks on terminals and devices, and the terminal that watches them.

Usage:
  tty_attack.py hold FILE SECONDS
      a pseudo-terminal of this user's (another shell, a tmux pane): its name
      goes into FILE, and "typed-secret" is typed into it every 50 ms
  tty_attack.py read PATH
      opens PATH for reading (no controlling terminal taken) and prints what
      arrives within 3 s: "read: BYTES", or "refused: errno N"
  tty_attack.py setd PATH|-FD LDISC
      sets the line discipline of the terminal at PATH (or descriptor FD):
      "setd: ok" or "refused: errno N"
  tty_attack.py getd FD
      prints the line discipline of descriptor FD: "ldisc: N"
  tty_attack.py dev-ioctl
      RNDGETENTCNT on /dev/urandom, a harmless device ioctl: "ioctl: ok" or
      "refused: errno N"
  tty_attack.py left SECONDS
      after SECONDS, what the terminal on standard input holds unread (raw
      mode): "left: HEX" ("left: " for nothing)
  tty_attack.py term DELAY_MS -- COMMAND...
      runs COMMAND on a pseudo-terminal it holds, as a terminal would: it
      answers a cursor position query (ESC [ 6 n) and primary device
      attributes (ESC [ c) DELAY_MS after each, in order, and answers "n" to
      sbx's question about a host. Writes everything COMMAND's terminal
      showed to standard output (bytes as they came), and exits with its status.
"""
import errno
import fcntl
import os
import select
import struct
import sys
import termios
import time
import tty


def fail(e):
    print("refused: errno %d" % e.errno, flush=True)
    return 1


def hold(path, seconds):
    master, slave = os.openpty()
    with open(path + ".tmp", "w") as f:
        f.write(os.ttyname(slave))
    os.rename(path + ".tmp", path)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        os.write(master, b"typed-secret\n")
        # What a reader took is gone; what it did not, the pty keeps (up to its size).
        while select.select([master], [], [], 0)[0]:
            os.read(master, 4096)
        time.sleep(0.05)
    return 0


def read(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        return fail(e)
    got = b""
    end = time.monotonic() + 3
    while time.monotonic() < end and len(got) < 12:
        select.select([fd], [], [], 0.1)
        try:
            got += os.read(fd, 64)
        except BlockingIOError:
            pass
        except OSError as e:
            return fail(e)
    print("read: %r" % got, flush=True)
    return 0


def setd(target, ldisc):
    try:
        fd = int(target[1:]) if target.startswith("-") else os.open(target, os.O_RDONLY | os.O_NOCTTY)
        fcntl.ioctl(fd, termios.TIOCSETD, struct.pack("i", ldisc))
    except OSError as e:
        return fail(e)
    print("setd: ok", flush=True)
    return 0


def getd(fd):
    got = fcntl.ioctl(fd, termios.TIOCGETD, struct.pack("i", 0))
    print("ldisc: %d" % struct.unpack("i", got)[0], flush=True)
    return 0


def dev_ioctl():
    try:
        fd = os.open("/dev/urandom", os.O_RDONLY)
        fcntl.ioctl(fd, 0x80045200, struct.pack("i", 0))  # RNDGETENTCNT
    except OSError as e:
        return fail(e)
    print("ioctl: ok", flush=True)
    return 0


def left(seconds):
    tty.setraw(0)
    time.sleep(seconds)
    got = b""
    while select.select([0], [], [], 0)[0]:
        chunk = os.read(0, 4096)
        if not chunk:
            break
        got += chunk
    print("left: %s" % got.hex(), flush=True)
    return 0


def term(delay_ms, argv):
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            if slave > 2:
                os.close(slave)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.close(slave)
    seen = bytearray()
    answers = []  # (when, bytes), in order
    asked = 0
    out = sys.stdout.buffer
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = time.monotonic()
        while answers and answers[0][0] <= now:
            os.write(master, answers.pop(0)[1])
        wait = 0.05 if not answers else max(0.0, answers[0][0] - now)
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        start = max(0, len(seen) - 8)
        seen.extend(chunk)
        out.write(chunk)
        out.flush()
        # Queries in what just came (a query split across reads is found once whole).
        for query, answer in ((b"\x1b[6n", b"\x1b[5;1R"), (b"\x1b[c", b"\x1b[?62;22c")):
            at = seen.find(query, start)
            while at >= 0:
                answers.append((time.monotonic() + delay_ms / 1000.0, answer))
                at = seen.find(query, at + 1)
        answers.sort(key=lambda a: a[0])
        question = b"Allow it for the rest of this command? [y/N] "
        while seen.count(question) > asked:
            asked += 1
            os.write(master, b"n\r")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) & 0xFF


def main(argv):
    if len(argv) >= 3 and argv[1] == "hold":
        return hold(argv[2], float(argv[3]))
    if len(argv) == 3 and argv[1] == "read":
        return read(argv[2])
    if len(argv) == 4 and argv[1] == "setd":
        return setd(argv[2], int(argv[3]))
    if len(argv) == 3 and argv[1] == "getd":
        return getd(int(argv[2]))
    if len(argv) == 2 and argv[1] == "dev-ioctl":
        return dev_ioctl()
    if len(argv) == 3 and argv[1] == "left":
        return left(float(argv[2]))
    if len(argv) >= 5 and argv[1] == "term" and argv[3] == "--":
        return term(int(argv[2]), argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
