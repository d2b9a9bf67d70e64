"""The embedded broker: kombu's filesystem transport with an atomic write and a kernel wake-up.

kombu creates a message file and then writes into it; a worker polling in between takes the empty
file, fails to decode it, and exits, and the message is lost (a known fault of kombu's filesystem
transport). Here a message is written under a name no reader looks at and then renamed into place,
which is atomic on POSIX.

kombu's transport looks at the folder every ``polling_interval`` (0.1 s here), so a run waited 50 ms
on average before a worker saw it, and polling faster costs an idle worker CPU. On Linux the worker
instead asks the kernel (inotify, through ``inotify_simple``) to wake it when a message is renamed
into the folder: it picks a run up at once and, idle, looks at the folder once a second
(``IDLE_LOOK_SECONDS``, a safety net only). Without inotify it polls as kombu does.
"""

import logging
import os
import uuid
from queue import Empty
from time import monotonic

from celery.app.amqp import AMQP as CeleryAMQP
from kombu import Connection as KombuConnection
from kombu.transport import filesystem
from kombu.transport import redis as redis_transport
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps
from redis.exceptions import ConnectionError as RedisConnectionError

try:  # Linux only; elsewhere the transport polls
    import inotify_simple
except ImportError:  # pragma: no cover (the test machines are Linux)
    inotify_simple = None

log = logging.getLogger("reviewer.broker")  # the name log filters know, kept when the module moved

IDLE_LOOK_SECONDS = 1.0


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")  # readers skip: no ".msg" suffix
        try:
            with open(partial, "wb") as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel

    _watch = None  # the inotify instance, made on the first wait; False when unavailable

    def _watcher(self):
        if self._watch is None:
            self._watch = False
            options = self.client.transport_options
            folders = [options.get(k) for k in ("data_folder_in", "control_folder")]
            if inotify_simple is not None and options.get("data_folder_in"):
                try:
                    watch = inotify_simple.INotify()
                    mask = inotify_simple.flags.MOVED_TO | inotify_simple.flags.CLOSE_WRITE
                    for folder in filter(None, folders):
                        if os.path.isdir(folder):
                            watch.add_watch(folder, mask)
                    self._watch = watch
                except OSError as error:  # e.g. the inotify watch limit: poll instead
                    log.warning("broker: no inotify (%s); polling every %s s", error, self.polling_interval)
        return self._watch

    def drain_events(self, connection, timeout=None):
        """kombu's loop, but between two empty looks the worker sleeps until the kernel says a file
        arrived (or ``IDLE_LOOK_SECONDS`` passed) instead of a fixed ``polling_interval``."""
        watch = self._watcher()
        if not watch:
            return super().drain_events(connection, timeout)
        started = monotonic()
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                left = None if timeout is None else timeout - (monotonic() - started)
                if left is not None and left <= 0:
                    raise TimeoutError() from None
                wait = IDLE_LOOK_SECONDS if left is None else min(IDLE_LOOK_SECONDS, left)
                watch.read(timeout=int(wait * 1000))  # returns at the first event; reading drains them

    def close_connection(self, connection):
        if self._watch:
            self._watch.close()
        self._watch = None
        return super().close_connection(connection)


# -- Redis: a worker survives a broker restart with tasks in flight ---------------------------------


class RedisChannel(redis_transport.Channel):
    """kombu's Redis channel, failing like a lost connection when its connection is already closed.

    When Redis goes away while a worker holds unacknowledged tasks (late acknowledgement: every run in
    flight), Celery's consumer first collects the broken connection, which detaches the transport
    from it, and then closes it. Closing the channel a second time restores the unacknowledged tasks
    and asks the detached transport for Redis's address: kombu 5.7 raises
    ``AttributeError: 'NoneType' object has no attribute 'hostname'``, which Celery cannot recover
    from, and the worker exits ("Unrecoverable error"). Raised as a connection error instead, kombu
    and Celery treat it as what it is, a lost connection: the close is ignored, the worker reconnects,
    and the tasks wait in Redis for the visibility timeout (or, after a restart without persistence,
    the sweeps enqueue their runs and deliveries again).
    """

    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise RedisConnectionError("the connection to the broker is closed")
        return super()._connparams(asynchronous=asynchronous)


class RedisTransport(redis_transport.Transport):
    Channel = RedisChannel


# -- Reconnecting: every 2 s at most, however long the broker was away ------------------------------

RECONNECT_MAX_SECONDS = 2


class Connection(KombuConnection):
    """kombu's connection, trying again 1 s after a broker went away, then every 2 s
    (``RECONNECT_MAX_SECONDS``). kombu's own waits grow by 2 s a try up to 30 s, so a worker or beat
    whose Redis was away for minutes noticed its return up to 30 s late: the runs, deliveries and
    notices that the sweeps send again waited as long. A try costs a refused TCP connection."""

    def ensure_connection(self, *args, **kwargs):
        kwargs.setdefault("interval_start", 1)
        kwargs.setdefault("interval_step", 1)
        kwargs.setdefault("interval_max", RECONNECT_MAX_SECONDS)
        return super().ensure_connection(*args, **kwargs)


class AMQP(CeleryAMQP):
    """Celery's messaging with :class:`Connection` (``Celery(amqp=...)``): workers, beat and the web."""

    Connection = Connection
