#!/usr/bin/env python3
"""Verify a Kiosk-signed JWS with Apple's own verifier (PyPI `app-store-server-library`).

Kiosk's signing chain must satisfy Apple's SignedDataVerifier exactly as it runs for merchants: OpenSSL with
X509_STRICT, the marker extensions, ES256 with an x5c of three certificates. This script runs that verifier
with online (OCSP) checks off, or on with `--online`: then the chain is validated at the wall clock and the
library POSTs an OCSP request (SHA-256 CertID) to the URL in the intermediate's and the leaf's
AuthorityInformationAccess extension, i.e. to the Kiosk store that signed the data.

On success it prints the decoded object as JSON and exits 0. When the verifier refuses the data it prints
`VerificationException <STATUS>` and exits 1; when an enum-typed field holds a value that is not a member of Apple's
enum (which Apple's model keeps as a raw value) it prints `UnknownEnumValue <field>=<value>, …` and exits 3. Any other failure (bad arguments, unreadable files, a payload
the library cannot decode into its model) exits 2.

Usage:
  verify_signed_data.py --root-der root.der --environment Sandbox --bundle-id com.example.app \
      --app-apple-id 1400000001 --kind notification --jws-file signed.jws [--online]
"""

import argparse
import json
import sys

from apple_enums import unknown_enum_values
from appstoreserverlibrary.models.AppTransaction import AppTransaction
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.JWSRenewalInfoDecodedPayload import JWSRenewalInfoDecodedPayload
from appstoreserverlibrary.models.JWSTransactionDecodedPayload import JWSTransactionDecodedPayload
from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
from appstoreserverlibrary.models.ResponseBodyV2DecodedPayload import ResponseBodyV2DecodedPayload
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException

ENVIRONMENTS = {"Sandbox": Environment.SANDBOX, "Production": Environment.PRODUCTION}
KINDS = {
    "notification": ("verify_and_decode_notification", ResponseBodyV2DecodedPayload),
    "transaction": ("verify_and_decode_signed_transaction", JWSTransactionDecodedPayload),
    "renewal": ("verify_and_decode_renewal_info", JWSRenewalInfoDecodedPayload),
    "app-transaction": ("verify_and_decode_app_transaction", AppTransaction),
}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Verify Kiosk signed data with Apple's SignedDataVerifier.")
    parser.add_argument("--root-der", required=True, help="the trusted root certificate, DER")
    parser.add_argument("--environment", required=True, choices=sorted(ENVIRONMENTS))
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--app-apple-id", required=True, type=int)
    parser.add_argument("--kind", required=True, choices=sorted(KINDS))
    parser.add_argument("--jws-file", required=True, help="a file holding the compact JWS")
    parser.add_argument(
        "--online", action="store_true", help="enable_online_checks=True: ask the certificates' OCSP responders"
    )
    return parser.parse_args()


def main() -> int:
    arguments = parse_arguments()
    with open(arguments.root_der, "rb") as file:
        root = file.read()
    with open(arguments.jws_file, "r", encoding="ascii") as file:
        jws = file.read().strip()

    verifier = SignedDataVerifier(
        root_certificates=[root],
        enable_online_checks=arguments.online,
        environment=ENVIRONMENTS[arguments.environment],
        bundle_id=arguments.bundle_id,
        app_apple_id=arguments.app_apple_id,
    )
    method_name, model = KINDS[arguments.kind]
    try:
        decoded = getattr(verifier, method_name)(jws)
    except VerificationException as error:
        print(f"VerificationException {error.status.name}")
        return 1
    unknown = unknown_enum_values(decoded)
    if unknown:
        print("UnknownEnumValue " + ", ".join(unknown))
        return 3
    print(json.dumps(_get_cattrs_converter(model).unstructure(decoded), sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
