"""bench/progress.py: owns the progress line of the bench scripts (Python 3
stdlib only).

On a terminal, one status line at the bottom of stderr, rewritten in
place: how many steps of the run are done, what is running now, the time
so far and an estimate of the time left. The scripts' log lines go through
`log`, which prints them above it. When stderr is not a terminal (CI, a
log file) there is no status line, only the log lines.

    progress = Progress(total_steps, "kernel runs")
    progress.status("hash under aarchx: counting SIZE 4096")
    progress.log("hash: ok ...")
    progress.advance()
    progress.close()
"""

import shutil
import sys
import time


def duration(seconds):
    """`42s`, `3m05s`, `1h02m`."""
    s = int(seconds)
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%dh%02dm" % (s // 3600, s % 3600 // 60)


class Progress:
    def __init__(self, total, unit, stream=None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.total, self.unit, self.done = max(1, total), unit, 0
        self.start = time.time()
        self.now = ""
        self.shown = False

    def _line(self):
        elapsed = time.time() - self.start
        left = ""
        if self.done:
            left = ", ~%s left" % duration(elapsed / self.done * (self.total - self.done))
        text = "[%d/%d %s] %s (%s%s)" % (self.done, self.total, self.unit, self.now, duration(elapsed), left)
        width = shutil.get_terminal_size((100, 24)).columns - 1
        return text[:width]

    def _clear(self):
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.shown = False

    def _draw(self):
        if self.live:
            self._clear()
            self.stream.write(self._line())
            self.stream.flush()
            self.shown = True

    def status(self, text):
        """What runs now (shown on a terminal only)."""
        self.now = text
        self._draw()

    def log(self, msg, out=None):
        """A line printed above the status line: a log line on stderr, or
        on `out` (a result line on stdout, which may share the terminal)."""
        self._clear()
        self.stream.flush()
        print(msg, file=out or self.stream, flush=True)
        self._draw()

    def advance(self, n=1):
        """`n` more steps done."""
        self.done = min(self.total, self.done + n)
        self._draw()

    def close(self):
        """Removes the status line."""
        self._clear()
        self.stream.flush()
