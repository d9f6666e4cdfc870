#!/usr/bin/env python3
"""Verify a batch of Kiosk-signed JWS with Apple's own SignedDataVerifier (PyPI `app-store-server-library`),
one process for many payloads.

Reads a JSON file: {"rootDer": "<base64 DER>", "environment": "Sandbox"|"Production", "bundleId": "...",
"appAppleId": 1400000001, "payloads": [{"kind": "notification"|"transaction"|"renewal"|"app-transaction"|"realtime-request",
"jws": "..."}]}. Prints a JSON list, one entry per payload in order: {"decoded": {...}} with the object Apple's
model decoded (unstructured: the JSON field names, absent fields left out), or {"error": "<why>"} when the verifier
refused it, its model could not decode it, or an enum-typed field holds a value that is not a member of Apple's enum
(`UnknownEnumValue notificationType='DID_RENEWW'`). Exits 0 when it could read its input, 2 otherwise.
"""

import base64
import json
import sys

from apple_enums import unknown_enum_values
from appstoreserverlibrary.models.AppTransaction import AppTransaction
from appstoreserverlibrary.models.DecodedRealtimeRequestBody import DecodedRealtimeRequestBody
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.JWSRenewalInfoDecodedPayload import JWSRenewalInfoDecodedPayload
from appstoreserverlibrary.models.JWSTransactionDecodedPayload import JWSTransactionDecodedPayload
from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
from appstoreserverlibrary.models.ResponseBodyV2DecodedPayload import ResponseBodyV2DecodedPayload
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException

KINDS = {
    "notification": ("verify_and_decode_notification", ResponseBodyV2DecodedPayload),
    "transaction": ("verify_and_decode_signed_transaction", JWSTransactionDecodedPayload),
    "renewal": ("verify_and_decode_renewal_info", JWSRenewalInfoDecodedPayload),
    "app-transaction": ("verify_and_decode_app_transaction", AppTransaction),
    "realtime-request": ("verify_and_decode_realtime_request", DecodedRealtimeRequestBody),
}


def main() -> int:
    try:
        with open(sys.argv[1], "r", encoding="utf-8") as file:
            batch = json.load(file)
        verifier = SignedDataVerifier(
            root_certificates=[base64.b64decode(batch["rootDer"])],
            enable_online_checks=False,
            environment={"Sandbox": Environment.SANDBOX, "Production": Environment.PRODUCTION}[batch["environment"]],
            bundle_id=batch["bundleId"],
            app_apple_id=batch.get("appAppleId"),
        )
    except (OSError, KeyError, IndexError, ValueError) as error:
        print(f"unreadable input: {error!r}", file=sys.stderr)
        return 2
    results = []
    for payload in batch["payloads"]:
        method_name, model = KINDS[payload["kind"]]
        try:
            decoded = getattr(verifier, method_name)(payload["jws"])
            unknown = unknown_enum_values(decoded)
            if unknown:
                results.append({"error": "UnknownEnumValue " + ", ".join(unknown)})
                continue
            results.append({"decoded": _get_cattrs_converter(model).unstructure(decoded)})
        except VerificationException as error:
            results.append({"error": f"VerificationException {error.status.name}"})
        except Exception as error:  # the model could not take what Kiosk signed
            results.append({"error": f"{type(error).__name__}: {error}"})
    print(json.dumps(results, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
