#!/usr/bin/env bash
# Starts a local PostgreSQL for the storage contract tests and prints its URL as the last stdout line:
#
#     export KIOSK_TEST_POSTGRES_URL=$(bash .ci/postgres.sh | tail -1)
#
# Idempotent: installs PostgreSQL from Debian's packages only when missing, creates a cluster only when there is
# none, starts it only when it is down, and (re)sets the `kiosk` role's password every time. Works as root in a
# container without systemd (pg_ctlcluster runs the server as user postgres). Everything but the URL goes to stderr.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
PORT=5432
ROLE=kiosk
PASSWORD=kiosk
DATABASE=kiosk

log() { echo "postgres.sh: $*" >&2; }

# Runs a command as the postgres user (root uses runuser; anyone else needs sudo).
as_postgres() {
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        sudo -u postgres -- "$@"
    fi
}

if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ -z "$(ls /usr/lib/postgresql 2>/dev/null)" ]; then
    log "installing PostgreSQL from Debian's packages"
    apt-get update >&2
    apt-get install -y postgresql >&2
fi

VERSION=$(ls /usr/lib/postgresql | sort -n | tail -1)

if ! pg_lsclusters --no-header | awk '{print $1" "$2}' | grep -qx "$VERSION main"; then
    log "creating cluster $VERSION/main"
    pg_createcluster "$VERSION" main --port "$PORT" >&2
fi

CONF_DIR=/etc/postgresql/$VERSION/main
# Listen on loopback only, on the expected port; a conf.d file keeps the packaged postgresql.conf untouched.
mkdir -p "$CONF_DIR/conf.d"
cat >"$CONF_DIR/conf.d/kiosk.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PORT
max_connections = 200
EOF
chown -R postgres:postgres "$CONF_DIR/conf.d"

STATUS=$(pg_lsclusters --no-header | awk -v v="$VERSION" '$1 == v && $2 == "main" {print $4}')
if [ "$STATUS" != "online" ]; then
    log "starting cluster $VERSION/main"
    pg_ctlcluster "$VERSION" main start >&2
fi

for _ in $(seq 1 60); do
    if pg_isready -h 127.0.0.1 -p "$PORT" -q; then
        break
    fi
    sleep 0.5
done
if ! pg_isready -h 127.0.0.1 -p "$PORT" -q; then
    log "PostgreSQL did not become ready on 127.0.0.1:$PORT; see /var/log/postgresql/"
    exit 1
fi

# cd / so psql, run as postgres, does not complain about an unreadable current directory.
cd /
if [ "$(as_postgres psql -p "$PORT" -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != "1" ]; then
    log "creating role $ROLE"
    as_postgres psql -p "$PORT" -v ON_ERROR_STOP=1 -qc "CREATE ROLE $ROLE LOGIN PASSWORD '$PASSWORD'" >&2
else
    as_postgres psql -p "$PORT" -v ON_ERROR_STOP=1 -qc "ALTER ROLE $ROLE LOGIN PASSWORD '$PASSWORD'" >&2
fi
if [ "$(as_postgres psql -p "$PORT" -tAc "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" != "1" ]; then
    log "creating database $DATABASE"
    as_postgres createdb -p "$PORT" -O "$ROLE" "$DATABASE" >&2
fi

# Prove the password login works before handing out the URL.
PGPASSWORD=$PASSWORD psql -h 127.0.0.1 -p "$PORT" -U "$ROLE" -d "$DATABASE" \
    -v ON_ERROR_STOP=1 -qtAc "SELECT 1" >/dev/null

echo "postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DATABASE"
