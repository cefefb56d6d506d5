#!/bin/sh
# with-redis.sh COMMAND...: runs COMMAND with a private redis-server (Debian's, installed by scripts/setup) on a
# free loopback port, given to it as LA_TEST_REDIS=redis://127.0.0.1:PORT, and stops the server afterwards
# whatever COMMAND returned. Nothing is saved to disk.
set -u
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --pidfile "$dir/redis.pid" --dir "$dir" --logfile "$dir/redis.log" || { rm -rf "$dir"; exit 1; }
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done
LA_TEST_REDIS="redis://127.0.0.1:$port" "$@"
status=$?
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$(cat "$dir/redis.pid")" 2>/dev/null
rm -rf "$dir"
exit $status
