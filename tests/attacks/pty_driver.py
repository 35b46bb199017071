#!/usr/bin/env python3
"""Drives an interactive shell on a pseudo-terminal, the way a person types.

Usage: pty_driver.py MODE -- COMMAND [ARG...]
       pty_driver.py throughput BYTES -- COMMAND [ARG...]

COMMAND (an interactive bash, in or out of `sbx run`) runs on a new
pseudo-terminal that the driver holds (its controlling terminal, 37x101). The
driver waits for the prompt, types, and waits for computed markers: it types
`echo m-$((1000+1)).` and waits for "m-1001.", which the echo of the typed
line cannot contain. Every wait has a deadline; on the way out the driver kills
every process it started (and any left with its sleep marker) and removes the
helper files it wrote into the current directory. A mode that has not ended
within 60 s ends there, as a problem. (The driver keeps that deadline itself:
timeout(1) around COMMAND would send COMMAND a second and a third SIGINT for
each Ctrl-C, which reach the shell late through sbx under --no-pty.)

Modes (each expects what a shell on its own terminal does):
  jobs      `tty` names a terminal in /dev/pts and bash has job control
            (no warning)
  ctrl-c    Ctrl-C ends a `sleep`, the shell stays
  ctrl-c-stays
            the same, and the shell still answers 2 s later (run with
            `--grace 1`: SIGINT starts no grace period)
  ctrl-z    Ctrl-Z stops a `sleep`; jobs, bg, fg; a background job Runs
  resize    the start size and a resize show in `stty size` (stdin, /dev/tty),
            and the foreground process gets SIGWINCH
  exit      the caller's terminal is raw during the run, `exit 3` gives status
            3, and the terminal's modes are as before afterwards
  sigterm, sigkill
            the same, with the signal sent to the launcher (the first process
            under the wrappers) instead of exit; nothing of the sandbox is left
  tiocsti   TIOCSTI on fds 0-2 and /dev/tty fails with EPERM, so does TIOCLINUX,
            and no injected line is run by the shell
  tiocsti-control
            the same script works: the injected line is run (no sandbox)
  fds       no process the command can see holds the driver's terminal, and
            no path in /dev or /dev/pts names it
  fds-control
            a process the command can see has it as fd 0 (--no-pty)
  python, node, less, vim, git, top
            the tool is used and quits (the REPLs work out 6*7); vim writes pty-vim.txt, git stages the
            change in ./addp (the caller checks it)
  throughput BYTES
            reads until EOF, counting bytes other than \\r (onlcr may add them);
            prints bytes, seconds and MB/s
Prints one line per finding; exits 0 when every expectation holds, 1 when one
does not, 2 on wrong usage.
"""
import fcntl
import os
import re
import select
import signal
import stat
import struct
import sys
import termios
import time

ROWS, COLS = 37, 101
NEW_ROWS, NEW_COLS = 45, 120
PROMPT = b"P-7> "
# The sleeps typed carry this in their argument (sleep 30.0NNNNNN), to find them.
TOKEN = "0%06d" % (os.getpid() % 1000000)
MODES = ("jobs", "ctrl-c", "ctrl-c-stays", "ctrl-z", "resize", "exit", "sigterm", "sigkill", "tiocsti",
         "tiocsti-control", "fds", "fds-control", "python", "node", "less", "vim", "git", "top")

TIOCSTI_SCRIPT = r'''
import errno, fcntl, os, termios
targets = [("0", 0), ("1", 1), ("2", 2)]
try:
    targets.append(("/dev/tty", os.open("/dev/tty", os.O_RDWR)))
except OSError as e:
    print("tiocsti /dev/tty: cannot open: errno %d" % e.errno)
for name, fd in targets:
    line = "echo inj-$((40+2))-%s\n" % name
    try:
        for ch in line:
            fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
        print("tiocsti %s: ok" % name)
    except OSError as e:
        print("tiocsti %s: errno %d" % (name, e.errno))
try:
    fcntl.ioctl(0, 0x541c, bytes([6]))  # TIOCLINUX, TIOCL_GETSHIFTSTATE
    print("tioclinux 0: ok")
except OSError as e:
    print("tioclinux 0: errno %d" % e.errno)
print("tiocsti done-%d" % 77)
'''

