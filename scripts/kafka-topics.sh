#!/usr/bin/env bash
# Thin wrapper around Kafka's TopicCommand using the jars and java that
# scripts/services.sh resolved, e.g.
#   scripts/kafka-topics.sh --create --topic openlineage.events --partitions 4
# --bootstrap-server defaults to 127.0.0.1:$THREADLINE_KAFKA_PORT (19092).
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -f $KAFKA_LIBS/kafka-tools-$KAFKA_VERSION.jar ]] ||
  die "Kafka jars not found in $KAFKA_LIBS: run scripts/services.sh start first"

args=("$@")
if [[ " $* " != *" --bootstrap-server "* && " $* " != *" --bootstrap-server="* ]]; then
  args=(--bootstrap-server "127.0.0.1:$KAFKA_PORT" "${args[@]}")
fi
kafka_tool_cmd
exec "${KAFKA_TOOL[@]}" org.apache.kafka.tools.TopicCommand "${args[@]}"
