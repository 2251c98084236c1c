"""The Kafka client's read buffer is ours to size (aiokafka takes it from a module constant)."""

import aiokafka.conn
import pytest

from consumer.kafka_reads import set_read_buffer
from consumer.settings import ConsumerSettings

pytestmark = pytest.mark.unit


def test_the_setting_sizes_aiokafkas_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aiokafka.conn, "READER_LIMIT", 2**16)
    set_read_buffer(ConsumerSettings().kafka.read_buffer_bytes)
    assert aiokafka.conn.READER_LIMIT == 4 * 1024 * 1024


def test_an_aiokafka_without_the_constant_keeps_its_own(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delattr(aiokafka.conn, "READER_LIMIT")
    set_read_buffer(1 << 20)
    assert not hasattr(aiokafka.conn, "READER_LIMIT")
    assert "READER_LIMIT not found" in caplog.text