# The caller's terminal is the file (st_dev, st_ino) of the driver's slave: the
# device number alone can repeat in the sandbox's own devpts instance.
FDS_SCRIPT = r'''
import errno, os, stat
want = (%d, %d, %d)
pids, fds, unreadable, held, same_number = 0, 0, [], [], []
for p in sorted(os.listdir("/proc")):
    if not p.isdigit():
        continue
    pids += 1
    try:
        names = os.listdir("/proc/%%s/fd" %% p)
    except OSError as e:
        if e.errno != errno.ENOENT:  # not a process that just ended
            unreadable.append("%%s(errno %%d)" %% (p, e.errno))
        continue
    for f in names:
        try:
            st = os.stat("/proc/%%s/fd/%%s" %% (p, f))
        except OSError:
            continue
        fds += 1
        if not stat.S_ISCHR(st.st_mode) or st.st_rdev != want[2]:
            continue
        if (st.st_dev, st.st_ino) == want[:2]:
            held.append("/proc/%%s/fd/%%s" %% (p, f))
        else:
            same_number.append("/proc/%%s/fd/%%s" %% (p, f))
# A path can name it too: bubblewrap binds a terminal on its stdin as /dev/console.
by_path = []
for d in ("/dev", "/dev/pts"):
    for name in sorted(os.listdir(d)):
        try:
            st = os.lstat(os.path.join(d, name))  # not /dev/stdin, a link to our own fd 0
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and (st.st_dev, st.st_ino) == want[:2]:
            by_path.append(os.path.join(d, name))
print("fds processes %%d descriptors %%d unreadable %%s" %% (pids, fds, " ".join(unreadable) or "none"))
print("fds caller terminal by path: %%s" %% (" ".join(by_path) or "none"))
print("fds same device number on another devpts instance: %%s" %% (" ".join(same_number) or "none"))
print("fds caller terminal at: %%s" %% (" ".join(held) or "none"))
print("fds done-%%d" %% 88)
'''

# The SIGWINCH watcher. It blocks the signal before it says "armed" and then
# waits for it as a pending signal: a resize the driver makes at once is never
# missed. (A handler and time.sleep() missed one that came between "armed" and
# the start of the sleep, whose handler then ran when the sleep ended 30 s
# later: seen under load in CI, for plain bash as for the sandboxes.)
WINCH_SCRIPT = r'''
import signal
blocked = signal.SIGWINCH in signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
print("armed-%d%s" % (22, " (SIGWINCH blocked from the start)" if blocked else ""), flush=True)
if signal.sigtimedwait([signal.SIGWINCH], 30) is not None:
    print("winch-%d" % 33, flush=True)
'''


