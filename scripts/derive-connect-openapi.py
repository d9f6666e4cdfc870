#!/usr/bin/env python3
"""Derives Kiosk's App Store Connect API contract from Apple's published OpenAPI document.

Kiosk serves part of Apple's App Store Connect API. Its contract is Apple's own document cut down to the operations
Kiosk serves (OPERATIONS below) and every schema they reference, unchanged but for one repair (`repaired`). The store reads the result at run time
(to check each request's parameters and body) and the tests check every answer against it.

    python3 scripts/derive-connect-openapi.py APPLE_DOCUMENT.json > Sources/KioskStore/Resources/app-store-connect-openapi.json

Run it again after adding an operation here and its handler in the store; `ConnectCatalogContractTests` fails until
the two agree.
"""

import json
import sys

# Every operation Kiosk serves under /v1 and /v2, as "METHOD path" in Apple's spelling.
OPERATIONS = """
GET /v1/salesReports
GET /v1/financeReports
GET /v1/apps
GET /v1/apps/{id}
GET /v1/apps/{id}/subscriptionGroups
GET /v1/apps/{id}/subscriptionGracePeriod
GET /v1/subscriptionGracePeriods/{id}
PATCH /v1/subscriptionGracePeriods/{id}
GET /v1/territories
POST /v1/subscriptionGroups
GET /v1/subscriptionGroups/{id}
PATCH /v1/subscriptionGroups/{id}
DELETE /v1/subscriptionGroups/{id}
GET /v1/subscriptionGroups/{id}/subscriptions
GET /v1/subscriptionGroups/{id}/relationships/subscriptions
GET /v1/subscriptionGroups/{id}/subscriptionGroupLocalizations
GET /v1/subscriptionGroups/{id}/relationships/subscriptionGroupLocalizations
POST /v1/subscriptionGroupLocalizations
GET /v1/subscriptionGroupLocalizations/{id}
PATCH /v1/subscriptionGroupLocalizations/{id}
DELETE /v1/subscriptionGroupLocalizations/{id}
POST /v1/subscriptions
GET /v1/subscriptions/{id}
PATCH /v1/subscriptions/{id}
DELETE /v1/subscriptions/{id}
GET /v1/subscriptions/{id}/subscriptionLocalizations
GET /v1/subscriptions/{id}/relationships/subscriptionLocalizations
POST /v1/subscriptionLocalizations
GET /v1/subscriptionLocalizations/{id}
PATCH /v1/subscriptionLocalizations/{id}
DELETE /v1/subscriptionLocalizations/{id}
POST /v1/subscriptionSubmissions
GET /v1/subscriptions/{id}/pricePoints
GET /v1/subscriptionPricePoints/{id}
GET /v1/subscriptionPricePoints/{id}/equalizations
POST /v1/subscriptionPrices
GET /v1/subscriptions/{id}/prices
DELETE /v1/subscriptionPrices/{id}
GET /v1/subscriptions/{id}/introductoryOffers
POST /v1/subscriptionIntroductoryOffers
PATCH /v1/subscriptionIntroductoryOffers/{id}
DELETE /v1/subscriptionIntroductoryOffers/{id}
GET /v1/subscriptions/{id}/promotionalOffers
POST /v1/subscriptionPromotionalOffers
GET /v1/subscriptionPromotionalOffers/{id}
DELETE /v1/subscriptionPromotionalOffers/{id}
GET /v1/apps/{id}/inAppPurchasesV2
POST /v2/inAppPurchases
GET /v2/inAppPurchases/{id}
PATCH /v2/inAppPurchases/{id}
DELETE /v2/inAppPurchases/{id}
GET /v2/inAppPurchases/{id}/inAppPurchaseLocalizations
GET /v2/inAppPurchases/{id}/relationships/inAppPurchaseLocalizations
POST /v1/inAppPurchaseSubmissions
GET /v2/inAppPurchases/{id}/pricePoints
GET /v1/inAppPurchasePricePoints/{id}/equalizations
POST /v1/inAppPurchasePriceSchedules
GET /v1/inAppPurchasePriceSchedules/{id}
GET /v2/inAppPurchases/{id}/iapPriceSchedule
GET /v1/inAppPurchasePriceSchedules/{id}/baseTerritory
GET /v1/inAppPurchasePriceSchedules/{id}/manualPrices
GET /v1/inAppPurchasePriceSchedules/{id}/automaticPrices
POST /v1/inAppPurchaseLocalizations
GET /v1/inAppPurchaseLocalizations/{id}
PATCH /v1/inAppPurchaseLocalizations/{id}
DELETE /v1/inAppPurchaseLocalizations/{id}
GET /v1/subscriptions/{id}/relationships/introductoryOffers
GET /v1/subscriptions/{id}/relationships/promotionalOffers
GET /v1/subscriptions/{id}/relationships/prices
GET /v1/subscriptions/{id}/relationships/pricePoints
GET /v1/subscriptionPricePoints/{id}/relationships/equalizations
GET /v1/inAppPurchasePricePoints/{id}/relationships/equalizations
GET /v2/inAppPurchases/{id}/relationships/pricePoints
GET /v2/inAppPurchases/{id}/relationships/iapPriceSchedule
GET /v1/inAppPurchasePriceSchedules/{id}/relationships/baseTerritory
GET /v1/inAppPurchasePriceSchedules/{id}/relationships/manualPrices
GET /v1/inAppPurchasePriceSchedules/{id}/relationships/automaticPrices
PATCH /v1/subscriptionPromotionalOffers/{id}
GET /v1/subscriptionPromotionalOffers/{id}/prices
GET /v1/subscriptionPromotionalOffers/{id}/relationships/prices
GET /v1/subscriptions/{id}/winBackOffers
GET /v1/subscriptions/{id}/relationships/winBackOffers
POST /v1/winBackOffers
GET /v1/winBackOffers/{id}
PATCH /v1/winBackOffers/{id}
DELETE /v1/winBackOffers/{id}
GET /v1/winBackOffers/{id}/prices
GET /v1/winBackOffers/{id}/relationships/prices
POST /v1/subscriptionAvailabilities
GET /v1/subscriptionAvailabilities/{id}
GET /v1/subscriptionAvailabilities/{id}/availableTerritories
GET /v1/subscriptionAvailabilities/{id}/relationships/availableTerritories
GET /v1/subscriptions/{id}/subscriptionAvailability
GET /v1/subscriptions/{id}/relationships/subscriptionAvailability
POST /v1/inAppPurchaseAvailabilities
GET /v1/inAppPurchaseAvailabilities/{id}
GET /v1/inAppPurchaseAvailabilities/{id}/availableTerritories
GET /v1/inAppPurchaseAvailabilities/{id}/relationships/availableTerritories
GET /v2/inAppPurchases/{id}/inAppPurchaseAvailability
GET /v2/inAppPurchases/{id}/relationships/inAppPurchaseAvailability
GET /v1/subscriptions/{id}/offerCodes
GET /v1/subscriptions/{id}/relationships/offerCodes
POST /v1/subscriptionOfferCodes
GET /v1/subscriptionOfferCodes/{id}
PATCH /v1/subscriptionOfferCodes/{id}
GET /v1/subscriptionOfferCodes/{id}/prices
GET /v1/subscriptionOfferCodes/{id}/relationships/prices
GET /v1/subscriptionOfferCodes/{id}/oneTimeUseCodes
GET /v1/subscriptionOfferCodes/{id}/relationships/oneTimeUseCodes
GET /v1/subscriptionOfferCodes/{id}/customCodes
GET /v1/subscriptionOfferCodes/{id}/relationships/customCodes
POST /v1/subscriptionOfferCodeOneTimeUseCodes
GET /v1/subscriptionOfferCodeOneTimeUseCodes/{id}
PATCH /v1/subscriptionOfferCodeOneTimeUseCodes/{id}
GET /v1/subscriptionOfferCodeOneTimeUseCodes/{id}/values
POST /v1/subscriptionOfferCodeCustomCodes
GET /v1/subscriptionOfferCodeCustomCodes/{id}
PATCH /v1/subscriptionOfferCodeCustomCodes/{id}
GET /v2/inAppPurchases/{id}/offerCodes
GET /v2/inAppPurchases/{id}/relationships/offerCodes
POST /v1/inAppPurchaseOfferCodes
GET /v1/inAppPurchaseOfferCodes/{id}
PATCH /v1/inAppPurchaseOfferCodes/{id}
GET /v1/inAppPurchaseOfferCodes/{id}/prices
GET /v1/inAppPurchaseOfferCodes/{id}/relationships/prices
GET /v1/inAppPurchaseOfferCodes/{id}/oneTimeUseCodes
GET /v1/inAppPurchaseOfferCodes/{id}/relationships/oneTimeUseCodes
GET /v1/inAppPurchaseOfferCodes/{id}/customCodes
GET /v1/inAppPurchaseOfferCodes/{id}/relationships/customCodes
POST /v1/inAppPurchaseOfferCodeOneTimeUseCodes
GET /v1/inAppPurchaseOfferCodeOneTimeUseCodes/{id}
PATCH /v1/inAppPurchaseOfferCodeOneTimeUseCodes/{id}
GET /v1/inAppPurchaseOfferCodeOneTimeUseCodes/{id}/values
POST /v1/inAppPurchaseOfferCodeCustomCodes
GET /v1/inAppPurchaseOfferCodeCustomCodes/{id}
PATCH /v1/inAppPurchaseOfferCodeCustomCodes/{id}
POST /v1/subscriptionGroupSubmissions
"""


