#!/usr/bin/env python3
"""Drive Kiosk's App Store Server API transaction endpoints with Apple's own client (PyPI `app-store-server-library`).

The client is pointed at Kiosk by setting `_base_url` (its URLs are `_base_url + path`); everything else is the
library as merchants run it. Prints one JSON object summarizing what each call returned and exits 0; any call
that fails unexpectedly exits 1 with the error.

Usage:
  server_api_transactions.py --base-url http://127.0.0.1:8080/sandbox --key-file key.p8 --key-id KEY \
      --issuer-id ISSUER --bundle-id com.example.app --environment Sandbox \
      --consumable-id 2000000000000001 --non-consumable-id 2000000000000002 --order-id MK5TTTVWJH \
      --resigned-transaction-out t.jws --app-transaction-out a.jws
"""

import argparse
import base64
import json
import sys
import uuid

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from apple_enums import enforce_on
from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient, GetTransactionHistoryVersion
from appstoreserverlibrary.models.AccountTenure import AccountTenure
from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1
from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
from appstoreserverlibrary.models.Platform import Platform
from appstoreserverlibrary.models.PlayTime import PlayTime
from appstoreserverlibrary.models.RefundPreference import RefundPreference
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, ProductType, TransactionHistoryRequest
from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
from appstoreserverlibrary.models.UserStatus import UserStatus

ENVIRONMENTS = {"Sandbox": Environment.SANDBOX, "Production": Environment.PRODUCTION}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Call Kiosk's Server API transaction endpoints with Apple's client.")
    for name in ["base-url", "key-file", "key-id", "issuer-id", "bundle-id", "consumable-id", "non-consumable-id",
                 "order-id", "resigned-transaction-out", "app-transaction-out"]:
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--environment", required=True, choices=sorted(ENVIRONMENTS))
    return parser.parse_args()


def client_for(arguments: argparse.Namespace, key: bytes) -> AppStoreServerAPIClient:
    client = AppStoreServerAPIClient(
        key, arguments.key_id, arguments.issuer_id, arguments.bundle_id, ENVIRONMENTS[arguments.environment])
    client._base_url = arguments.base_url
    return enforce_on(client)


def payload(jws: str) -> dict:
    """The claims of a compact JWS, unverified (verify_signed_data.py verifies)."""
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def history_summary(response) -> dict:
    return {
        "count": len(response.signedTransactions or []),
        "hasMore": response.hasMore,
        "revision": response.revision,
        "bundleId": response.bundleId,
        "appAppleId": response.appAppleId,
        "environment": response.rawEnvironment,
        "transactionIds": [payload(jws)["transactionId"] for jws in response.signedTransactions or []],
    }


def api_error(call) -> dict:
    try:
        call()
    except APIException as error:
        return {
            "status": error.http_status_code,
            "apiError": error.api_error.name if error.api_error is not None else None,
            "rawApiError": error.raw_api_error,
        }
    return {"status": "no error"}


def main() -> int:
    arguments = parse_arguments()
    with open(arguments.key_file, "rb") as file:
        key = file.read()
    client = client_for(arguments, key)
    consumable, non_consumable = arguments.consumable_id, arguments.non_consumable_id
    summary = {}

    summary["historyV1"] = history_summary(client.get_transaction_history(consumable, None, TransactionHistoryRequest()))
    filtered = TransactionHistoryRequest(
        startDate=0, endDate=4_102_444_800_000, productTypes=[ProductType.CONSUMABLE, ProductType.NON_CONSUMABLE],
        sort=Order.DESCENDING, revoked=False)
    summary["historyV2"] = history_summary(
        client.get_transaction_history(consumable, None, filtered, GetTransactionHistoryVersion.V2))
    next_page = client.get_transaction_history(
        consumable, summary["historyV2"]["revision"], filtered, GetTransactionHistoryVersion.V2)
    summary["historyV2Next"] = history_summary(next_page)

    info = client.get_transaction_info(consumable)
    summary["transactionInfo"] = payload(info.signedTransactionInfo)

    lookup = client.look_up_order_id(arguments.order_id)
    summary["lookup"] = {"status": lookup.rawStatus, "count": len(lookup.signedTransactions or [])}
    unknown_order = client.look_up_order_id("NOSUCHORDR")
    summary["unknownOrder"] = {"status": unknown_order.rawStatus}

    refunds = client.get_refund_history(consumable, None)
    summary["refundHistory"] = {
        "count": len(refunds.signedTransactions or []), "hasMore": refunds.hasMore, "revision": refunds.revision}

    token = str(uuid.uuid4())
    client.send_consumption_data(consumable, ConsumptionRequestV1(
        customerConsented=True, consumptionStatus=ConsumptionStatus(1), platform=Platform(1),
        sampleContentProvided=False, deliveryStatus=DeliveryStatusV1(0), appAccountToken="",
        accountTenure=AccountTenure(2), playTime=PlayTime(3), lifetimeDollarsRefunded=LifetimeDollarsRefunded(0),
        lifetimeDollarsPurchased=LifetimeDollarsPurchased(1), userStatus=UserStatus(1)))
    summary["consumptionV1"] = "accepted"
    client.send_consumption_information(consumable, ConsumptionRequest(
        customerConsented=True, sampleContentProvided=False, deliveryStatus=DeliveryStatus.DELIVERED,
        consumptionPercentage=50000, refundPreference=RefundPreference.DECLINE))
    summary["consumptionV2"] = "accepted"

    client.set_app_account_token(non_consumable, UpdateAppAccountTokenRequest(appAccountToken=token))
    resigned = client.get_transaction_info(non_consumable).signedTransactionInfo
    with open(arguments.resigned_transaction_out, "w", encoding="ascii") as file:
        file.write(resigned)
    summary["appAccountToken"] = {"sent": token, "signed": payload(resigned).get("appAccountToken")}

    app_transaction = client.get_app_transaction_info(consumable).signedAppTransactionInfo
    with open(arguments.app_transaction_out, "w", encoding="ascii") as file:
        file.write(app_transaction)
    summary["appTransaction"] = payload(app_transaction)

    client.finish_transaction(consumable)
    client.finish_transaction(consumable)
    summary["finish"] = "ok"
    summary["historyV1AfterFinish"] = history_summary(
        client.get_transaction_history(consumable, None, TransactionHistoryRequest()))

    summary["unknownTransaction"] = api_error(lambda: client.get_transaction_info("1999999999999999"))
    summary["invalidTransaction"] = api_error(lambda: client.get_transaction_info("not-a-number"))
    other_key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    summary["badKey"] = api_error(lambda: client_for(arguments, other_key).get_transaction_info(consumable))

    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