class Term:
    """COMMAND on a pseudo-terminal of its own; `seen` is all it wrote."""

    def __init__(self, argv, raw_slave=False):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        if raw_slave:
            mode = termios.tcgetattr(slave)
            mode[1] &= ~termios.OPOST
            termios.tcsetattr(slave, termios.TCSANOW, mode)
        st = os.fstat(slave)
        self.slave_id = (st.st_dev, st.st_ino, st.st_rdev)
        self.before = termios.tcgetattr(slave)
        self.started = time.monotonic()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(self.master)
                # Python ignores SIGPIPE, and an ignored signal stays so across exec.
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
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
        self.seen = bytearray()
        self.eof = False
        self.status = None
        self.counter = 0

    def read_for(self, seconds, until=None):
        """Reads for up to `seconds`, or until `until()` holds; False at EOF.
        What is already there is read even past the deadline (the driver itself
        may have waited for the processor that long on a loaded machine)."""
        deadline = time.monotonic() + seconds
        while not self.eof and (until is None or not until()):
            left = max(0, deadline - time.monotonic())
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                if left == 0:
                    return True
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: every slave descriptor closed
                chunk = b""
            if not chunk:
                self.eof = True
                break
            self.seen.extend(chunk)
        return not self.eof

    def wait_for(self, pattern, seconds, start=0):
        """The end of the first `pattern` (bytes) after `start`, or -1 by the deadline."""
        def found():
            return self.seen.find(pattern, start) >= 0
        self.read_for(seconds, found)
        at = self.seen.find(pattern, start)
        return -1 if at < 0 else at + len(pattern)

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        try:
            os.write(self.master, data)
        except OSError:
            pass

    def sync(self, seconds=10, command=""):
        """Types COMMAND then a marker echo; what came back before the marker, or None."""
        self.counter += 1
        start = len(self.seen)
        prefix = command + "; " if command else ""
        self.send("%secho m-$((1000+%d)).\r" % (prefix, self.counter))
        end = self.wait_for(b"m-%d." % (1000 + self.counter), seconds, start)
        return None if end < 0 else bytes(self.seen[start:end])

    def alive(self):
        if self.status is not None:
            return False
        got, status = os.waitpid(self.pid, os.WNOHANG)
        if got == self.pid:
            self.status = status
            return False
        return True

    def wait_exit(self, seconds):
        """The child's exit code (128+N for signal N), or None by the deadline."""
        deadline = time.monotonic() + seconds
        while self.alive():
            if time.monotonic() > deadline:
                return None
            if not self.read_for(0.05):
                time.sleep(0.05)
        return os.waitstatus_to_exitcode(self.status) if os.WIFEXITED(self.status) \
            else 128 + os.WTERMSIG(self.status)

    def tail(self):
        return "terminal output (last 800 bytes): %r" % bytes(self.seen[-800:])

    def close(self):
        """Ends what was started: first as a person would (hang up, then SIGTERM
        to the launcher), so that the launcher and its reaper clean up; then
        SIGKILL to whatever is left, and it waits for that to go."""
        procs = descendants(self.pid) if self.status is None else []
        target = launcher_pid(self.pid) if self.status is None else None
        os.close(self.master)  # the hangup: SIGHUP to the session

        def settle(seconds):
            deadline = time.monotonic() + seconds
            while (self.alive() or any(map(exists, procs))) and time.monotonic() < deadline:
                time.sleep(0.05)

        settle(5)
        if self.alive() and target:
            kill(target, signal.SIGTERM)
            kill(target, signal.SIGCONT)  # it may be stopped (Ctrl-Z without a pty of its own)
            settle(5)
        for p in procs + sleepers_left():
            if exists(p):
                kill(p)
        if self.alive():
            kill(self.pid)
        settle(5)


def exists(pid):
    """True while the process is there and not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def parent_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(root):
    """Every process under `root`, children before their own children."""
    found, frontier = [], [root]
    while frontier:
        kids = [int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(int(e)) in frontier]
        kids = [k for k in kids if k not in found]
        found.extend(kids)
        frontier = kids
    return found


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def launcher_pid(pid):
    """The first process under the wrappers (setpriv, env, timeout): sbx, which is the launcher."""
    for _ in range(20):
        if comm(pid) not in ("setpriv", "env", "timeout"):
            return pid
        kids = [int(e) for e in os.listdir("/proc") if e.isdigit() and parent_of(int(e)) == pid]
        if len(kids) != 1:
            return pid
        pid = kids[0]
    return pid


def processes():
    """(pid, command line with its NUL separators) of each process in /proc,
    leaving out those that end while it reads."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                yield int(entry), f.read()
        except OSError:
            continue


def signal_fields(status):
    """The Sig* and ShdPnd lines of a /proc status file, by name."""
    with open(status) as f:
        return {k: v.strip() for k, v in (l.split(":", 1) for l in f.read().splitlines()
                                          if l.startswith(("Sig", "ShdPnd")))}


