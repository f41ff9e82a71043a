"""Tiny misbehaving (and well-behaved) stdio peers for tests/transports/test_trio_transports.py.

Usage: python stdio_child.py MODE [ARGS...]

  echo                  echo every stdin line to stdout; exit 0 at EOF
  fail                  write two lines to stderr, exit with status 3
  trap LOG [ignore]     log SIGINT/SIGTERM names to LOG (or ignore them with SIG_IGN),
                        print our grandchild's pid and "ready", then never exit on its own
  flood N               write N bytes of numbered lines to stderr, then echo
  oversize N            write one N-byte line to stdout, then wait for stdin EOF
  partial               write half a JSON message (no newline) to stdout, exit 0
  deaf                  close stdin, print "ready", then stay alive until killed
  server                an echo server built on trimcp's open_stdio_server_stream
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def echo() -> None:
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def trap(log: str, ignore: bool) -> None:
    def record(signum: int, frame: object) -> None:
        with open(log, "a") as f:
            f.write(signal.Signals(signum).name + "\n")

    handler = signal.SIG_IGN if ignore else record
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    # A grandchild in our process group: shutdown signals must reach it too.
    # It inherits no pipe of ours, so it cannot keep the test's stdio open.
    grandchild = subprocess.Popen(
        ["sleep", "1000"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    print(grandchild.pid, flush=True)
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def flood(n: int) -> None:
    written = 0
    i = 0
    while written < n:
        line = f"stderr line {i} " + "x" * 100 + "\n"
        sys.stderr.write(line)
        written += len(line)
        i += 1
    sys.stderr.write("flood done\n")
    sys.stderr.flush()
    echo()


def oversize(n: int, first: str = "") -> None:
    # One write: a reader sees ``first`` and the runaway line in the same chunk.
    sys.stdout.write(first + "x" * n + "\n")
    sys.stdout.flush()
    sys.stdin.read()


def server() -> None:
    import trio

    from trimcp._errors import TransportClosed
    from trimcp._sansio import jsonrpc
    from trimcp._trio.transports.stdio import open_stdio_server_stream

    async def main() -> None:
        async with open_stdio_server_stream() as stream:
            while True:
                try:
                    item = await stream.receive()
                except TransportClosed:
                    print("server: stdin closed", file=sys.stderr, flush=True)
                    return
                parsed = item.payload
                for msg in parsed.messages:
                    if isinstance(msg, jsonrpc.Request):
                        await stream.send(jsonrpc.Response(msg.id, {"echo": msg.params}))

    trio.run(main)


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode == "echo":
        echo()
    elif mode == "fail":
        sys.stderr.write("starting up\nfatal: cannot open database\n")
        sys.stderr.flush()
        sys.exit(3)
    elif mode == "trap":
        trap(args[0], ignore=args[1:] == ["ignore"])
    elif mode == "flood":
        flood(int(args[0]))
    elif mode == "oversize":
        oversize(int(args[0]), args[1] + "\n" if len(args) > 1 else "")
    elif mode == "partial":
        sys.stdout.write('{"jsonrpc":"2.0","id":1,"res')
        sys.stdout.flush()
    elif mode == "server":
        server()
    elif mode == "deaf":
        os.close(0)  # a write to our stdin now fails with EPIPE, yet we live on
        print("ready", flush=True)
        while True:
            time.sleep(3600)
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
