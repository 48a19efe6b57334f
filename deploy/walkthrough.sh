#!/usr/bin/env bash
# Runs docs/deployment.md as written, on this machine, as root: every ```bash block preceded by
# `<!-- walkthrough -->`, and those marked `<!-- walkthrough: systemd -->` or `<!-- walkthrough: without systemd -->`
# for the kind of machine this is, in order, in one shell. Nothing is stood in for: apt, the wheel built from this
# checkout and installed in /opt/thinking-hats, Debian's PostgreSQL cluster 15/main, the system's nginx with a site
# in sites-available/sites-enabled beside Debian's default site, and the replicas as systemd units or processes.
#
# It refuses to run where thinking-hats is already deployed, uses other ports when the page's are taken, checks that
# Debian's default site still answers on port 80, and at the end removes what it made and stops what it started
# (nginx and the cluster only if they were not running before), so it can run again on the same machine.
#
#   bash deploy/walkthrough.sh      # as root on Debian 12; exit 0: every step worked
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
PAGE="$REPO/docs/deployment.md"
export PATH="$PATH:/usr/sbin:/sbin"
say() { echo "walkthrough: $*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "run as root (the page's commands are run as root)"; exit 2; }
[ -r /etc/debian_version ] || { say "the page is for Debian 12: no /etc/debian_version here"; exit 2; }
for made in /etc/thinking-hats /opt/thinking-hats /etc/nginx/sites-available/thinking-hats \
            /etc/nginx/sites-enabled/thinking-hats /etc/systemd/system/thinking-hats@.service; do
  if [ -e "$made" ] || [ -L "$made" ]; then
    say "$made exists: thinking-hats is deployed here (or a walkthrough was killed); remove it first"; exit 2
  fi
done
if id thinking-hats >/dev/null 2>&1; then say "the user thinking-hats exists: remove it first (userdel)"; exit 2; fi

if [ -d /run/systemd/system ]; then MODE="systemd"; else MODE="without systemd"; fi
nginx_running() { [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; }
cluster_running() { command -v pg_ctlcluster >/dev/null && pg_ctlcluster 15 main status >/dev/null 2>&1; }
NGINX_WAS_RUNNING=no; nginx_running && NGINX_WAS_RUNNING=yes
CLUSTER_WAS_RUNNING=no; cluster_running && CLUSTER_WAS_RUNNING=yes
if [ "$CLUSTER_WAS_RUNNING" = yes ] &&
   [ "$(runuser -u postgres -- psql -XAtc "SELECT count(*) FROM pg_roles WHERE rolname = 'thinking'")" != 0 ]; then
  say "PostgreSQL 15/main already has a role 'thinking': thinking-hats is deployed here"; exit 2
fi

# The page's names, except ports that something here already listens on (step 1 says to pick free ones).
port_free() { python3 -c 'import socket, sys; s = socket.socket(); s.bind(("0.0.0.0", int(sys.argv[1])))' "$1" 2>/dev/null; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])'; }
export SRC="$REPO"
for pair in PORT_1:8001 PORT_2:8002 NGINX_LISTEN:8080; do
  name="${pair%%:*}"; port="${pair#*:}"
  if ! port_free "$port"; then export "$name=$(free_port)"; say "port $port is in use: $name=${!name}"; fi
done

BLOCKS="$(mktemp /tmp/th-walkthrough-XXXXXX.sh)"
awk -v mode="$MODE" '
  /^<!-- walkthrough -->[[:space:]]*$/ { marked = 1; next }
  /^<!-- walkthrough: .* -->[[:space:]]*$/ { marked = ($0 == "<!-- walkthrough: " mode " -->"); skip = !marked; next }
  (marked || skip) && /^```bash[[:space:]]*$/ {
    inside = 1; n++; if (marked) printf "echo \"== walkthrough: block %d\" >&2\n", n; next }
  inside && /^```[[:space:]]*$/ { inside = 0; if (marked) printf "WALK_DONE=%d\n", n; marked = 0; skip = 0; next }
  inside { if (marked) print; next }
  /[^[:space:]]/ { marked = 0; skip = 0 }
' "$PAGE" >"$BLOCKS"
# The block that creates the role: cleanup drops the role and the database only once it has run.
ROLE_BLOCK="$(awk '/^echo "== walkthrough: block/ { n = $5 + 0 } /CREATE ROLE thinking/ { print n; exit }' "$BLOCKS")"
grep -q "pip wheel" "$BLOCKS" && grep -q "thoughtHistoryLength" "$BLOCKS" && [ -n "$ROLE_BLOCK" ] ||
  { say "fewer marked blocks in $PAGE than expected"; exit 1; }
WALK_DONE=0

cleanup() {
  local status=$?
  set +e
  if [ "$status" -ne 0 ]; then
    say "FAILED (status $status) after block $WALK_DONE; logs:"
    tail -n 30 /var/log/thinking-hats/*.log /var/log/nginx/error.log >&2 2>/dev/null
    [ "$MODE" = systemd ] && journalctl -u 'thinking-hats@*' -n 40 --no-pager >&2 2>/dev/null
  fi
  say "cleaning up"
  local port pid tries
  if [ "$MODE" = systemd ]; then
    systemctl disable --now "thinking-hats@${PORT_1:-8001}" "thinking-hats@${PORT_2:-8002}" 2>/dev/null
    rm -f /etc/systemd/system/thinking-hats@.service
    systemctl daemon-reload
  else
    for port in "${PORT_1:-8001}" "${PORT_2:-8002}"; do
      [ -s "/run/thinking-hats-$port.pid" ] || continue
      pid="$(cat "/run/thinking-hats-$port.pid")"
      kill -TERM "$pid" 2>/dev/null
      for tries in $(seq 700); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      rm -f "/run/thinking-hats-$port.pid"
    done
  fi
  rm -f /etc/nginx/sites-enabled/thinking-hats /etc/nginx/sites-available/thinking-hats
  if nginx_running; then
    if [ "$NGINX_WAS_RUNNING" = yes ]; then service nginx reload >/dev/null; else service nginx stop >/dev/null; fi
  fi
  if [ "$WALK_DONE" -ge "$ROLE_BLOCK" ] && cluster_running; then
    runuser -u postgres -- dropdb --if-exists thinking
    runuser -u postgres -- psql -Xqc "DROP ROLE IF EXISTS thinking"
  fi
  [ "$CLUSTER_WAS_RUNNING" = yes ] || ! cluster_running || pg_ctlcluster 15 main stop
  id thinking-hats >/dev/null 2>&1 && userdel thinking-hats
  rm -rf /etc/thinking-hats /opt/thinking-hats /var/lib/thinking-hats /var/log/thinking-hats "$BLOCKS"
  exit "$status"
}
trap cleanup EXIT

say "running docs/deployment.md ($MODE) from $SRC"
# shellcheck source=/dev/null
. "$BLOCKS"

# Debian's default site is still there, and still what port 80 answers with.
curl -fsS http://127.0.0.1/ | grep -q "Welcome to nginx" || { say "Debian's default site no longer answers on :80"; exit 1; }
say "every step of docs/deployment.md worked ($MODE; replicas :$PORT_1 :$PORT_2, nginx :$NGINX_LISTEN, Debian's default site on :80 as it was)"
