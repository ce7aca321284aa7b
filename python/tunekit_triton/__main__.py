"""python3 -m tunekit_triton MODE ...: the processes tunekit's Triton backend starts.

  worker --device N --cache DIR       one per device: trials (the channel of protocol.open_channel)
  compile-server --device N --cache DIR   one per build job: compile requests, same framing
  inspect                              one JSON request on stdin, the kernel file's checks on stdout
  describe --device N                  the device as constraints see it, JSON on stdout

TRITON_CACHE_DIR is set from --cache before Triton is imported, so the compile
helpers of a device and its worker share one cache: the worker loads what the
helpers compiled. TUNEKIT_TRITON_FAKE=1 runs the fake compiler and runner
(tunekit_triton.fake) instead of Triton, for tests without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def _parse(argv):
    p = argparse.ArgumentParser(prog="python3 -m tunekit_triton")
    p.add_argument("mode", choices=["worker", "compile-server", "inspect", "describe"])
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--cache", default="")
    p.add_argument("--answer-fd", type=int, default=3, help="where answers go when started by hand (tunekit names its own pipes in the environment)")
    return p.parse_args(argv)


def _answer_line(j) -> None:
    """The one-shot modes' answer, on a line of its own: tunekit reads the
    last line of the output that is a JSON object (the kernel file's and
    Triton's own prints come before it, on stdout and stderr alike), and a
    kernel file that printed without a newline at import would otherwise
    share that line with the answer and hide it."""
    print("\n" + json.dumps(j), flush=True)


def main(argv=None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
        os.environ["TRITON_CACHE_DIR"] = args.cache
    from . import fake

    if args.mode == "inspect":
        from .inspect_kernel import inspect_request

        _answer_line(inspect_request(json.loads(sys.stdin.read())))
        return 0
    if args.mode == "describe":
        from .inspect_kernel import describe

        _answer_line(describe(args.device))
        return 0

    from .protocol import open_channel

    channel = open_channel(args.answer_fd)
    if args.mode == "compile-server":
        if fake.enabled():
            handle = fake.compile_variant
        else:
            from .compile import handle
        if not fake.enabled() and not os.environ.get("TRITON_INTERPRET"):
            import torch

            if torch.cuda.is_available():
                torch.cuda.set_device(args.device)
        for request in channel.requests():
            channel.answer(handle(request))
        return 0

    from .worker import serve

    if fake.enabled():
        runner = fake.FakeRunner()
    else:
        from .runner import TritonRunner

        runner = TritonRunner(args.device)
    return serve(runner, channel)


if __name__ == "__main__":
    sys.exit(main())