def fields_text(fields):
    return " ".join("%s=%s" % (k, v) for k, v in sorted(fields.items()))


def sleepers_left():
    """Processes running a sleep typed by this driver."""
    mark = ("." + TOKEN).encode()
    return [pid for pid, line in processes() if line.startswith(b"sleep\0") and mark in line]


def modes_differ(a, b):
    names = ("iflag", "oflag", "cflag", "lflag", "ispeed", "ospeed", "cc")
    return [n for n, x, y in zip(names, a, b) if x != y]


def start_shell(t, problems):
    """Waits for the first prompt and an answer to a typed echo; False if none came."""
    t.read_for(20, lambda: b"$ " in t.seen or b"# " in t.seen)
    if t.sync(20) is None:
        problems.append("the shell did not answer a typed echo within 20 s (ended: %s)" % t.eof)
        return False
    # A prompt the tools' screens cannot show by chance ($((6+1)) is expanded).
    if t.sync(command="PS1='P-$((6+1))> '") is None:
        problems.append("the shell did not take a new prompt")
        return False
    return True


def write_helpers(t):
    """The scripts the modes run, in the current directory (the project)."""
    files = {"pty-tiocsti.py": TIOCSTI_SCRIPT, "pty-fds.py": FDS_SCRIPT % t.slave_id,
             "pty-winch.py": WINCH_SCRIPT,
             "pty-less.txt": "".join("less-line-%03d\n" % i for i in range(1, 301))}
    for name, text in files.items():
        with open(name, "w") as f:
            f.write(text)
        os.chmod(name, 0o644)
    return list(files) + ["pty-vim.txt"]


def mode_jobs(t, problems):
    for warning in (b"no job control", b"cannot set terminal process group"):
        if warning in t.seen:
            problems.append("bash warned at start: %r" % warning.decode())
    out = t.sync(command="tty; case $- in *m*) echo monitor-$((50*2));; esac")
    if out is None:
        problems.append("no answer to tty")
        return
    names = re.findall(rb"[\r\n](/dev/[^\r\n]*)\r?\n", out)
    if names:
        print("tty names %s" % names[0].decode())
        if not names[0].startswith(b"/dev/pts/"):
            problems.append("tty names %s, not a pseudo-terminal in /dev/pts" % names[0].decode())
    else:
        problems.append("tty did not name a terminal%s" % (" (not a tty)" if b"not a tty" in out else ""))
    if b"monitor-100" not in out:
        problems.append("job control is off ($- has no m)")


def sleep_started(t, problems, seconds):
    """Types a sleep of SECONDS (with the token) after a marker; True once it runs."""
    start = len(t.seen)
    t.send("echo slp-$((3*7)); sleep %d.%s\r" % (seconds, TOKEN))
    if t.wait_for(b"slp-21", 10, start) < 0:
        problems.append("the sleep did not start within 10 s")
        return False
    # The sleep itself, not only the echo before it: a signal sent before the
    # sleep starts misses it (a race a loaded machine lost).
    deadline = time.monotonic() + 10
    while not sleepers_left():
        if time.monotonic() > deadline:
            problems.append("the sleep did not start within 10 s")
            return False
        t.read_for(0.05)
    t.read_for(0.5)
    return True


def mode_ctrl_c(t, problems, stays):
    if not sleep_started(t, problems, 30):
        return
    t.send(b"\x03")
    start = len(t.seen)
    t.send("echo alive-$((6*7))\r")
    if t.wait_for(b"alive-42", 10, start) < 0:
        problems.append("no alive-42 within 10 s of Ctrl-C (the shell %s)" %
                        ("ended" if t.eof or not t.alive() else "or the sleep went on"))
        return
    print("after Ctrl-C the shell answered")
    if stays:
        t.read_for(1)
        if t.sync() is None:
            problems.append("1 s after Ctrl-C the shell no longer answers (%s)" %
                            ("it ended" if t.eof or not t.alive() else "it is stuck"))
        else:
            print("1 s after Ctrl-C the shell still answered")


