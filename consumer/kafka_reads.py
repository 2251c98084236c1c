"""The Kafka client's socket read buffer, which aiokafka does not take as a parameter."""

import logging

import aiokafka.conn

log = logging.getLogger("threadline.consumer")


def set_read_buffer(limit: int) -> None:
    """Read Kafka responses through a buffer of up to `limit` bytes (aiokafka: 64 KiB).

    aiokafka makes each broker connection's asyncio StreamReader with the module constant
    `aiokafka.conn.READER_LIMIT`; the reader pauses the socket once twice that much is
    buffered and resumes it when read, so a multi-MiB fetch response took dozens of
    pause/resume turns of the event loop. The constant is read when a connection is made:
    this runs before the broker connects. An aiokafka without it keeps its default (logged).
    """
    if not isinstance(getattr(aiokafka.conn, "READER_LIMIT", None), int):
        log.warning("aiokafka.conn.READER_LIMIT not found: Kafka reads keep aiokafka's buffer")
        return
    aiokafka.conn.READER_LIMIT = limit
