"""/proc helpers shared by the bench scripts (imported from their Python)."""
import os


def tree(pid):
    """`pid` and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def status_kb(pid, key, default=None):
    """A `/proc/PID/status` field in kB (`VmRSS`, `VmHWM`), else `default`."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return default
