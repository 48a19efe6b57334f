#!/usr/bin/env bash
# Runs docs/deployment.md as written: every ```bash block preceded by `<!-- walkthrough -->`, in order, in one
# shell, against a throwaway PostgreSQL 15 cluster (initialised as Debian does: peer authentication on the
# socket, scram-sha-256 over TCP) and a private nginx, on free loopback ports, in a scratch directory.
#
# The page's machine-wide commands are stood in for by shell functions: `sudo` (as root: runuser), `systemctl`
# (a thinking-hats@PORT unit runs deploy/thinking-hats@.service's ExecStart with its EnvironmentFile; `reload`
# sends SIGHUP; nginx runs from the scratch directory) and `nginx` (-t checks the private configuration).
# Needs: PostgreSQL 15 server binaries, nginx, curl, openssl, and thinking-hats installed (THINKING_HATS names
# the command; default: .venv/bin/thinking-hats, then PATH). Run as root (PostgreSQL then runs as `postgres`).
#
#   sudo bash deploy/walkthrough.sh            # exit 0: every step worked, ending with an MCP call through nginx
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
PAGE="$REPO/docs/deployment.md"
UNIT="$REPO/deploy/thinking-hats@.service"
export PATH="$PATH:/usr/lib/postgresql/15/bin:/usr/sbin"
THINKING_HATS="${THINKING_HATS:-}"
if [ -z "$THINKING_HATS" ]; then
  if [ -x "$REPO/.venv/bin/thinking-hats" ]; then THINKING_HATS="$REPO/.venv/bin/thinking-hats"
  else THINKING_HATS="$(command -v thinking-hats)"; fi
fi
[ "$(id -u)" -eq 0 ] || { echo "walkthrough: run as root (PostgreSQL runs as the postgres user)" >&2; exit 2; }
id postgres >/dev/null 2>&1 || { echo "walkthrough: no 'postgres' user: apt-get install postgresql" >&2; exit 2; }
for tool in initdb postgres pg_isready nginx curl openssl runuser; do
  command -v "$tool" >/dev/null || { echo "walkthrough: $tool not found" >&2; exit 2; }
done

