#!/usr/bin/env bash
# Starts a standalone Tributary worker, taking what Apache Kafka's connect-standalone.sh
# takes: [-daemon] connect-standalone.properties [connector1.properties connector2.json …]
here="${BASH_SOURCE[0]%/*}"; [ "$here" = "${BASH_SOURCE[0]}" ] && here=.
exec "$here/tributary-run-class.sh" standalone connectStandalone \
  "[-daemon] connect-standalone.properties [connector1.properties connector2.json ...]" "$@"