def references(value, found):
    """Adds the name of every schema `value` references, directly or through other schemas."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                found.add(item)
            else:
                references(item, found)
    elif isinstance(value, list):
        for item in value:
            references(item, found)


def repaired(value):
    """Apple's document writes `"format": null` in a few schemas (AppEvent's deepLink); OpenAPI wants a string there,
    and validators refuse the whole document. Those keys go; nothing else changes."""
    if isinstance(value, dict):
        return {key: repaired(item) for key, item in value.items() if not (key == "format" and item is None)}
    if isinstance(value, list):
        return [repaired(item) for item in value]
    return value


def main():
    apple = json.load(open(sys.argv[1]))
    paths = {}
    for line in OPERATIONS.split("\n"):
        if not line.strip():
            continue
        method, path = line.split()
        operation = apple["paths"][path][method.lower()]
        paths.setdefault(path, {})[method.lower()] = operation
    for path, item in paths.items():
        if "parameters" in apple["paths"][path]:
            item["parameters"] = apple["paths"][path]["parameters"]
    derived = {key: value for key, value in apple.items() if key not in ("paths", "components")}
    derived["info"] = dict(apple["info"])
    derived["info"]["description"] = (
        "The part of Apple's App Store Connect API (version %s) that Kiosk serves: Apple's operations and schemas, "
        "unchanged, derived by scripts/derive-connect-openapi.py." % apple["info"]["version"])
    derived["paths"] = paths
    components = {}
    pending = set()
    references(paths, pending)
    done = set()
    while pending:
        reference = pending.pop()
        if reference in done:
            continue
        done.add(reference)
        _, _, section, name = reference.split("/")
        value = apple["components"][section][name]
        components.setdefault(section, {})[name] = value
        references(value, pending)
    if "securitySchemes" in apple["components"]:
        components["securitySchemes"] = apple["components"]["securitySchemes"]
    derived["components"] = {section: dict(sorted(items.items())) for section, items in sorted(components.items())}
    json.dump(repaired(derived), sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


main()
