"""The Redis broker transport, made to survive the broker going away.

kombu's Redis transport, on losing the connection, closes its channel and restores
the messages the worker holds but has not acknowledged (the deadline tasks waiting
for their eta). By then kombu has already dropped the connection's details, so the
restore raises AttributeError ('NoneType' object has no attribute 'hostname'),
which the worker does not expect: it exits, holding its scheduled tasks, and
freshness evaluation stops until someone restarts it.

Here the restore is skipped when the connection is gone. Nothing is lost: the
messages stay in the broker's unacked set, and a worker restores them once the
visibility timeout passes; the beat sweep records any deadline in between.
Selected by CELERY_BROKER_TRANSPORT for redis:// brokers (registry/settings.py).
"""

from __future__ import annotations

from kombu.transport import redis


class QoS(redis.QoS):
    def restore_unacked_once(self, stderr=None):
        if self.channel.connection.client is None:
            self._on_collect.cancel()
            return None
        return super().restore_unacked_once(stderr)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
