#!/usr/bin/env bash
# Brings up what the integration tests need on this machine: PostgreSQL and
# MariaDB on loopback (started if stopped), and an etcd binary from which the
# tests start their own clusters (installed from Debian's etcd-server if
# missing), ZooKeeper's jar from which the zkstore tests start their own
# servers (Debian's zookeeper, never zookeeperd, which would start a system
# server; if missing), Spin for the model checks in model/ (Debian's spin, if
# missing), and Chromium for the browser test in test/browser (Debian's
# chromium, if missing), and Prometheus with promtool for the alert tests in
# docs/ (Debian's prometheus, if missing, installed with a policy-rc.d that
# keeps its system server from starting). Idempotent; prints one line per
# service.
set -uo pipefail

say() { printf 'services: %s\n' "$*"; }

if command -v pg_isready >/dev/null 2>&1; then
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start >/dev/null 2>&1 || true
    for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
  pg_isready -q -h 127.0.0.1 -p 5432 && say "postgres up" || say "postgres NOT reachable"
else
  say "postgres client tools missing"
fi

if command -v mysqladmin >/dev/null 2>&1 || command -v mariadb-admin >/dev/null 2>&1; then
  ping() { (mariadb-admin -h 127.0.0.1 -u root ping || mysqladmin -h 127.0.0.1 -u root ping) >/dev/null 2>&1; }
  if ! ping; then
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd >/dev/null 2>&1 || true
    for _ in $(seq 30); do ping && break; sleep 1; done
  fi
  ping && say "mariadb up" || say "mariadb NOT reachable"
else
  say "mariadb client tools missing"
fi

if ! command -v etcd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q etcd-server >/dev/null 2>&1; }
  fi
fi
command -v etcd >/dev/null 2>&1 && say "etcd $(etcd --version | head -n 1 | awk '{print $3}') at $(command -v etcd)" || say "etcd NOT installed"
zkjar=/usr/share/java/zookeeper.jar
if [ ! -f "$zkjar" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends zookeeper >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends zookeeper >/dev/null 2>&1; }
  fi
fi
[ -f "$zkjar" ] && command -v java >/dev/null 2>&1 && say "zookeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null) at $zkjar" || say "zookeeper NOT installed"
if ! command -v spin >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q spin >/dev/null 2>&1
  fi
fi
command -v spin >/dev/null 2>&1 && say "spin $(spin -V | awk '{print $3}') at $(command -v spin)" || say "spin NOT installed"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1
  fi
fi
command -v chromium >/dev/null 2>&1 && say "$(chromium --version 2>/dev/null | head -n 1) at $(command -v chromium)" || say "chromium NOT installed"
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1
    policy=/usr/sbin/policy-rc.d
    own=false
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own=true
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >/dev/null 2>&1
    if $own; then rm -f "$policy"; fi
  fi
fi
command -v promtool >/dev/null 2>&1 && say "prometheus $(prometheus --version 2>/dev/null | head -n 1 | awk '{print $3}') at $(command -v prometheus)" || say "prometheus NOT installed"
exit 0