SCRATCH="$(mktemp -d /tmp/th-walkthrough-XXXXXX)"
chmod 755 "$SCRATCH"
PIDS=()
cleanup() {
  local status=$?
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -z "${PG_DATA:-}" ] || runuser -u postgres -- pg_ctl -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ]; then
    echo "walkthrough: FAILED (status $status); logs:" >&2
    tail -n 40 "$SCRATCH"/*.log "$SCRATCH"/pg/*.log >&2 2>/dev/null || true
  fi
  rm -rf "$SCRATCH"
  exit "$status"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- the throwaway PostgreSQL cluster, as Debian sets one up ---
PG_DATA="$SCRATCH/pg/data"
install -d -o postgres -g postgres -m 700 "$SCRATCH/pg"
runuser -u postgres -- initdb -D "$PG_DATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 \
  -E UTF8 --locale=C --no-sync >"$SCRATCH/initdb.log"
export PGPORT; PGPORT="$(free_port)"
export PGHOST_DIR="$SCRATCH/pg"
runuser -u postgres -- pg_ctl -D "$PG_DATA" -l "$SCRATCH/pg/postgres.log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$PGPORT -c unix_socket_directories=$PGHOST_DIR -c fsync=off" start >/dev/null

# --- the names of step 2, in the scratch directory and on free loopback ports ---
export ETC="$SCRATCH/etc" NGINX_SITE="$SCRATCH/nginx/thinking-hats.conf" PUBLIC_NAME="team.example.com"
export PORT_1 PORT_2 NGINX_LISTEN
PORT_1="$(free_port)"; PORT_2="$(free_port)"; NGINX_LISTEN="127.0.0.1:$(free_port)"
mkdir -p "$SCRATCH/nginx" "$SCRATCH/systemd"
SYSTEMD_DIR="$SCRATCH/systemd"

# --- stand-ins for the machine-wide commands ---
sudo() {
  if [ "${1:-}" = "-u" ]; then local user="$2"; shift 2; runuser -u "$user" -- "$@"; else "$@"; fi
}

nginx() {
  if [ "${1:-}" = "-t" ]; then command nginx -t -p "$SCRATCH/nginx" -c "$SCRATCH/nginx/nginx.conf"; return; fi
  command nginx "$@"
}

start_replica() {  # the unit's ExecStart for instance $1, with its EnvironmentFile, as systemd would run it
  local port="$1" line
  line="$(sed -n 's/^ExecStart=//p' "$SYSTEMD_DIR/thinking-hats@.service")"
  line="${line//%i/$port}"
  line="${line/\/opt\/thinking-hats\/bin\/thinking-hats/$THINKING_HATS}"
  local envfile; envfile="$(sed -n 's/^EnvironmentFile=//p' "$SYSTEMD_DIR/thinking-hats@.service")"
  envfile="${envfile/\/etc\/thinking-hats/$ETC}"
  (set -a; . "$envfile"; set +a; export THINKING_DATA_DIR="$SCRATCH/data-$port"; exec $line) \
    >"$SCRATCH/replica-$port.log" 2>&1 &
  PIDS+=("$!")
  eval "REPLICA_PID_$port=$!"
}

# nginx's main configuration (Debian's /etc/nginx/nginx.conf includes conf.d/*.conf inside `http` the same way).
temps=""
for kind in client_body proxy fastcgi uwsgi scgi; do temps+="${kind}_temp_path $SCRATCH/nginx/$kind; "; done
cat >"$SCRATCH/nginx/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $SCRATCH/nginx/nginx.pid;
error_log $SCRATCH/nginx.log warn;
events { worker_connections 256; }
http { access_log off; $temps include $NGINX_SITE; }
CONF

start_nginx() {
  if [ ! -s "$SCRATCH/nginx/nginx.pid" ]; then
    command nginx -p "$SCRATCH/nginx" -c "$SCRATCH/nginx/nginx.conf" -g "daemon off;" 2>>"$SCRATCH/nginx.log" &
    PIDS+=("$!")
    local tries=0
    until curl -s -o /dev/null "http://$NGINX_LISTEN/"; do
      tries=$((tries + 1)); [ "$tries" -lt 150 ] || { echo "nginx did not start" >&2; return 1; }; sleep 0.1
    done
  fi
}

systemctl() {
  local verb="$1"; shift
  case "$verb" in
    daemon-reload) ;;
    enable) [ "${1:-}" = "--now" ] && shift && systemctl start "$@" ;;
    start)
      for unit in "$@"; do
        case "$unit" in
          thinking-hats@*) start_replica "${unit#thinking-hats@}" ;;
          nginx) start_nginx ;;
          *) echo "walkthrough: no stand-in to start $unit" >&2; return 1 ;;
        esac
      done ;;
    reload)
      for unit in "$@"; do
        case "$unit" in
          thinking-hats@*) local var="REPLICA_PID_${unit#thinking-hats@}"; kill -HUP "${!var}" ;;
          nginx) start_nginx; command nginx -p "$SCRATCH/nginx" -c "$SCRATCH/nginx/nginx.conf" -s reload ;;
          *) echo "walkthrough: no stand-in to reload $unit" >&2; return 1 ;;
        esac
      done ;;
    *) echo "walkthrough: no stand-in for systemctl $verb" >&2; return 1 ;;
  esac
}

cp() {  # the page copies into /etc/systemd/system: into the scratch directory instead
  if [ "${2:-}" = /etc/systemd/system/ ]; then command cp "$1" "$SYSTEMD_DIR/"; else command cp "$@"; fi
}

# --- the page's blocks, in order ---
BLOCKS="$SCRATCH/blocks.sh"
awk '
  /^<!-- walkthrough -->[[:space:]]*$/ { marked = 1; next }
  marked && /^```bash[[:space:]]*$/ { inside = 1; marked = 0; n++; printf "echo \"== walkthrough: block %d\" >&2\n", n; next }
  inside && /^```[[:space:]]*$/ { inside = 0; next }
  inside { print; next }
  /[^[:space:]]/ { marked = 0 }
' "$PAGE" >"$BLOCKS"
grep -q "block 8" "$BLOCKS" || { echo "walkthrough: fewer marked blocks in $PAGE than expected" >&2; exit 1; }
# shellcheck source=/dev/null
. "$BLOCKS"
echo "walkthrough: every step of docs/deployment.md worked (PostgreSQL :$PGPORT, replicas :$PORT_1 :$PORT_2, nginx $NGINX_LISTEN)" >&2