def mode_ctrl_z(t, problems):
    if not sleep_started(t, problems, 31):
        return
    start = len(t.seen)
    t.send(b"\x1a")
    if t.wait_for(b"Stopped", 3, start) < 0:
        problems.append("Ctrl-Z did not stop the sleep within 3 s")
        return
    steps = [("jobs", (b"Stopped", b"sleep 31.")), ("bg %1; jobs", (b"Running",))]
    for command, wanted in steps:
        out = t.sync(command=command)
        if out is None:
            problems.append("no answer to %r" % command)
            return
        for w in wanted:
            if w not in out:
                problems.append("%r did not show %r" % (command, w.decode()))
    start = len(t.seen)
    t.send("fg %1\r")
    if t.wait_for(b"sleep 31.", 5, start) < 0:
        problems.append("fg did not name the job")
    t.read_for(0.5)
    t.send(b"\x03")
    if t.sync() is None:
        problems.append("the shell did not come back after Ctrl-C to the job brought back by fg")
        return
    out = t.sync(command="sleep 32.%s & jobs" % TOKEN)
    if out is None or b"Running" not in out:
        problems.append("a job started with & is not Running in jobs")
    if t.sync(command="kill %1; wait") is None:
        problems.append("kill %1 did not end the background job")
    else:
        print("Ctrl-Z, jobs, bg, fg and kill %1 worked")


def sizes(t, problems, rows, cols, when):
    """`stty size` on stdin and on /dev/tty both print ROWS COLS."""
    want = b"%d %d" % (rows, cols)
    out = b""
    for _ in range(6):  # the launcher passes a resize on a moment later
        out = t.sync(command="stty size; stty size </dev/tty") or b""
        if out.count(want) >= 2:
            print("%s: stty size printed %s twice" % (when, want.decode()))
            return
        t.read_for(0.5)
    problems.append("%s: stty size (stdin, then /dev/tty) did not print %s twice: %r" % (when, want.decode(), out[-200:]))


def signal_state(t):
    """Where a SIGWINCH to the launcher may have gone: the terminal's foreground
    group against the launcher's, and each of its threads' signal masks."""
    target = launcher_pid(t.pid)
    parts = []
    try:
        parts.append("foreground group %d, launcher %d in group %d" % (os.tcgetpgrp(t.master), target, os.getpgid(target)))
    except OSError as e:
        parts.append("groups unknown (%s)" % e)
    try:
        for tid in sorted(os.listdir("/proc/%d/task" % target)):
            fields = signal_fields("/proc/%d/task/%s/status" % (target, tid))
            try:
                with open("/proc/%d/task/%s/syscall" % (target, tid)) as f:
                    call = f.read().split()
                fields["syscall"] = call[0] if call else "?"  # what it waits in: 7 poll, 1 write, 202 futex
            except OSError:
                pass
            parts.append("thread %s %s" % (tid, fields_text(fields)))
    except OSError as e:
        parts.append("threads unknown (%s)" % e)
    return "; ".join(parts)


def watcher_state():
    """Each SIGWINCH watcher this machine's /proc shows (the command's terminal
    is the sandbox's own, out of reach of t.master): its process group, the
    foreground group of its terminal and that terminal's size, and its signal
    masks. Inside a PID namespace the numbers are the host's."""
    parts = []
    for pid, line in processes():
        if b"pty-winch.py" not in line:
            continue
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read().rsplit(")", 1)[1].split()
            fields = signal_fields("/proc/%d/status" % pid)
        except OSError:
            continue
        try:
            fd = os.open("/proc/%d/fd/0" % pid, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
            try:
                size = "%dx%d" % struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))[:2]
            finally:
                os.close(fd)
        except OSError as e:
            size = "unknown (%s)" % e.strerror
        # stat after the name: state, ppid, pgrp, session, tty_nr, tpgid
        parts.append("watcher %d state %s group %s, its terminal's foreground group %s, size %s, %s"
                     % (pid, stat[0], stat[2], stat[5], size, fields_text(fields)))
    return "; ".join(parts) or "no watcher process"


