#!/usr/bin/env bash
# Starts a Tributary worker of a distributed cluster, taking what Apache Kafka's
# connect-distributed.sh takes: [-daemon] connect-distributed.properties
here="${BASH_SOURCE[0]%/*}"; [ "$here" = "${BASH_SOURCE[0]}" ] && here=.
exec "$here/tributary-run-class.sh" distributed connectDistributed \
  "[-daemon] connect-distributed.properties" "$@"
