"""Apple's enum vocabulary, enforced on what Apple's library decoded (PyPI `app-store-server-library`).

The library's models keep a value they do not know: an enum-typed field is left None and its `raw…` twin keeps
the value, and unstructuring writes that raw value back unchanged. So a notification type `DID_RENEWW` or an
`offerType` of 7 decodes "fine". `unknown_enum_values` names every such field of a decoded model, nested models
included, so a check can refuse what Apple's library would not recognise.
"""

import attr
from appstoreserverlibrary.models.LibraryUtility import metadata_key, metadata_type_key


# Values Apple defined after the pinned library's enums were written, which Kiosk sends on purpose: `offerType` 5,
# a retention offer the App Store showed a subscriber about to cancel (WWDC26, "Explore Retention Messaging in App
# Store Server API"; Sources/KioskCore/Retention/RetentionMessaging.swift). Anything else outside the enums is refused.
NEWER_THAN_THE_LIBRARY = {"offerType": {5}}


def unknown_enum_values(value, path: str = "") -> list:
    """Each enum-typed field under `value` whose raw value is not a member of its enum, as `path.field=raw`."""
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in unknown_enum_values(item, f"{path}[{index}]")]
    if not attr.has(type(value)):
        return []
    found = []
    for attribute in attr.fields(type(value)):
        child = getattr(value, attribute.name)
        if attribute.metadata.get(metadata_type_key) == "raw":
            name = attribute.metadata[metadata_key]
            if child is not None and getattr(value, name) is None and child not in NEWER_THAN_THE_LIBRARY.get(name, ()):
                found.append(f"{path}{name}={child!r}")
        elif attribute.metadata.get(metadata_type_key) != "main":
            found += unknown_enum_values(child, f"{path}{attribute.name}.")
    return found


def enforce_on(client):
    """Makes `client` (Apple's AppStoreServerAPIClient) raise on any answer holding a value outside Apple's enums."""
    parse = client._parse_response

    def parse_checked(*arguments, **keywords):
        response = parse(*arguments, **keywords)
        unknown = unknown_enum_values(response)
        if unknown:
            raise ValueError("UnknownEnumValue " + ", ".join(unknown))
        return response

    client._parse_response = parse_checked
    return client
