"""A long-running filter process for the tests (Git's protocol, version 2).

``filter_process.py LOG CAPABILITY...`` upper-cases on clean and lower-cases on
smudge, appending one line per event to LOG.  Content starting with ``error`` gets
``status=error``, ``abort`` gets ``status=abort``, ``die`` makes it exit mid-answer.
"""

import sys

LOG = open(sys.argv[1], "a")  # noqa: SIM115 (lives as long as the process)
WANTED = set(sys.argv[2:])
IN, OUT = sys.stdin.buffer, sys.stdout.buffer


def log(text):
    LOG.write(text + "\n")
    LOG.flush()


def read():
    head = IN.read(4)
    if len(head) < 4:
        log("STOP")
        sys.exit(0)
    size = int(head, 16)
    return None if size == 0 else IN.read(size - 4)


def lines():
    out = []
    while (p := read()) is not None:
        out.append(p.decode().rstrip("\n"))
    return out


def write(payload):
    OUT.write(b"%04x" % (len(payload) + 4) + payload)


def flush():
    OUT.write(b"0000")
    OUT.flush()


log("START")
assert lines() == ["git-filter-client", "version=2"]
write(b"git-filter-server\n")
write(b"version=2\n")
flush()
offered = {line.split("=", 1)[1] for line in lines()}
for name in sorted(WANTED & offered):
    write(b"capability=%s\n" % name.encode())
flush()
while True:
    header = dict(line.split("=", 1) for line in lines())
    content = b""
    while (p := read()) is not None:
        content += p
    log(" ".join(f"{k}={v}" for k, v in sorted(header.items())) + f" size={len(content)}")
    if content.startswith(b"die"):
        sys.exit(1)
    if content.startswith((b"error", b"abort")):
        write(b"status=%s\n" % content[:5])
        flush()
        continue
    out = content.upper() if header["command"] == "clean" else content.lower()
    write(b"status=success\n")
    flush()
    for i in range(0, len(out), 1000):  # several packets for a large file
        write(out[i : i + 1000])
    flush()
    flush()  # an empty list: the status stays "success"
