#!/usr/bin/env bash
# Shared by connect-distributed.sh, connect-standalone.sh and connect-mirror-maker.sh of a
# Tributary release archive:
# reads the environment Apache Kafka's launch scripts read, hands the JVM options to
# Tributary's embedded JVM (which hosts Java plugins of plugin.path), says which variables do
# not apply, and runs the worker in the foreground or, with -daemon, in the background with
# its output in $LOG_DIR/<name>.out, as kafka-run-class.sh does.
#
# usage: tributary-run-class.sh <distributed|standalone|mirror-maker> <daemon name> <usage> [args…]

mode="$1"; daemon_name="$2"; usage="$3"; shift 3
here="${BASH_SOURCE[0]%/*}"; [ "$here" = "${BASH_SOURCE[0]}" ] && here=.
home="$(cd "$here/.." && pwd)"

say() { echo "$daemon_name: $*" >&2; }

daemon=false
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -daemon) daemon=true; shift ;;
    -name) [ $# -ge 2 ] && daemon_name="$2"; shift 2 ;;
    -loggc) say "-loggc does not apply: Tributary's worker has no garbage collector to log"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ${#args[@]} -lt 1 ]; then
  echo "USAGE: $0 $usage" >&2
  exit 1
fi

# JVM options for the embedded JVM (used only when plugin.path holds Java plugins). Unlike
# kafka-run-class.sh, no heap is imposed when KAFKA_HEAP_OPTS is unset.
opts=""
for v in KAFKA_HEAP_OPTS KAFKA_JVM_PERFORMANCE_OPTS KAFKA_OPTS; do
  if [ -n "${!v:-}" ]; then opts="$opts ${!v}"; fi
done
if [ -n "$opts" ]; then
  export TRIBUTARY_JVM_OPTIONS="${TRIBUTARY_JVM_OPTIONS:-}$opts"
fi
# What Apache's scripts read that has no counterpart here: said once, never silently dropped.
[ -n "${KAFKA_LOG4J_OPTS:-}" ] && say "KAFKA_LOG4J_OPTS does not apply: the worker logs to standard error; set levels with TRIBUTARY_LOG or /admin/loggers"
[ -n "${KAFKA_JMX_OPTS:-}" ] && say "KAFKA_JMX_OPTS does not apply: there is no JMX; metrics are served on the REST listener's /metrics"
[ -n "${JMX_PORT:-}" ] && say "JMX_PORT does not apply: there is no JMX; metrics are served on the REST listener's /metrics"
[ -n "${KAFKA_GC_LOG_OPTS:-}" ] && say "KAFKA_GC_LOG_OPTS does not apply: the worker is not a JVM"
[ -n "${KAFKA_DEBUG:-}" ] && say "KAFKA_DEBUG does not apply: the worker is not a JVM"
[ -n "${CLASSPATH:-}" ] && say "CLASSPATH does not apply: put connector plugins in a directory of plugin.path"
[ -n "${EXTRA_ARGS:-}" ] && say "EXTRA_ARGS does not apply"

bin="$home/bin/tributary"
if [ "$daemon" = true ]; then
  log_dir="${LOG_DIR:-$home/logs}"
  mkdir -p "$log_dir"
  out="$log_dir/$daemon_name.out"
  if command -v nohup >/dev/null 2>&1; then
    nohup "$bin" "$mode" "${args[@]}" > "$out" 2>&1 < /dev/null &
  else
    trap '' HUP
    "$bin" "$mode" "${args[@]}" > "$out" 2>&1 < /dev/null &
  fi
  exit 0
fi
[ -n "${LOG_DIR:-}" ] && say "LOG_DIR applies with -daemon only: in the foreground the worker logs to standard error"
exec "$bin" "$mode" "${args[@]}"
