"""A built site served over http from 127.0.0.1, for a browser to open: the PDF printer
(tools/make_pdf.py) and the browser tests (tests/browser/test_site.py's `site` fixture) use it.

    with serve(Path("_build/html")) as url:    # url: http://127.0.0.1:<a free port>
        ...
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
def serve(directory: Path) -> Iterator[str]:
    """``directory`` over http on 127.0.0.1 (a free port), in a thread; yields its address."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
