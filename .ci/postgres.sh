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
#
# max_connections: the most a whole `swift test` run can open at once, with headroom. Tests on PostgreSQL hold one
# of 12 slots (KioskTestSupport's PostgresTestSlots); one test opens at most a store pool of 3, a merchant pool of 2
# (in process or a `kiosk merchant serve --database-pool-size 2`) and 1 connection to drop its schema, or, in the
# storage suite, 4 openers × 2 plus its own 2: at most 10. Worst case 12 × 10 = 120; 200 leaves 80 for psql, a
# second run and PostgreSQL's reserved slots. Changing the slots or the pools? Change this sum too.
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
else
    # A running server reads max_connections only at start: restart it if it runs with another value.
    running=$(cd / && as_postgres psql -p "$PORT" -tAc "SHOW max_connections" 2>/dev/null || true)
    if [ "$running" != "200" ]; then
        log "restarting cluster $VERSION/main for max_connections = 200 (was ${running:-unknown})"
        pg_ctlcluster "$VERSION" main restart >&2
    fi
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

# Schemas earlier runs left behind (a test process killed before it could drop its own) go now, one at a time
# (each holds a lock per table).
leftovers=$(as_postgres psql -p "$PORT" -d "$DATABASE" -tAc \
    "SELECT quote_ident(nspname) FROM pg_namespace WHERE nspname LIKE 'kiosk\\_test\\_%'")
if [ -n "$leftovers" ]; then
    log "dropping $(echo "$leftovers" | wc -l) test schemas left by earlier runs"
    for schema in $leftovers; do
        as_postgres env PGOPTIONS="-c client_min_messages=warning" \
            psql -p "$PORT" -d "$DATABASE" -v ON_ERROR_STOP=1 -qc "DROP SCHEMA $schema CASCADE" >&2
    done
fi

# Prove the password login works before handing out the URL.
PGPASSWORD=$PASSWORD psql -h 127.0.0.1 -p "$PORT" -U "$ROLE" -d "$DATABASE" \
    -v ON_ERROR_STOP=1 -qtAc "SELECT 1" >/dev/null

echo "postgres://$ROLE:$PASSWORD@127.0.0.1:$PORT/$DATABASE"
