"""The web server's worker: gunicorn's threaded worker that hands a connection to a thread only once
its request's headers have arrived, and closes it if they take longer than HEADER_TIMEOUT_SECONDS.

gunicorn's ``gthread`` worker gives a connection to one of its threads as soon as the first byte
arrives, and the thread then blocks reading the rest of the headers, for as long as the client
takes. A client that sends a byte every few seconds (slowloris) holds a thread for good: 2 processes
x 16 threads are taken by 32 such sockets, and the site stops answering. Here the worker's main loop,
which already waits on every idle connection without a thread, also collects each request's header
block, without blocking; a thread is given the connection when the block is complete (the bytes
read are handed to gunicorn's parser), a connection that has not completed it within
HEADER_TIMEOUT_SECONDS is closed, and one whose headers exceed MAX_HEADER_BYTES is answered 431 and
closed. A slow client then costs a socket and a few bytes, not a thread.

What it does not cover: a client that sends its headers and then its body slowly holds the thread
that reads the body (a form post's body is small; the TLS proxy in front buffers bodies, see
docs/deploy.md). With TLS inside gunicorn or cleartext HTTP/2 it falls back to gunicorn's behaviour
(neither is configured here: TLS ends at the proxy).

Built on gunicorn 27's ``gthread`` worker (its ``enqueue_req``, ``handle`` and ``murder_pending``);
pyproject.toml pins the major version.
"""

import errno
import selectors
import time
from functools import partial

from gunicorn.workers.gthread import ThreadWorker

HEADER_TIMEOUT_SECONDS = 10  # from the connection's first wait for a request to its header block's end
MAX_HEADER_BYTES = 64 * 1024  # more without the end of the headers: 431 and closed (no thread is risked)
END_OF_HEADERS = (b"\r\n\r\n", b"\n\n")
TOO_LARGE = b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


class HeaderTimeoutWorker(ThreadWorker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reading_headers = {}  # connection -> deadline: connections whose headers are still coming

    def collects_headers(self) -> bool:
        return not self.cfg.is_ssl and getattr(self.cfg, "http2_cleartext", "") not in ("prior-knowledge", "both")

    def enqueue_req(self, conn):
        """A thread for ``conn`` once its request's headers are in (main loop only)."""
        parser = conn.parser
        already_buffered = parser is not None and parser.unreader.buf.getvalue()
        if not self.collects_headers() or getattr(conn, "head", None) is not None or already_buffered:
            return super().enqueue_req(conn)
        conn.head = b""
        conn.sock.setblocking(False)
        self.reading_headers[conn] = time.monotonic() + HEADER_TIMEOUT_SECONDS
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.read_headers, conn))

    def read_headers(self, conn, sock):
        try:
            chunk = sock.recv(MAX_HEADER_BYTES)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return
            chunk = b""
        if not chunk:  # the client went away before sending a whole request
            return self.drop_reading(conn)
        conn.head += chunk
        if not any(end in conn.head for end in END_OF_HEADERS):
            if len(conn.head) >= MAX_HEADER_BYTES:
                try:
                    sock.send(TOO_LARGE)
                except OSError:
                    pass
                self.drop_reading(conn)
            return
        self.poller.unregister(sock)
        del self.reading_headers[conn]
        conn.data_ready = True  # gunicorn's thread must not wait for data that is already here
        super().enqueue_req(conn)

    def drop_reading(self, conn):
        self.poller.unregister(conn.sock)
        del self.reading_headers[conn]
        self.nr_conns -= 1
        conn.close()

    def handle(self, conn):
        """In a thread: give the collected bytes to gunicorn's parser, then serve as gunicorn does."""
        head, conn.head = getattr(conn, "head", None), None
        if head:
            conn.sock.setblocking(True)
            conn.init()
            conn.parser.unreader.unread(head)
        return super().handle(conn)

    def murder_pending(self):
        """gunicorn's clean-up of idle connections, run by the main loop about once a second, plus
        the connections whose headers did not arrive in time."""
        super().murder_pending()
        now = time.monotonic()
        for conn in [conn for conn, deadline in self.reading_headers.items() if deadline <= now]:
            self.drop_reading(conn)
