#!/usr/bin/env python3
"""Sign a promotional offer with Apple's own PromotionalOfferSignatureCreator (PyPI `app-store-server-library`).

Prints the base64 DER signature and exits 0; any failure exits 2.

Usage:
  promotional_offer_signature.py --key-file key.p8 --key-id ABCDEFGHIJ --bundle-id com.example.app \
      --product-id com.example.pro.premium --offer-id winback --application-username "" \
      --nonce 1b4e28ba-2fa1-11d2-883f-0016d3cca427 --timestamp 1790000000000
"""

import argparse
import sys
import uuid

from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator


def main() -> int:
    parser = argparse.ArgumentParser(description="Sign a promotional offer as Apple's library does.")
    parser.add_argument("--key-file", required=True, help="the In-App Purchase key's private key, PKCS#8 PEM")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--product-id", required=True)
    parser.add_argument("--offer-id", required=True)
    parser.add_argument("--application-username", default="")
    parser.add_argument("--nonce", required=True)
    parser.add_argument("--timestamp", required=True, type=int)
    arguments = parser.parse_args()
    try:
        with open(arguments.key_file, "rb") as key_file:
            creator = PromotionalOfferSignatureCreator(key_file.read(), arguments.key_id, arguments.bundle_id)
        print(
            creator.create_signature(
                arguments.product_id, arguments.offer_id, arguments.application_username,
                uuid.UUID(arguments.nonce), arguments.timestamp,
            )
        )
    except Exception as error:  # noqa: BLE001 - any failure is reported the same way
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
