#!/usr/bin/env python3
"""Sign a promotional offer (V2) or an introductory-offer eligibility with Apple's own JWS signature creators
(PyPI `app-store-server-library`: PromotionalOfferV2SignatureCreator, IntroductoryOfferEligibilitySignatureCreator).

Prints the compact JWS and exits 0; any failure exits 2.

Usage:
  signed_offer_jws.py promotional --key-file key.p8 --key-id ABCDEFGHIJ --issuer-id ISSUER \
      --bundle-id com.example.app --product-id com.example.pro.premium --offer-id comeback [--transaction-id 2000…]
  signed_offer_jws.py introductory --key-file key.p8 --key-id ABCDEFGHIJ --issuer-id ISSUER \
      --bundle-id com.example.app --product-id com.example.pro.monthly --allow true --transaction-id 2000…
"""

import argparse
import sys

from appstoreserverlibrary.jws_signature_creator import (
    IntroductoryOfferEligibilitySignatureCreator,
    PromotionalOfferV2SignatureCreator,
)


def main() -> int:
    parser = argparse.ArgumentParser(description="Sign an offer as Apple's library does.")
    parser.add_argument("kind", choices=["promotional", "introductory"])
    parser.add_argument("--key-file", required=True, help="the In-App Purchase key's private key, PKCS#8 PEM")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--issuer-id", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--product-id", required=True)
    parser.add_argument("--offer-id")
    parser.add_argument("--transaction-id")
    parser.add_argument("--allow", choices=["true", "false"])
    arguments = parser.parse_args()
    try:
        with open(arguments.key_file, "rb") as key_file:
            key = key_file.read()
        if arguments.kind == "promotional":
            creator = PromotionalOfferV2SignatureCreator(
                key, arguments.key_id, arguments.issuer_id, arguments.bundle_id)
            print(creator.create_signature(arguments.product_id, arguments.offer_id, arguments.transaction_id))
        else:
            creator = IntroductoryOfferEligibilitySignatureCreator(
                key, arguments.key_id, arguments.issuer_id, arguments.bundle_id)
            print(creator.create_signature(
                arguments.product_id, arguments.allow == "true", arguments.transaction_id))
    except Exception as error:  # noqa: BLE001 - any failure is reported the same way
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
