#!/usr/bin/env bash
# Starts MirrorMaker 2 in dedicated mode on Tributary's native MirrorMaker connectors, taking
# what Apache Kafka's connect-mirror-maker.sh takes: [-daemon] mm2.properties [--clusters A B]
here="${BASH_SOURCE[0]%/*}"; [ "$here" = "${BASH_SOURCE[0]}" ] && here=.
exec "$here/tributary-run-class.sh" mirror-maker mirrorMaker \
  "[-daemon] mm2.properties [--clusters CLUSTER ...]" "$@"
