#!/bin/bash
# Times coin-shop commands (KioskKit) against a store over HTTP and one over HTTPS, and an untrusted TLS root.
# Build first (swift build), then: bash scripts/coin-shop-https-timing.sh [RUNS]   (default 5 runs per command)
set -u
N=${1:-5}
B=$(cd "$(dirname "$0")/.." && pwd)/.build/debug
W=$(mktemp -d /tmp/kiosk-timing.XXXX)
TOKEN=kiosk_measure_admin_token_0001
"$B/kiosk" certs tls --host localhost --host 127.0.0.1 --data-dir "$W/tls-data" > /dev/null
ROOT="$W/tls-data/tls/kiosk-tls-root.pem"
HP=${KIOSK_TIMING_HTTP_PORT:-18481}; SP=${KIOSK_TIMING_HTTPS_PORT:-18482}   # free ports for the two stores
env -u KIOSK_SERVER "$B/kiosk" serve --port $HP --data-dir "$W/http-data" --admin-token $TOKEN --log-level warning > "$W/http.log" 2>&1 &
P1=$!
"$B/kiosk" serve --port $SP --data-dir "$W/tls-data" --admin-token $TOKEN --log-level warning \
  --tls-certificate "$W/tls-data/tls/localhost.pem" --tls-key "$W/tls-data/tls/localhost.key" > "$W/https.log" 2>&1 &
P2=$!
for i in $(seq 1 100); do grep -q "listening" "$W/http.log" && grep -q "listening" "$W/https.log" && break; sleep 0.2; done
setup() {
  local S=$1
  k() { "$B/kiosk" "$@" --server "$S" --token $TOKEN --tls-root "$ROOT" > /dev/null || echo "FAILED: $*"; }
  k apps create --bundle-id com.example.shop --name Shop
  k products create --app com.example.shop --id com.example.shop.coins --type consumable --reference-name Coins --tier 1 --locale en_US --display-name "100 Coins" --description coins
  k agreements accept --legal-name "Coin Game Ltd" --country GBR --bank-account "GB29 NWBK 6016 1331 9268 19" --bank-currency GBP --tax-form W-8BEN-E --tax-id 98-7654321
  k testers create --email t@example.com --password sandbox-pass
}
setup http://127.0.0.1:$HP
setup https://127.0.0.1:$SP
run() {
  local S=$1 name=$2; shift 2
  local total=0
  for i in $(seq 1 $N); do
    local start=$(date +%s.%N)
    "$B/coin-shop" "$@" --server "$S" --tls-root "$ROOT" > "$W/out" 2>&1 || { echo "FAILED $name: $(tail -2 $W/out)"; }
    local end=$(date +%s.%N)
    local t=$(echo "$end - $start" | bc)
    total=$(echo "$total + $t" | bc)
    printf "%s run %d: %.2f s\n" "$name" $i $t
  done
  printf "%s mean: %.2f s\n" "$name" $(echo "$total / $N" | bc -l)
}
run http://127.0.0.1:$HP "http  products" products --email t@example.com --password sandbox-pass --state-dir "$W/phone-http"
run https://127.0.0.1:$SP "https products" products --email t@example.com --password sandbox-pass --state-dir "$W/phone-https"
run http://127.0.0.1:$HP "http  buy coins" buy coins --state-dir "$W/phone-http"
run https://127.0.0.1:$SP "https buy coins" buy coins --state-dir "$W/phone-https"
run http://127.0.0.1:$HP "http  balance" balance --state-dir "$W/phone-http"
run https://127.0.0.1:$SP "https balance" balance --state-dir "$W/phone-https"
# An untrusted root: coin-shop without --tls-root against the https store.
start=$(date +%s.%N)
env -u KIOSK_TLS_ROOT "$B/coin-shop" products --server https://127.0.0.1:$SP --email t@example.com --password sandbox-pass --state-dir "$W/phone-untrusted" > "$W/untrusted" 2>&1
rc=$?
end=$(date +%s.%N)
printf "untrusted root: %.2f s, exit %s\n" $(echo "$end - $start" | bc) "$rc"
head -3 "$W/untrusted"
kill $P1 $P2
wait $P1 $P2 2>/dev/null
rm -rf "$W"