def foreground_state(t):
    """The processes of the terminal's foreground group, each with its signal
    masks: a watcher that got no SIGWINCH either was not in that group or had
    the signal blocked or pending."""
    try:
        group = os.tcgetpgrp(t.master)
    except OSError as e:
        return "foreground group unknown (%s)" % e
    parts = []
    for pid, _ in processes():
        try:
            if os.getpgid(pid) != group:
                continue
            fields = signal_fields("/proc/%d/status" % pid)
        except OSError:
            continue
        parts.append("%d %s %s" % (pid, comm(pid), fields_text(fields)))
    return "foreground group %d: %s" % (group, "; ".join(parts) or "no process")


def mode_resize(t, problems):
    sizes(t, problems, ROWS, COLS, "at start")
    start = len(t.seen)
    t.send("python3 pty-winch.py\r")
    if t.wait_for(b"armed-22", 10, start) < 0:
        problems.append("the SIGWINCH watcher did not start")
        return
    fcntl.ioctl(t.master, termios.TIOCSWINSZ, struct.pack("HHHH", NEW_ROWS, NEW_COLS, 0, 0))
    if t.wait_for(b"winch-33", 10, start) < 0:
        armed = bytes(t.seen[start:]).split(b"armed-22", 1)[1].split(b"\n", 1)[0].strip()
        problems.append("the foreground process got no SIGWINCH within 10 s of the resize%s; size now %r; %s; %s"
                        % (" (its watcher said: %s)" % armed.decode(errors="replace") if armed else "",
                           struct.unpack("HHHH", fcntl.ioctl(t.master, termios.TIOCGWINSZ, b"\0" * 8))[:2],
                           foreground_state(t), signal_state(t) + "; " + watcher_state()))
    if t.sync(15) is None:
        problems.append("the shell did not come back after the watcher")
        return
    sizes(t, problems, NEW_ROWS, NEW_COLS, "after the resize")


def check_raw(t, problems):
    during = termios.tcgetattr(t.master)
    if during[3] & (termios.ICANON | termios.ISIG):
        problems.append("the caller's terminal was not raw during the run (ICANON or ISIG on)")
    else:
        print("during the run the caller's terminal was raw (ICANON and ISIG off)")


def check_restored(t, problems, how):
    differ = []
    for _ in range(30):  # the reaper restores them a moment after a SIGKILL
        differ = modes_differ(t.before, termios.tcgetattr(t.master))
        if not differ:
            print("after %s the terminal's modes are as before" % how)
            return
        time.sleep(0.1)
    problems.append("after %s the terminal's modes differ from before in: %s" % (how, ", ".join(differ)))


def mode_exit(t, problems):
    t.send("echo slp-$((3*7)); sleep 1.%s; exit 3\r" % TOKEN)
    if t.wait_for(b"slp-21", 10) < 0:
        problems.append("the sleep did not start")
        return
    t.read_for(0.3)
    check_raw(t, problems)
    code = t.wait_exit(15)
    if code != 3:
        problems.append("exit 3 gave status %s" % code)
    else:
        print("exit status 3 passed through")
    check_restored(t, problems, "exit 3")


def mode_signal(t, problems, sig):
    if not sleep_started(t, problems, 30):
        return
    check_raw(t, problems)
    target = launcher_pid(t.pid)
    print("sent %s to pid %d (%s)" % (signal.Signals(sig).name, target, comm(target)))
    os.kill(target, sig)
    code = t.wait_exit(10)
    if code is None:
        problems.append("sbx did not end within 10 s of %s" % signal.Signals(sig).name)
        return
    print("ended with status %d" % code)
    check_restored(t, problems, signal.Signals(sig).name)
    for _ in range(50):
        if not sleepers_left():
            break
        time.sleep(0.1)
    left = sleepers_left()
    if left:
        problems.append("processes of the sandbox were left behind: %s" % left)


