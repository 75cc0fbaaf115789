"""A built site served over http from 127.0.0.1, for a browser to open: the PDF printer
(tools/make_pdf.py) and the browser tests (tests/browser/test_site.py's `site` fixture) use it,
and `make serve` (for a browser that refuses the pages opened from disk).

    with serve(Path("_build/html")) as url:    # url: http://127.0.0.1:<a free port>
        ...

    python tools/static_server.py --port 8000 _build/html      # until Ctrl-C
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """The standard file handler, without a log line per request."""

    def log_message(self, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    """A threading server that lets a browser drop a connection without a traceback (a page
    closed before a download finished, say); any other error is reported as usual."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serve(directory: Path, port: int = 0) -> Iterator[str]:
    """``directory`` over http on 127.0.0.1 (`port`, or a free one), in a thread; yields its
    address."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = _Server(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Serve a built site on 127.0.0.1.")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    if not (args.directory / "index.html").is_file():
        raise SystemExit(f"static_server: no site in {args.directory} (make book first)")
    with serve(args.directory, args.port) as url:
        print(f"static_server: {args.directory} at {url}/ (Ctrl-C stops it)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
