"""Stopping the daemons a benchmark started, by the pid in their pidfile
(never by name: another instance on the machine is not ours)."""
import contextlib
import os
import signal
import time


def stop_pidfile(pidfile, wait_s=10.0):
    """SIGTERM to the pid in `pidfile`, SIGKILL if it still runs after
    `wait_s` seconds.  A missing pidfile or process is not an error."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(open(pidfile).read())
        os.kill(pid, signal.SIGTERM)
        for _ in range(int(wait_s * 10)):
            os.kill(pid, 0)  # OSError once it is gone
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