def mode_tiocsti(t, problems, control):
    start = len(t.seen)
    t.send("python3 pty-tiocsti.py\r")
    if t.wait_for(b"tiocsti done-77", 10, start) < 0:
        problems.append("the TIOCSTI script did not finish within 10 s")
        return
    # Time for an injected line to be read and run, then two echoes behind it.
    t.read_for(0.5)
    t.sync()
    t.read_for(0.5)
    t.sync()
    out = bytes(t.seen[start:])
    results = dict(re.findall(rb"(tiocsti [^ :]+|tioclinux 0): ([^\r\n]*)", out))
    for name, result in sorted(results.items()):
        print("%s: %s" % (name.decode(), result.decode()))
    ran = sorted(set(re.findall(rb"inj-42-([^\r\n]*)", out)))
    print("injected lines run by the shell: %s" % (b" ".join(ran).decode() or "none"))
    if control:
        if not ran:
            problems.append("control: no injected line was run")
        return
    if ran:
        problems.append("injected input reached the shell: %s" % b" ".join(ran).decode())
    for name in (b"tiocsti 0", b"tiocsti 1", b"tiocsti 2", b"tioclinux 0"):
        if results.get(name) != b"errno 1":
            problems.append("%s: %s, not EPERM" % (name.decode(), (results.get(name) or b"no result").decode()))
    tty = results.get(b"tiocsti /dev/tty")
    if tty not in (b"errno 1", None) and not tty.startswith(b"cannot open"):
        problems.append("tiocsti /dev/tty: %s, not EPERM" % tty.decode())


def mode_fds(t, problems, control):
    out = t.sync(15, command="python3 pty-fds.py")
    if out is None:
        problems.append("the descriptor scan did not finish within 15 s")
        return
    for line in re.findall(rb"fds [^\r\n]*", out):
        if not line.startswith(b"fds done"):
            print(line.decode())
    held = re.search(rb"fds caller terminal at: ([^\r\n]*)", out)
    if held is None:
        problems.append("the descriptor scan printed no result")
    elif control and not re.search(rb"/proc/\d+/fd/0( |$)", held.group(1)):
        problems.append("control: no process inside has the caller's terminal as its fd 0")
    elif not control and held.group(1) != b"none":
        problems.append("the caller's terminal is held inside: %s" % held.group(1).decode())
    unreadable = re.search(rb"unreadable ([^\r\n]*)", out)
    if not control and unreadable is not None and unreadable.group(1) != b"none":
        problems.append("the descriptors of some processes inside could not be read: %s" % unreadable.group(1).decode())
    by_path = re.search(rb"fds caller terminal by path: ([^\r\n]*)", out)
    if not control and by_path is not None and by_path.group(1) != b"none":
        problems.append("a path inside names the caller's terminal: %s" % by_path.group(1).decode())


def tool(t, problems, name, command, ready, keys, seconds=15):
    """Starts COMMAND, waits for READY, types KEYS (bytes, or a pause in seconds), and waits for the prompt."""
    start = len(t.seen)
    t.send(command + "\r")
    if t.wait_for(ready, seconds, start) < 0:
        problems.append("%s: %r did not show within %d s" % (name, ready.decode(), seconds))
        return None
    t.read_for(0.3)
    keys_at = len(t.seen)
    for k in keys:
        if isinstance(k, float):
            t.read_for(k)
        else:
            t.send(k)
    # Typed before the tool has quit, the echo would go to the tool.
    if t.wait_for(PROMPT, seconds, keys_at) < 0 or t.sync(seconds) is None:
        problems.append("%s: the shell did not come back within %d s" % (name, seconds))
        return None
    print("%s quit and the shell came back" % name)
    return bytes(t.seen[start:])


