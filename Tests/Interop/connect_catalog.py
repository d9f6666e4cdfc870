"""Builds a subscription through the App Store Connect API as a script written against Apple's documentation does,
with nothing of Kiosk's but the base URL and a team key: finds the app, creates a subscription group and a
subscription with localizations, prices it in every territory from one base price (a price point and its
equalizations), adds an introductory and a promotional offer, submits it for review, reads it back with `include`
and pages through its prices. Prints what it made as one JSON object; exits non-zero on any unexpected answer.

Run by ConnectCatalogTests with the .venv-connect Python .ci/run builds (requests and PyJWT).
"""
import argparse
import json
import sys
import time

import jwt
import requests


class Connect:
    """Apple's App Store Connect API at `base`: ES256 bearer tokens, JSON:API documents."""

    def __init__(self, base, key_id, key_file, issuer_id):
        self.base = base.rstrip("/")
        self.key_id = key_id
        self.key = open(key_file).read()
        self.issuer_id = issuer_id
        self.session = requests.Session()

    def token(self):
        now = int(time.time())
        token = jwt.encode(
            {"iss": self.issuer_id, "iat": now, "exp": now + 1200, "aud": "appstoreconnect-v1"},
            self.key, algorithm="ES256", headers={"kid": self.key_id, "typ": "JWT"})
        return token.decode() if isinstance(token, bytes) else token

    def call(self, method, path, expect, body=None, params=None):
        url = path if path.startswith("http") else self.base + path
        response = self.session.request(
            method, url, params=params, json=body, headers={"Authorization": "Bearer " + self.token()})
        if response.status_code != expect:
            sys.exit("%s %s answered %d, not %d: %s" % (method, url, response.status_code, expect, response.text))
        return response.json() if response.content else None

    def create(self, resource_type, attributes, relationships, included=None):
        data = {"type": resource_type, "attributes": attributes, "relationships": {
            name: {"data": value} for name, value in relationships.items()}}
        body = {"data": data}
        if included is not None:
            body["included"] = included
        return self.call("POST", "/v1/" + resource_type, 201, body)["data"]

    def every_page(self, path, params):
        """Follows `links.next` to the end; returns the resources and the number of pages."""
        resources, pages, document = [], 0, self.call("GET", path, 200, params=params)
        while True:
            pages += 1
            resources += document["data"]
            following = document["links"].get("next")
            if not following:
                return resources, pages
            document = self.call("GET", following, 200)


def main():
    parser = argparse.ArgumentParser()
    for name in ["--base-url", "--key-id", "--key-file", "--issuer-id", "--bundle-id", "--product-id"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--base-price", default="2.99", help="the US price every territory's is equalized from")
    parser.add_argument("--intro-price", default="0.99")
    arguments = parser.parse_args()
    api = Connect(arguments.base_url, arguments.key_id, arguments.key_file, arguments.issuer_id)
    result = {}

    apps = api.call("GET", "/v1/apps", 200, params={"filter[bundleId]": arguments.bundle_id})["data"]
    app = apps[0]
    group = api.create("subscriptionGroups", {"referenceName": "Script Club"},
                       {"app": {"type": "apps", "id": app["id"]}})
    api.create("subscriptionGroupLocalizations", {"locale": "en-US", "name": "Script Club"},
               {"subscriptionGroup": {"type": "subscriptionGroups", "id": group["id"]}})
    subscription = api.create(
        "subscriptions",
        {"productId": arguments.product_id, "name": "Script Club Monthly", "subscriptionPeriod": "ONE_MONTH",
         "familySharable": False, "reviewNote": "Made by a script."},
        {"group": {"type": "subscriptionGroups", "id": group["id"]}})
    owner = {"type": "subscriptions", "id": subscription["id"]}
    for locale, name in [("en-US", "Script Club"), ("fr-FR", "Club Script")]:
        api.create("subscriptionLocalizations", {"locale": locale, "name": name, "description": name + "."},
                   {"subscription": owner})

    # Prices for every territory from one base price: a US price point and its equalizations.
    points = api.call("GET", "/v1/subscriptions/%s/pricePoints" % subscription["id"], 200,
                      params={"filter[territory]": "USA", "include": "territory"})["data"]
    by_price = {point["attributes"]["customerPrice"]: point for point in points}
    base = by_price[arguments.base_price]
    equalized, equalization_pages = api.every_page(
        "/v1/subscriptionPricePoints/%s/equalizations" % base["id"], {"limit": "50"})
    for point in [base] + equalized:
        api.create("subscriptionPrices", {"preserveCurrentPrice": False},
                   {"subscription": owner,
                    "subscriptionPricePoint": {"type": "subscriptionPricePoints", "id": point["id"]}})
    result["territoriesPriced"] = 1 + len(equalized)
    result["equalizationPages"] = equalization_pages

    # An introductory offer in the United States, and a promotional offer with its prices included inline.
    intro = by_price[arguments.intro_price]
    api.create("subscriptionIntroductoryOffers",
               {"duration": "ONE_MONTH", "offerMode": "PAY_UP_FRONT", "numberOfPeriods": 1},
               {"subscription": owner, "territory": {"type": "territories", "id": "USA"},
                "subscriptionPricePoint": {"type": "subscriptionPricePoints", "id": intro["id"]}})
    promotional = api.create(
        "subscriptionPromotionalOffers",
        {"name": "Come back", "offerCode": "comeback", "duration": "ONE_MONTH", "offerMode": "PAY_AS_YOU_GO",
         "numberOfPeriods": 3},
        {"subscription": owner, "prices": [{"type": "subscriptionPromotionalOfferPrices", "id": "${price-usa}"}]},
        included=[{"type": "subscriptionPromotionalOfferPrices", "id": "${price-usa}", "relationships": {
            "territory": {"data": {"type": "territories", "id": "USA"}},
            "subscriptionPricePoint": {"data": {"type": "subscriptionPricePoints", "id": intro["id"]}}}}])
    result["promotionalOffer"] = promotional["attributes"]["offerCode"]

    api.call(
        "POST", "/v1/subscriptionSubmissions", 201,
        {"data": {"type": "subscriptionSubmissions", "relationships": {"subscription": {"data": owner}}}})

    # Read back with include, and page through a list.
    read = api.call("GET", "/v1/subscriptions/" + subscription["id"], 200, params={
        "include": "group,subscriptionLocalizations,introductoryOffers,promotionalOffers,prices",
        "limit[prices]": "5"})
    result["state"] = read["data"]["attributes"]["state"]
    result["included"] = sorted({item["type"] for item in read["included"]})
    result["localizations"] = len(read["data"]["relationships"]["subscriptionLocalizations"]["data"])
    result["pricesIncluded"] = len(read["data"]["relationships"]["prices"]["data"])
    prices, price_pages = api.every_page("/v1/subscriptions/%s/prices" % subscription["id"], {
        "limit": "40", "include": "territory"})
    result["prices"] = len(prices)
    result["pricePages"] = price_pages
    result["subscriptionId"] = subscription["id"]
    print(json.dumps(result, indent=2, sort_keys=True))


main()
