"""The progress line of a scan on a terminal's stderr."""

from __future__ import annotations

import sys
import time


class Progress:
    """One line on a terminal's stderr, redrawn at most ten times a second: batches done,
    samples/s and the time left. Nothing at all when stderr is not a terminal, so that
    logs and pipes get only the report."""

    def __init__(self, total, enabled):
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self.last = 0.0
        self.start = time.monotonic()

    def update(self, done, samples):
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done != self.total:
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        rate = samples / elapsed
        if self.total:
            width = 30
            filled = int(width * done / self.total)
            bar = "#" * filled + "." * (width - filled)
            left = elapsed * (self.total - done) / done
            text = (
                f"\rscan: batch {done}/{self.total} [{bar}] {100 * done // self.total:3d}%"
                f"  {rate:,.0f} samples/s  ETA {duration(left)}"
            )
        else:
            text = f"\rscan: batch {done}  {rate:,.0f} samples/s"
        sys.stderr.write(text + "\033[K")
        sys.stderr.flush()

    def close(self, done, samples):
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        sys.stderr.write(f"\r\033[Kscan: {done} batches, {samples:,} samples in {duration(elapsed)}\n")
        sys.stderr.flush()


def duration(seconds):
    """ "42s", "3m07s", "1h02m" """
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


# --------------------------------------------------------------------------- main
