#!/usr/bin/env python3
"""A small merchant server written the way real ones are: Apple's app-store-server-library verifies what the
App Store sends, and an in-memory ledger decides what each user holds. `kiosk check` is proven against it.

    python3 shop_server.py --port 0 --bundle-id com.example.shop --root kiosk-sandbox-root.pem \
        --products products.json [--bug grants-twice|ignores-refund|no-verify|drops-early-refund]

Routes: POST /notifications (App Store Server Notifications V2), POST /purchases (the app reports a purchase),
GET /probe/{appAccountToken}?now=MILLISECONDS (what that user holds at `now`).
"""

import argparse
import base64
import json
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException

BUGS = ("grants-twice", "ignores-refund", "no-verify", "drops-early-refund")
PURCHASES = {"ONE_TIME_CHARGE", "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "DID_CHANGE_RENEWAL_PREF"}
OTHERS = {"DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "EXPIRED", "REFUND",
          "REFUND_REVERSED", "REVOKE", "PRICE_INCREASE", "CONSUMPTION_REQUEST", "REFUND_DECLINED",
          "RENEWAL_EXTENDED"}  # TEST and every type not named here change nothing


def claim(obj, name):
    """A field of a decoded payload: the library's model (its raw value for enums) or a plain dict."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    raw = "raw" + name[0].upper() + name[1:]
    return getattr(obj, raw) if hasattr(obj, raw) else getattr(obj, name, None)


def unverified_claims(jws):
    """The classic mistake (--bug no-verify): read a JWS's payload without checking anything."""
    payload = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def load_root(path):
    """Kiosk's root as DER (the verifier wants DER); the file may be PEM or DER."""
    data = open(path, "rb").read()
    return x509.load_pem_x509_certificate(data).public_bytes(Encoding.DER) if b"-----BEGIN" in data else data


@dataclass
class Record:
    """One transaction, however many times and by whichever path it arrived."""
    product_id: str
    type: str                      # Apple's transaction type: "Consumable", "Auto-Renewable Subscription", …
    quantity: int
    user: str                      # the appAccountToken, lower-cased ("" when none)
    original_id: str
    purchased: int                 # milliseconds since 1970
    expires: int | None
    revoked: bool = False
    upgraded: bool = False
    deliveries: int = 0            # purchase messages seen (only --bug grants-twice credits each one)
    revocation_signed: int = 0     # signedDate of the notification that last revoked or restored it


class Shop:
    def __init__(self, verifier, products, bug=None):
        self.verifier, self.products, self.bug = verifier, products, bug
        self.lock = threading.Lock()
        self.records = {}          # transactionId → Record
        self.renewals = {}         # originalTransactionId → latest renewal info (a dict of the fields we use)

    # --- decoding -------------------------------------------------------------------------------------------

    def decode_notification(self, signed_payload):
        """Raises VerificationException (or ValueError for garbage) when the payload is not to be trusted."""
        if self.bug == "no-verify":
            note = unverified_claims(signed_payload)
            data = note.get("data") or {}
            txn = data.get("signedTransactionInfo")
            info = data.get("signedRenewalInfo")
            return note, unverified_claims(txn) if txn else None, unverified_claims(info) if info else None
        note = self.verifier.verify_and_decode_notification(signed_payload)
        data = note.data
        txn = data.signedTransactionInfo if data else None
        info = data.signedRenewalInfo if data else None
        return (note,
                self.verifier.verify_and_decode_signed_transaction(txn) if txn else None,
                self.verifier.verify_and_decode_renewal_info(info) if info else None)

    # --- state changes (callers hold self.lock) ---------------------------------------------------------------

    def observe(self, txn, purchase, fallback_user=""):
        """Records the transaction once (dedupe by transactionId) and returns its record."""
        tid = str(claim(txn, "transactionId"))
        record = self.records.get(tid)
        if record is None:
            record = Record(
                product_id=claim(txn, "productId"), type=claim(txn, "type"), quantity=claim(txn, "quantity") or 1,
                user=(claim(txn, "appAccountToken") or fallback_user or "").lower(),
                original_id=str(claim(txn, "originalTransactionId") or tid),
                purchased=claim(txn, "purchaseDate") or 0, expires=claim(txn, "expiresDate"),
                # first seen already refunded (an app reporting a refunded purchase): never granted
                revoked=claim(txn, "revocationDate") is not None)
            self.records[tid] = record
        elif not record.user and fallback_user:
            record.user = fallback_user.lower()       # the app tells us whose it is
        # Later states only add: an extension moves the expiry forward, an upgrade is final; never un-revoke here.
        expires = claim(txn, "expiresDate")
        if expires is not None and (record.expires is None or expires > record.expires):
            record.expires = expires
        record.upgraded = record.upgraded or bool(claim(txn, "isUpgraded"))
        if purchase:
            record.deliveries += 1
        return record

    def set_revoked(self, txn, revoked, signed_date):
        tid = str(claim(txn, "transactionId"))
        if revoked and self.bug == "drops-early-refund" and tid not in self.records:
            return                 # the bug: a refund for a purchase not seen yet is lost
        record = self.observe(txn, purchase=False)
        if signed_date < record.revocation_signed:
            return                 # an older REFUND/REVOKE/REFUND_REVERSED delivered again late: stale
        record.revoked, record.revocation_signed = revoked, signed_date

    def remember_renewal(self, info, clear_grace):
        original = str(claim(info, "originalTransactionId"))
        signed = claim(info, "signedDate") or 0
        latest = self.renewals.get(original)
        if latest is None or signed >= latest["signedDate"]:
            latest = self.renewals[original] = {
                "signedDate": signed, "productId": claim(info, "productId"),
                "gracePeriodExpiresDate": claim(info, "gracePeriodExpiresDate")}
        if clear_grace:
            latest["gracePeriodExpiresDate"] = None

    def handle_notification(self, signed_payload):
        note, txn, info = self.decode_notification(signed_payload)
        kind, subtype = claim(note, "notificationType"), claim(note, "subtype")
        signed_date = claim(note, "signedDate") or 0
        if kind not in PURCHASES and kind not in OTHERS:
            return kind            # TEST and unknown types: nothing changes
        with self.lock:
            if info is not None:
                self.remember_renewal(info, clear_grace=kind in ("EXPIRED", "GRACE_PERIOD_EXPIRED"))
            if txn is None:
                return kind
            if kind in ("REFUND", "REVOKE"):
                if not (kind == "REFUND" and self.bug == "ignores-refund"):
                    self.set_revoked(txn, True, signed_date)
            elif kind == "REFUND_REVERSED":
                self.set_revoked(txn, False, signed_date)
            else:
                record = self.observe(txn, purchase=kind in PURCHASES)
                if kind == "DID_CHANGE_RENEWAL_PREF" and subtype == "UPGRADE":
                    # The upgrade starts at once: the period it cuts short (same subscription) no longer counts.
                    for other in self.records.values():
                        if (other is not record and other.original_id == record.original_id
                                and other.purchased <= record.purchased < (other.expires or 0)):
                            other.upgraded = True
        return kind

    def handle_purchase(self, signed_transaction, app_account_token):
        txn = self.verifier.verify_and_decode_signed_transaction(signed_transaction)
        with self.lock:
            record = self.observe(txn, purchase=True, fallback_user=app_account_token)
            return not record.revoked and record.product_id in self.products

    # --- what a user holds ----------------------------------------------------------------------------------

    def holdings(self, user, now):
        entitlements, balances = set(), {}
        with self.lock:
            for record in self.records.values():
                grant = self.products.get(record.product_id)
                if record.user != user or grant is None:
                    continue
                if "balance" in grant:
                    times = max(record.deliveries, 1) if self.bug == "grants-twice" else 1
                    credit = 0 if record.revoked else grant["amount"] * record.quantity * times
                    balances[grant["balance"]] = balances.get(grant["balance"], 0) + credit
                elif record.revoked or record.upgraded:
                    continue
                elif record.type == "Auto-Renewable Subscription":
                    renewal = self.renewals.get(record.original_id) or {}
                    grace = renewal.get("gracePeriodExpiresDate")
                    if record.expires is not None and record.expires > now:
                        entitlements.add(grant["entitlement"])
                    elif grace is not None and grace > now:
                        # billing grace: the product the subscription is on now keeps its entitlement
                        current = self.products.get(renewal.get("productId")) or grant
                        entitlements.add(current.get("entitlement", grant["entitlement"]))
                elif record.expires is None or record.expires > now:   # non-consumable, non-renewing
                    entitlements.add(grant["entitlement"])
        return {"entitlements": sorted(entitlements), "balances": balances}


class Handler(BaseHTTPRequestHandler):
    shop: Shop = None

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        if not isinstance(body, dict):
            raise ValueError("the body is not a JSON object")
        return body

    def do_POST(self):
        try:
            body = self.read_json()
        except ValueError as error:
            return self.answer(400, {"error": f"bad body: {error}"})
        try:
            if self.path == "/notifications":
                kind = self.shop.handle_notification(str(body.get("signedPayload") or ""))
                return self.answer(200, {"received": kind})
            if self.path == "/purchases":
                granted = self.shop.handle_purchase(
                    str(body.get("signedTransaction") or ""), str(body.get("appAccountToken") or ""))
                return self.answer(200, {"granted": granted})
            return self.answer(404, {"error": "no such route"})
        except (VerificationException, ValueError, IndexError, KeyError, AttributeError) as error:
            return self.answer(400, {"error": f"not verified: {error!r}"})   # nothing changed
        except Exception as error:   # our fault: 500, and the store delivers the notification again later
            return self.answer(500, {"error": repr(error)})

    def do_GET(self):
        url = urlsplit(self.path)
        if not url.path.startswith("/probe/"):
            return self.answer(404, {"error": "no such route"})
        user = url.path[len("/probe/"):].lower()
        try:
            now = int(parse_qs(url.query).get("now", [time.time() * 1000])[0])
        except ValueError:
            return self.answer(400, {"error": "now: milliseconds since 1970"})
        return self.answer(200, self.shop.holdings(user, now))

    def log_message(self, format, *args):
        sys.stderr.write("shop_server: " + (format % args) + "\n")


def main():
    parser = argparse.ArgumentParser(description="A sample merchant server for `kiosk check`.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--root", required=True, help="the store's root certificate, PEM or DER")
    parser.add_argument("--products", required=True, help="JSON: [{productId, entitlement} | {productId, balance, amount}]")
    parser.add_argument("--bug", choices=BUGS, help="make one classic mistake")
    args = parser.parse_args()

    products = {}
    for product in json.load(open(args.products)):
        if "entitlement" in product or ("balance" in product and "amount" in product):
            products[product["productId"]] = product
    verifier = SignedDataVerifier([load_root(args.root)], enable_online_checks=False,
                                  environment=Environment.SANDBOX, bundle_id=args.bundle_id, app_apple_id=None)
    Handler.shop = Shop(verifier, products, args.bug)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"listening on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