def mode_tool(t, problems, name):
    if name == "python":
        out = tool(t, problems, name, "python3 -q", b">>> ", [b"6*7\r", 0.3, b"exit()\r"])
        if out is not None and not re.search(rb"\n42\r?\n", out):
            problems.append("python: 6*7 did not print 42")
    elif name == "node":
        out = tool(t, problems, name, "node", b"> ", [b"6*7\r", 0.3, b".exit\r"], seconds=30)
        if out is not None and not re.search(rb"\n(\x1b\[[0-9;]*m)?42(\x1b\[[0-9;]*m)?\r?\n", out):
            problems.append("node: 6*7 did not print 42")
    elif name == "less":
        out = tool(t, problems, name, "less pty-less.txt", b"less-line-005", [0.3, b"q"])
        if out is not None and (b"less-line-036" not in out or b"less-line-040" in out):
            problems.append("less: did not show one screen of lines 1-36")
    elif name == "vim":
        tool(t, problems, name, "vim -u NONE -N -i NONE pty-vim.txt", b'"pty-vim.txt" [New',
             [b"ihello", 0.3, b"\x1b", 1.5, b":wq\r"])
        try:
            with open("pty-vim.txt") as f:
                text = f.read()
        except OSError as e:
            text = "(not written: %s)" % e.strerror
        if text != "hello\n":
            problems.append("vim: pty-vim.txt holds %r, not 'hello\\n'" % text)
        else:
            print("vim wrote hello into pty-vim.txt")
    elif name == "git":
        tool(t, problems, name, "git -C addp add -p", b"Stage this hunk", [b"y\r"])
    elif name == "top":
        tool(t, problems, name, "top", b"load average", [0.3, b"q"])


def throughput(total, argv):
    t = Term(argv)
    got = 0
    try:
        while got < total:
            ready, _, _ = select.select([t.master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(t.master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            got += len(chunk) - chunk.count(b"\r")
        seconds = time.monotonic() - t.started
    finally:
        t.close()
    print("bytes %d seconds %.3f MB/s %.1f" % (got, seconds, got / seconds / 1e6))
    return 0 if got == total else 1


class Deadline(Exception):
    pass


def past_deadline(signum, frame):
    raise Deadline()


DEADLINE = 60


def main():
    args = sys.argv[1:]
    if len(args) >= 4 and args[0] == "throughput" and args[2] == "--":
        return throughput(int(args[1]), args[3:])
    if len(args) < 3 or args[0] not in MODES or args[1] != "--":
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    mode, argv = args[0], args[2:]
    problems = []
    t = Term(argv)
    helpers = write_helpers(t)
    signal.signal(signal.SIGALRM, past_deadline)
    signal.alarm(DEADLINE)
    try:
        if start_shell(t, problems):
            if mode == "jobs":
                mode_jobs(t, problems)
            elif mode.startswith("ctrl-c"):
                mode_ctrl_c(t, problems, mode == "ctrl-c-stays")
            elif mode == "ctrl-z":
                mode_ctrl_z(t, problems)
            elif mode == "resize":
                mode_resize(t, problems)
            elif mode == "exit":
                mode_exit(t, problems)
            elif mode in ("sigterm", "sigkill"):
                mode_signal(t, problems, signal.SIGTERM if mode == "sigterm" else signal.SIGKILL)
            elif mode.startswith("tiocsti"):
                mode_tiocsti(t, problems, mode == "tiocsti-control")
            elif mode.startswith("fds"):
                mode_fds(t, problems, mode == "fds-control")
            else:
                mode_tool(t, problems, mode)
    except Deadline:
        problems.append("the mode had not ended %d s after the start" % DEADLINE)
    finally:
        signal.alarm(0)
        t.close()
        for name in helpers:
            try:
                os.unlink(name)
            except OSError:
                pass
    for p in problems:
        print("problem: " + p)
    if problems:
        print(t.tail())
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
