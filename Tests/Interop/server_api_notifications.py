#!/usr/bin/env python3
"""Drive Kiosk's subscription and notification endpoints with Apple's own AppStoreServerAPIClient
(PyPI `app-store-server-library`), pointed at Kiosk by setting the client's `_base_url`.

Calls, in order: get_all_subscription_statuses (without and with a status filter), extend_subscription_renewal_date,
extend_renewal_date_for_all_active_subscribers, get_status_of_subscription_renewal_date_extensions,
request_test_notification, get_test_notification_status (polled until an attempt is recorded),
get_notification_history (dates only, then with filters), and one refused call. Writes the first renewal info and
the test notification's signedPayload to --out-dir (renewal.jws, notification.jws) for verify_signed_data.py, and
prints a JSON summary of what the library parsed. Exits 0 when every call returned; any exception escapes.

Usage:
  server_api_notifications.py --base-url http://127.0.0.1:PORT/sandbox --environment Sandbox --key-file key.p8 \
      --key-id KEY --issuer-id ISSUER --bundle-id com.example.app --transaction-id 2000000000000001 \
      --product-id com.example.pro.monthly --out-dir /tmp/out
"""

import argparse
import json
import os
import time
import uuid

from apple_enums import enforce_on
from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.models.Status import Status

ENVIRONMENTS = {"Sandbox": Environment.SANDBOX, "Production": Environment.PRODUCTION}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Call Kiosk with Apple's AppStoreServerAPIClient.")
    for name in ("--base-url", "--key-file", "--key-id", "--issuer-id", "--bundle-id", "--transaction-id",
                 "--product-id", "--out-dir"):
        parser.add_argument(name, required=True)
    parser.add_argument("--environment", required=True, choices=sorted(ENVIRONMENTS))
    return parser.parse_args()


def statuses_summary(response) -> list:
    return [
        {
            "group": group.subscriptionGroupIdentifier,
            "statuses": [item.status.value if item.status else item.rawStatus for item in group.lastTransactions or []],
        }
        for group in response.data or []
    ]


def main() -> int:
    arguments = parse_arguments()
    with open(arguments.key_file, "rb") as file:
        key = file.read()
    client = AppStoreServerAPIClient(
        key, arguments.key_id, arguments.issuer_id, arguments.bundle_id, ENVIRONMENTS[arguments.environment])
    client._base_url = arguments.base_url
    enforce_on(client)
    summary = {}

    all_statuses = client.get_all_subscription_statuses(arguments.transaction_id)
    summary["statuses"] = statuses_summary(all_statuses)
    summary["statusesEnvironment"] = all_statuses.rawEnvironment
    summary["statusesAppAppleId"] = all_statuses.appAppleId
    filtered = client.get_all_subscription_statuses(
        arguments.transaction_id, [Status.ACTIVE, Status.BILLING_GRACE_PERIOD])
    summary["filteredStatuses"] = statuses_summary(filtered)
    renewal = all_statuses.data[0].lastTransactions[0].signedRenewalInfo
    with open(os.path.join(arguments.out_dir, "renewal.jws"), "w", encoding="ascii") as file:
        file.write(renewal)

    extended = client.extend_subscription_renewal_date(
        arguments.transaction_id,
        ExtendRenewalDateRequest(
            extendByDays=3, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION,
            requestIdentifier=str(uuid.uuid4())))
    summary["extended"] = {
        "originalTransactionId": extended.originalTransactionId, "success": extended.success,
        "effectiveDate": extended.effectiveDate, "webOrderLineItemId": extended.webOrderLineItemId,
    }

    mass_identifier = str(uuid.uuid4())
    mass = client.extend_renewal_date_for_all_active_subscribers(
        MassExtendRenewalDateRequest(
            extendByDays=1, extendReasonCode=ExtendReasonCode.SERVICE_ISSUE_OR_OUTAGE,
            requestIdentifier=mass_identifier, storefrontCountryCodes=["USA", "MEX"],
            productId=arguments.product_id))
    mass_status = client.get_status_of_subscription_renewal_date_extensions(mass.requestIdentifier, arguments.product_id)
    summary["mass"] = {
        "requestIdentifier": mass.requestIdentifier == mass_identifier, "complete": mass_status.complete,
        "succeededCount": mass_status.succeededCount, "failedCount": mass_status.failedCount,
        "completeDate": mass_status.completeDate,
    }

    token = client.request_test_notification().testNotificationToken
    deadline = time.monotonic() + 20
    test_status = client.get_test_notification_status(token)
    while not test_status.sendAttempts and time.monotonic() < deadline:
        time.sleep(0.05)
        test_status = client.get_test_notification_status(token)
    summary["testNotification"] = {
        "token": token,
        "results": [attempt.rawSendAttemptResult for attempt in test_status.sendAttempts or []],
    }
    with open(os.path.join(arguments.out_dir, "notification.jws"), "w", encoding="ascii") as file:
        file.write(test_status.signedPayload)

    now = int(time.time() * 1000)
    history = client.get_notification_history(
        None, NotificationHistoryRequest(startDate=now - 3_600_000, endDate=now + 60_000))
    filtered_history = client.get_notification_history(
        None, NotificationHistoryRequest(
            startDate=now - 3_600_000, endDate=now + 60_000, notificationType=NotificationTypeV2.TEST,
            onlyFailures=False))
    summary["history"] = {
        "count": len(history.notificationHistory or []), "hasMore": history.hasMore,
        "testCount": len(filtered_history.notificationHistory or []),
        "attempts": [
            [attempt.rawSendAttemptResult for attempt in item.sendAttempts or []]
            for item in history.notificationHistory or []
        ],
    }

    try:
        client.get_test_notification_status("not-a-token")
        summary["refused"] = None
    except APIException as error:
        summary["refused"] = {"status": error.http_status_code, "rawApiError": error.raw_api_error}

    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
