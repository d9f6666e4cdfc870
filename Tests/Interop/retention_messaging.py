#!/usr/bin/env python3
"""Drive Kiosk's Retention Messaging API with Apple's own AppStoreServerAPIClient (PyPI `app-store-server-library`),
pointed at Kiosk by its base URL.

Calls, in order: upload_image (full size, then bullet point, then the first again), get_image_list, upload_message
(with an image, a header above it and a bullet point; then a text-only one), get_message_list,
configure_default_message (then get_default_message, and once with a locale App Store Connect does not offer),
configure_realtime_url and get_realtime_url, in the sandbox initiate_performance_test and get_performance_test_results
(polled until it finishes), then the deletions: delete_default_message, delete_image while a message shows it,
delete_message, delete_image (twice), delete_realtime_url, and get_realtime_url once more. Every call's outcome goes
into a JSON summary on stdout: what Apple's models parsed, or the raw API error Apple's client raised. Exits 0 when
it could run; an exception other than Apple's APIException escapes.

Usage:
  retention_messaging.py --base-url http://127.0.0.1:PORT/sandbox --environment Sandbox --key-file key.p8 \
      --key-id KEY --issuer-id ISSUER --bundle-id com.example.app --product-id com.example.pro.monthly \
      --transaction-id 2000000000000001 --realtime-url https://127.0.0.1:PORT/retention
"""

import argparse
import json
import struct
import time
import uuid
import zlib

from apple_enums import enforce_on
from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.BulletPoint import BulletPoint
from appstoreserverlibrary.models.DefaultConfigurationRequest import DefaultConfigurationRequest
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.HeaderPosition import HeaderPosition
from appstoreserverlibrary.models.ImageSize import ImageSize
from appstoreserverlibrary.models.PerformanceTestRequest import PerformanceTestRequest
from appstoreserverlibrary.models.PerformanceTestStatus import PerformanceTestStatus
from appstoreserverlibrary.models.RealtimeUrlRequest import RealtimeUrlRequest
from appstoreserverlibrary.models.UploadMessageImage import UploadMessageImage
from appstoreserverlibrary.models.UploadMessageRequestBody import UploadMessageRequestBody

ENVIRONMENTS = {"Sandbox": Environment.SANDBOX, "Production": Environment.PRODUCTION}


def png(width: int, height: int) -> bytes:
    """A grey 8-bit PNG without transparency."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes([row % 256]) * width for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def outcome(call):
    """What a call came to: {"ok": <what Apple's model parsed>} or {"error": <raw API error>, "status": <HTTP>}."""
    try:
        result = call()
        return {"ok": result}
    except APIException as error:
        return {"error": error.raw_api_error, "status": error.http_status_code}


def main() -> int:
    parser = argparse.ArgumentParser(description="Call Kiosk's Retention Messaging API with Apple's client.")
    for name in ("--base-url", "--key-file", "--key-id", "--issuer-id", "--bundle-id", "--product-id",
                 "--transaction-id", "--realtime-url"):
        parser.add_argument(name, required=True)
    parser.add_argument("--environment", required=True, choices=sorted(ENVIRONMENTS))
    arguments = parser.parse_args()
    with open(arguments.key_file, "rb") as file:
        key = file.read()
    client = AppStoreServerAPIClient(
        key, arguments.key_id, arguments.issuer_id, arguments.bundle_id, ENVIRONMENTS[arguments.environment])
    client._base_url = arguments.base_url
    enforce_on(client)
    sandbox = arguments.environment == "Sandbox"
    image, bullet, message, plain = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    summary = {"image": str(image), "bullet": str(bullet), "message": str(message), "plain": str(plain)}

    summary["uploadImage"] = outcome(lambda: client.upload_image(image, png(3840, 160)))
    summary["uploadBullet"] = outcome(lambda: client.upload_image(bullet, png(1024, 1024), ImageSize.BULLET_POINT))
    summary["uploadImageAgain"] = outcome(lambda: client.upload_image(image, png(3840, 160)))
    images = client.get_image_list().imageIdentifiers or []
    summary["images"] = sorted(
        [str(item.imageIdentifier), item.imageState.value, item.imageSize.value] for item in images)

    summary["uploadMessage"] = outcome(lambda: client.upload_message(message, UploadMessageRequestBody(
        header="Before you go", body="Your plan keeps every feature.",
        image=UploadMessageImage(imageIdentifier=image, altText="The app"),
        headerPosition=HeaderPosition.ABOVE_IMAGE,
        bulletPoints=[BulletPoint(text="Offline reading", imageIdentifier=bullet, altText="A book")])))
    summary["uploadPlain"] = outcome(lambda: client.upload_message(
        plain, UploadMessageRequestBody(header="A better plan", body="Switch instead of leaving.")))
    messages = client.get_message_list().messageIdentifiers or []
    summary["messages"] = sorted([str(item.messageIdentifier), item.messageState.value] for item in messages)

    summary["configureDefault"] = outcome(lambda: client.configure_default_message(
        arguments.product_id, "en-US", DefaultConfigurationRequest(messageIdentifier=message)))
    default = outcome(lambda: client.get_default_message(arguments.product_id, "en-US"))
    summary["getDefault"] = {"ok": str(default["ok"].messageIdentifier)} if "ok" in default else default
    summary["badLocale"] = outcome(lambda: client.configure_default_message(
        arguments.product_id, "xx-YY", DefaultConfigurationRequest(messageIdentifier=message)))

    summary["configureURL"] = outcome(lambda: client.configure_realtime_url(
        RealtimeUrlRequest(realtimeURL=arguments.realtime_url)))
    url = outcome(client.get_realtime_url)
    summary["getURL"] = {"ok": url["ok"].realtimeURL} if "ok" in url else url

    if sandbox:
        started = client.initiate_performance_test(PerformanceTestRequest(originalTransactionId=arguments.transaction_id))
        summary["performanceTestConfig"] = {
            "maxConcurrentRequests": started.config.maxConcurrentRequests,
            "totalRequests": started.config.totalRequests,
            "responseTimeThreshold": started.config.responseTimeThreshold,
            "successRateThreshold": started.config.successRateThreshold,
        }
        result = client.get_performance_test_results(started.requestId)
        deadline = time.time() + 300
        while result.result == PerformanceTestStatus.PENDING and time.time() < deadline:
            time.sleep(0.2)
            result = client.get_performance_test_results(started.requestId)
        summary["performanceTest"] = {
            "result": result.rawResult, "successRate": result.successRate, "numPending": result.numPending,
            "target": result.target, "p95": result.responseTimes.p95 if result.responseTimes else None,
            "failures": result.rawFailures,
        }
        summary["unknownTest"] = outcome(lambda: client.get_performance_test_results(str(uuid.uuid4())))

    summary["deleteDefault"] = outcome(lambda: client.delete_default_message(arguments.product_id, "en-US"))
    summary["defaultAfter"] = outcome(lambda: client.get_default_message(arguments.product_id, "en-US"))
    summary["deleteImageInUse"] = outcome(lambda: client.delete_image(image))
    summary["deleteMessage"] = outcome(lambda: client.delete_message(message))
    summary["deleteImage"] = outcome(lambda: client.delete_image(image))
    summary["deleteImageAgain"] = outcome(lambda: client.delete_image(image))
    summary["deleteURL"] = outcome(client.delete_realtime_url)
    summary["urlAfter"] = outcome(client.get_realtime_url)
    print(json.dumps(summary, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
