"""Drives Kiosk's web console in a real Chromium through Selenium, as a developer would use it.

Run by ConsoleBrowserTests (Tests/KioskCLITests) against a running store:

    python console_browser.py --base-url http://127.0.0.1:PORT --token ADMIN_TOKEN \
        --receiver http://127.0.0.1:PORT/notifications --clock http://127.0.0.1:PORT/clock [--screenshots DIR]

Signs in, creates an app and a product, sees it unavailable with its reason, completes the agreement, creates a
tester and buys as them through the test controls, finds the customer, refunds from their page, sees the REFUND
notification in the log and resends it, sees the money chart change, reads the audit log; checks that a form
posted without its CSRF token and a forged session cookie are refused; opens a `kiosk check` run on the Checks
page; then adds a Developer on the Team page, signs
in as them with the temporary password, chooses their own, finds Money closed to them, and sees their session end
when the store's clock (advanced through --clock, which the test serves) passes its eight hours. Prints one JSON
object of what it saw and exits non-zero on the first failed check, naming it.
"""

import argparse
import json
import os
import shutil
import sys
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import Select, WebDriverWait

APP = "com.example.coins"
PRODUCT = "com.example.coins.100"
TESTER = "kid@example.com"

seen = {}
pages = []


def check(condition, what):
    if not condition:
        page = {}
        if pages:
            driver = pages[0]
            page = {"url": driver.current_url, "title": driver.title,
                    "text": driver.find_element(By.TAG_NAME, "main").text[:2000]}
        print(json.dumps({"failed": what, "page": page, "seen": seen}, indent=1))
        sys.exit(1)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    driver_path = os.environ.get("CHROMEDRIVER", shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=Service(driver_path), options=options)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--storekit", required=True, help="an Xcode .storekit file to import")
    parser.add_argument("--clock", required=True, help="POST ?seconds=N here advances the store's clock")
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    base = args.base_url
    driver = browser()
    pages.append(driver)
    try:
        run(driver, base, args)
    finally:
        driver.quit()
    print(json.dumps(seen, indent=1))


UNLABELLED = """
return Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
  .filter(e => !(e.id && document.querySelector('label[for="' + e.id + '"]')) && !e.closest('label')
               && !e.getAttribute('aria-label'))
  .map(e => e.name || e.outerHTML.slice(0, 80))
"""


def shot(driver, args, name):
    """Checks the page a keyboard and screen-reader user needs (one h1, every field labelled), then saves the
    whole page (the window grown to the page's height, at most 2400 pixels) as NAME.png."""
    check(len(driver.find_elements(By.TAG_NAME, "h1")) == 1, f"{name}: one h1")
    unlabelled = driver.execute_script(UNLABELLED)
    check(not unlabelled, f"{name}: every field has a label ({unlabelled})")
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
        width = driver.get_window_size()["width"]
        height = min(2400, driver.execute_script("return document.documentElement.scrollHeight"))
        driver.set_window_size(width, max(844, height))
        driver.save_screenshot(os.path.join(args.screenshots, name + ".png"))
        driver.set_window_size(width, 900 if width > 600 else 844)


def text(driver, css):
    return driver.find_element(By.CSS_SELECTOR, css).text


def fill(driver, values):
    for name, value in values.items():
        field = driver.find_element(By.ID, name)
        if field.tag_name == "select":
            Select(field).select_by_value(value) if field.find_elements(By.CSS_SELECTOR, f'option[value="{value}"]') \
                else Select(field).select_by_visible_text(value)
        else:
            field.clear()
            field.send_keys(value)


def in_view(driver, css):
    """Whether the element is inside the window as the page stands: a message out of sight is no message."""
    return driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return r.top >= 0 && r.bottom <= window.innerHeight", css)


def notice(driver):
    """The notice at the top of the page: what the last action did."""
    found = driver.find_elements(By.ID, "notice")
    return found[0].text if found else ""


def click_through(driver, element):
    """Clicks something that loads a page, and returns once the new page has replaced the old one and loaded:
    a click returns before the browser has navigated, so reading the page right after it could see the old one.
    The old page is marked; the new one is recognised by the mark being gone (asking about the old page's elements
    instead can fail with an inspector error while Chrome swaps documents, so those errors are waited out)."""
    driver.execute_script("window.kioskOldPage = true")
    element.click()
    WebDriverWait(driver, 60, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return !window.kioskOldPage && document.readyState === 'complete'"))


def submit(driver, form_id):
    click_through(driver, driver.find_element(By.CSS_SELECTOR, f"#{form_id} button[type=submit]"))


def run(driver, base, args):
    # Signing in: the console sends a stranger to the sign-in page and refuses a wrong token.
    driver.get(base + "/")
    check("/console/sign-in" in driver.current_url, "an unsigned visitor lands on the sign-in page")
    check(driver.find_element(By.ID, "admin-token-sign-in").get_attribute("open") is not None,
          "with no console users yet, the admin token's form is open")
    fill(driver, {"name": "Ann", "token": "not-the-token"})
    submit(driver, "sign-in-token")
    check("not the admin token" in text(driver, "#sign-in-error"), "a wrong token is refused with a reason")
    fill(driver, {"name": "Ann", "token": args.token})
    submit(driver, "sign-in-token")
    check(driver.title.startswith("Overview"), "signing in opens the overview")
    check("No product is for sale" in driver.page_source, "the overview warns the agreement is incomplete")
    shot(driver, args, "overview")

    # An app and a product; a bad product id is refused at its field, with the API's message.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Apps"))
    fill(driver, {"bundleId": APP, "name": "Coin Game"})
    submit(driver, "new-app")
    check(driver.current_url.endswith("/console/apps/" + APP), "creating an app opens its page")
    check("Created the app Coin Game" in notice(driver), "creating an app says so at the top of its page")
    # The header holds the navigation and the sign-out form on one line at 1280 pixels (a scroll bar included).
    header = driver.find_element(By.CSS_SELECTOR, "header.top").rect
    parts = [e.rect for e in driver.find_elements(By.CSS_SELECTOR, "header.top nav li, header.top .signout")]
    seen["header"] = {"height": header["height"], "bottoms": sorted({round(p["y"] + p["height"]) for p in parts})}
    check(all(p["y"] + p["height"] <= 50 for p in parts), f"the header fits one line at 1280 px ({seen['header']})")
    fill(driver, {"productId": "100 coins", "referenceName": "100 coins", "displayName": "100 Coins",
                  "description": "A small pile of coins"})
    submit(driver, "new-product")
    seen["productIdError"] = text(driver, "#productId-error")
    check("only letters, digits" in seen["productIdError"], "a bad product id is refused at its field")
    check(driver.current_url.endswith("#new-product") and in_view(driver, "#productId-error"),
          "the refused form is scrolled into view, its error in sight")
    fill(driver, {"productId": PRODUCT})
    submit(driver, "new-product")
    check(driver.current_url.split("#")[0].endswith("/products/" + PRODUCT), "creating a product opens its page")
    reasons = [e.get_attribute("data-code") for e in driver.find_elements(By.CSS_SELECTOR, "#availability-sandbox .reason")]
    seen["sandboxReasons"] = reasons
    check(reasons == ["agreement_not_active"], "the sandbox names the agreement as the one reason")
    check("kiosk " not in text(driver, "#availability-sandbox")
          and driver.find_elements(By.CSS_SELECTOR, '#availability-sandbox a[href="/console/agreements"]'),
          "the fix links to the console's own Agreements page, not to a CLI command")
    shot(driver, args, "product-unavailable")
    fill(driver, {"loc-locale": "fr_FR", "loc-displayName": "100 pièces", "loc-description": "Un petit tas de pièces"})
    submit(driver, "localization")
    check("fr_FR: 100 pièces" in driver.page_source, "a localization is added from the product page")
    fill(driver, {"referenceName": "Coins, 100"})
    submit(driver, "edit-product")
    check(driver.title.startswith("Coins, 100"), "the product's reference name is edited")

    # Notifications go to the test's receiver.
    driver.get(base + "/console/apps/" + APP)
    fill(driver, {"sandboxURLs": args.receiver})
    submit(driver, "notification-urls")

    # The agreement, with masked bank details; then the product is available in the sandbox.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Agreements"))
    fill(driver, {"legalName": "Coin Game Ltd", "country": "GBR", "bankAccount": "GB29 NWBK 6016 1331 9268 19",
                  "bankCurrency": "GBP", "taxForm": "W-8BEN-E", "taxId": "98-7654321"})
    driver.find_element(By.ID, "terms").click()  # a checkbox: no page load
    submit(driver, "agreement")
    seen["agreement"] = text(driver, "#agreement-status")
    check("is active" in seen["agreement"], "the completed agreement is active")
    # Changing one part keeps the rest on file: the legal name alone, the tax form still the one given.
    fill(driver, {"legalName": "Coin Game Limited"})
    submit(driver, "agreement")
    check("is active" in text(driver, "#agreement-status"), "changing only the legal name keeps the agreement")
    check(Select(driver.find_element(By.ID, "taxForm")).first_selected_option.text == "W-8BEN-E",
          "the tax form select shows the form on file")
    check("•••• 6819" in text(driver, "#bank-account"), "the bank account is shown masked")
    check("60161331926819" not in driver.page_source, "the full account number appears nowhere")
    shot(driver, args, "agreements")
    driver.get(base + f"/console/apps/{APP}/products/{PRODUCT}")
    check("available" in text(driver, "#availability-sandbox h3")
          and "not available" not in text(driver, "#availability-sandbox h3"), "the product sells in the sandbox")

    # The chart before and after a purchase.
    driver.get(base + "/console/money?environment=sandbox")
    before = int(text(driver, "#total-units"))

    # A tester buys through the test controls, from their page.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Customers"))
    fill(driver, {"email": TESTER, "password": "sandbox-pass"})
    submit(driver, "new-tester")
    check(TESTER in driver.title, "creating a tester opens their page")
    submit(driver, "buy")
    seen["buyNotice"] = notice(driver)
    check("bought" in seen["buyNotice"] and "no money moved" in seen["buyNotice"],
          "a purchase is confirmed at the top, and says the payment was simulated")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.timeline tbody tr")
    check(len(rows) == 1, "the purchase is on the tester's timeline")
    transaction_id = rows[0].get_attribute("id").removeprefix("transaction-")
    seen["transactionId"] = transaction_id

    driver.get(base + "/console/money?environment=sandbox")
    after = int(text(driver, "#total-units"))
    seen["units"] = [before, after]
    check(after == before + 1, "the chart counts the purchase")
    bars = [int(b.get_attribute("data-value")) for b in driver.find_elements(By.CSS_SELECTOR, "#units-chart .bar")]
    check(sum(bars) == after, "the chart's bars add up to the total")
    shot(driver, args, "money")
    driver.get(base + "/console/money")
    check("the sandbox has" in text(driver, "#sandbox-hint"),
          "an empty production Money page points to the sandbox's test purchases")

    # Find the customer by transaction id, and refund from their page.
    driver.get(base + "/console/customers")
    fill(driver, {"q": transaction_id})
    click_through(driver, driver.find_element(By.CSS_SELECTOR, "form[role=search] button"))
    click_through(driver, driver.find_element(By.LINK_TEXT, TESTER))
    click_through(driver, driver.find_element(By.CSS_SELECTOR, f"#transaction-{transaction_id} form button"))
    seen["refundNotice"] = notice(driver)
    check(seen["refundNotice"].startswith("Refunded USD ")
          and ("received REFUND" in seen["refundNotice"] or "on its way" in seen["refundNotice"]),
          "a refund says what was refunded and where its notification stands")
    seen["refunded"] = text(driver, f"#transaction-{transaction_id} .bad")
    check(seen["refunded"].startswith("refunded"), "the refund shows on the timeline")
    shot(driver, args, "customer")

    # The REFUND notification is in the log; resend it.
    driver.get(base + f"/console/notifications?app={APP}&environment=sandbox&type=REFUND")
    rows = driver.find_elements(By.CSS_SELECTOR, "#notifications tbody tr")
    check(len(rows) == 1, "the REFUND notification is in the log")
    click_through(driver, rows[0].find_element(By.CSS_SELECTOR, "button"))
    check("/console/notifications" in driver.current_url, "resending returns to the log")
    check(notice(driver).startswith("Sent REFUND"), "a resend says what became of it")
    shot(driver, args, "notifications")

    # A .storekit file Xcode wrote, uploaded from the import form's file picker (multipart/form-data, no script);
    # its subscription bought, then renewed from the tester's page.
    driver.get(base + f"/console/apps/{APP}/catalog")
    driver.find_element(By.ID, "upload").send_keys(os.path.abspath(args.storekit))
    submit(driver, "import")
    seen["imported"] = text(driver, "#import-report")
    check("com.example.coins.club.monthly" in seen["imported"], "the import report lists the subscription")
    shot(driver, args, "catalog")
    # A group and a subscription made in forms, its introductory offer, and offer codes for it.
    fill(driver, {"group-referenceName": "Gem Club", "group-name": "Gem Club"})
    submit(driver, "new-group")
    Select(driver.find_element(By.ID, "sub-groupId")).select_by_visible_text("Gem Club")
    fill(driver, {"sub-productId": "com.example.gems.monthly", "sub-referenceName": "Gems monthly",
                  "sub-duration": "P1M", "sub-tier": "3", "sub-displayName": "Gem Club",
                  "sub-description": "Gems every month"})
    submit(driver, "new-subscription")
    check(driver.current_url.endswith("/products/com.example.gems.monthly"), "a subscription is created in its group")
    fill(driver, {"intro-paymentMode": "free_trial", "intro-period": "P1W"})
    submit(driver, "introductory-offer")
    seen["introductoryOffer"] = text(driver, "#introductory-offers")
    check("free_trial" in seen["introductoryOffer"], "the introductory offer is set")
    fill(driver, {"winback-identifier": "welcome_back", "winback-paymentMode": "pay_as_you_go", "winback-tier": "1",
                  "winback-numberOfPeriods": "3", "winback-maximumMonths": "6"})
    submit(driver, "win-back-offer")
    seen["winBackOffers"] = text(driver, "#win-back-offers")
    check("welcome_back" in seen["winBackOffers"] and "lapsed 1–6 months" in seen["winBackOffers"],
          "the win-back offer is listed with who it is for")
    driver.get(base + f"/console/apps/{APP}/catalog")
    fill(driver, {"code-productId": "com.example.gems.monthly", "code-paymentMode": "free_trial", "code-count": "3"})
    submit(driver, "new-offer-codes")
    check(driver.page_source.count("com.example.gems.monthly (available)") == 3, "three offer codes are listed")

    driver.get(base + "/console/customers/sandbox/" + TESTER)
    Select(driver.find_element(By.ID, "product")).select_by_value(APP + " com.example.coins.club.monthly")
    submit(driver, "buy")
    rows = driver.find_elements(By.CSS_SELECTOR, "#subscriptions tbody tr")
    check(len(rows) == 1, "the subscription is on the tester's page")
    click_through(driver, rows[0].find_element(By.CSS_SELECTOR, 'button[value="renew"]'))
    club = [r for r in driver.find_elements(By.CSS_SELECTOR, "table.timeline tbody tr")
            if "com.example.coins.club.monthly" in r.text]
    seen["clubTransactions"] = len(club)
    check(len(club) == 2, "renewing now adds a renewal to the timeline")
    check("com.example.coins.club.monthly" in text(driver, "ul.entitlements"), "the subscription is an entitlement")
    # The subscriptions dashboard counts it, drawn from the ledger.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Subscriptions"))
    driver.get(base + "/console/subscriptions?environment=sandbox")
    seen["activeSubscriptions"] = text(driver, "#total-active")
    seen["dashboard"] = driver.find_element(By.TAG_NAME, "main").text[:1500]
    check(seen["activeSubscriptions"] == "1", "the dashboard counts the tester's active subscription")
    shot(driver, args, "subscriptions")
    driver.get(base + "/console/customers/sandbox/" + TESTER)

    # The tester's settings: Ask to Buy on (the app's next purchase will wait for approval on this page).
    driver.find_element(By.ID, "askToBuy").click()
    submit(driver, "tester-settings")
    check(driver.find_element(By.ID, "askToBuy").is_selected(), "Ask to Buy is saved")

    # The sandbox clock moves forward by a day.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Sandbox"))
    before_now = text(driver, "#sandbox-now")
    fill(driver, {"by": "1d"})
    submit(driver, "advance")
    seen["sandboxNow"] = [before_now, text(driver, "#sandbox-now")]
    check(seen["sandboxNow"][0] != seen["sandboxNow"][1], "advancing moves the sandbox clock")
    check("The sandbox clock now reads" in notice(driver), "the clock's move is confirmed at the top")
    # A refused form answers on its own page: the refusal at the top, no dead end.
    fill(driver, {"by": "soon"})
    submit(driver, "advance")
    refusal = driver.find_elements(By.ID, "refusal")
    seen["clockRefusal"] = refusal[0].text if refusal else ""
    check(driver.title.startswith("Sandbox") and seen["clockRefusal"].startswith("Not done")
          and in_view(driver, "#refusal"), "a refused clock change is shown on the Sandbox page itself")

    # A team key's private half is shown once, at creation.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Keys"))
    Select(driver.find_element(By.ID, "role")).select_by_visible_text("FINANCE")
    submit(driver, "new-team-key")
    check(driver.find_element(By.ID, "private-key").get_attribute("value").startswith("-----BEGIN PRIVATE KEY-----"),
          "a new key shows its private key")
    key_id = text(driver, "#key-id")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Keys"))
    check(key_id in text(driver, "#team-keys") and "PRIVATE KEY" not in driver.page_source,
          "the keys page lists the key without its private half")

    # The health page shows the life signs /metrics serves.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Health"))
    names = {e.text for e in driver.find_elements(By.CSS_SELECTOR, "#life-signs td:first-child code")}
    seen["lifeSigns"] = sorted(names)
    for name in ("kiosk_payments_total", "kiosk_store_events_total", "kiosk_notification_attempts_total",
                 "kiosk_scheduler_lag_seconds", "kiosk_database_pool_size", "kiosk_database_sessions"):
        check(name in names, f"the health page shows {name}")

    # Every action above is in the audit log.
    click_through(driver, driver.find_element(By.LINK_TEXT, "Audit log"))
    actions = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#audit tbody td:nth-child(3)")]
    seen["audit"] = actions
    for action in ("app.create", "product.create", "agreement.accept", "tester.create", "test.purchase",
                   "test.refund", "notification.resend", "catalog.import", "test.subscription", "sandbox.clock",
                   "team-key.create", "tester.settings", "group.create", "product.introductory-offer", "product.win-back-offer",
                   "offer-codes.create"):
        check(action in actions, f"the audit log records {action}")
    shot(driver, args, "audit")

    # On a phone's width, pages fit: nothing scrolls sideways but inside tables.
    driver.set_window_size(390, 844)
    for path in ("/console", f"/console/apps/{APP}/products/{PRODUCT}", "/console/customers/sandbox/" + TESTER,
                 "/console/money?environment=sandbox"):
        driver.get(base + path)
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 1, f"{path} fits a phone's width (overflows by {overflow}px)")
    shot(driver, args, "phone")
    driver.set_window_size(1280, 900)

    # A form posted without its CSRF token, with the session's own cookie, is refused.
    cookie = driver.get_cookie("kiosk_console")["value"]
    request = urllib.request.Request(base + "/console/apps", data=b"bundleId=com.example.evil&name=Evil",
                                     headers={"Cookie": "kiosk_console=" + cookie}, method="POST")
    try:
        urllib.request.urlopen(request)
        status = 200
    except urllib.error.HTTPError as error:
        status = error.code
    seen["withoutCsrf"] = status
    check(status == 403, "a form without its CSRF token is refused")

    checks(driver, base, args)

    # A forged session cookie sends the browser back to sign-in.
    driver.delete_cookie("kiosk_console")
    driver.add_cookie({"name": "kiosk_console", "value": cookie[:-1] + ("0" if cookie[-1] != "0" else "1"),
                       "path": "/console"})
    driver.get(base + "/console/audit")
    check("/console/sign-in" in driver.current_url, "a forged cookie is not a session")

    team(driver, base, args)


def checks(driver, base, args):
    """A `kiosk check` verdict, as the kit sends it, listed on the Checks page and opened: the failed story open
    with its steps, the delivery and the probe that failed it; the passed one closed."""
    delivery = {"notificationUUID": "f1", "type": "REFUND", "appAccountToken": "u2", "status": 200,
                "milliseconds": 14, "forged": False, "handling": "forward"}
    story = {"kind": "life", "notChecked": [], "notes": [], "seconds": 0.4}
    report = {
        "seed": 4711, "server": base, "bundleId": APP, "notificationURL": "http://127.0.0.1:9000/notifications",
        "seconds": 2.5, "probe": True,
        "stories": [
            dict(story, name="consumable", summary="3 consumables bought at once credit 3 × the amount", user="u1",
                 result="pass", steps=[{"title": "buy com.example.coins.100 ×3", "deliveries": []}]),
            dict(story, name="refund-consumable", summary="REFUND of a consumable takes its credit back", user="u2",
                 result="fail", reason="after REFUND: coins back to 0: coins 0 expected, the probe showed 100",
                 failedStep=2,
                 steps=[{"title": "refund transaction 2000000000000001", "deliveries": [delivery]},
                        {"title": "after REFUND: coins back to 0", "deliveries": [],
                         "probe": {"entitlements": [], "balances": {"coins": 100}},
                         "failure": "coins 0 expected, the probe showed 100"}]),
        ],
    }
    request = urllib.request.Request(
        base + f"/admin/v1/apps/{APP}/check-runs", data=json.dumps(report).encode(), method="POST",
        headers={"Authorization": "Bearer " + args.token, "Content-Type": "application/json"})
    recorded = json.loads(urllib.request.urlopen(request).read())
    driver.get(base + "/console")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Checks"))
    check("1 passed, 1 failed, 0 not made" in text(driver, "#checks"), "the run is listed with its counts")
    click_through(driver, driver.find_element(By.CSS_SELECTOR, f'#checks a[href="{recorded["consolePath"]}"]'))
    check("Failed" in text(driver, "#verdict"), "the run says it failed")
    failed = driver.find_element(By.ID, "story-refund-consumable")
    check(failed.get_attribute("open") is not None, "the failed story is open")
    check("REFUND → 200 in 14 ms" in failed.text, "its delivery and the server's answer are shown")
    check("coins 0 expected, the probe showed 100" in failed.text, "and what the probe showed against the story")
    check(driver.find_element(By.ID, "story-consumable").get_attribute("open") is None, "a passed story is closed")
    seen["checkRun"] = recorded["id"]
    shot(driver, args, "checks")


def team(driver, base, args):
    # An Admin adds a Developer; the temporary password is shown once.
    fill(driver, {"name": "Ann", "token": args.token})
    submit(driver, "sign-in-token")
    click_through(driver, driver.find_element(By.LINK_TEXT, "Team"))
    fill(driver, {"email": "dee@example.com", "name": "Dee Veloper"})
    driver.find_element(By.CSS_SELECTOR, "#new-user input[name=role_DEVELOPER]").click()
    submit(driver, "new-user")
    temporary = driver.find_element(By.ID, "temporary-password").get_attribute("value")
    check(len(temporary) == 19, "a temporary password is shown once")
    driver.get(base + "/console/team")
    check("dee@example.com" in text(driver, "#team"), "the team lists the new person")
    shot(driver, args, "team")
    click_through(driver, driver.find_element(By.CSS_SELECTOR, "form.signout button"))

    # They sign in with it and must choose their own password first.
    fill(driver, {"email": "dee@example.com", "password": temporary})
    submit(driver, "sign-in-user")
    check("Choose your password" in text(driver, "#password-heading"), "a temporary password leads to choosing one")
    driver.get(base + "/console/apps")
    check(driver.current_url.endswith("/console/account"), "no page opens before the password is chosen")
    shot(driver, args, "account")
    fill(driver, {"currentPassword": temporary, "newPassword": "a-long-secret", "confirmPassword": "a-long-secret"})
    submit(driver, "change-password")
    check(driver.title.startswith("Overview"), "with their own password they reach the overview")
    check("Dee Veloper (Developer)" in text(driver, "header .actor"), "the header names them and their role")
    navigation = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "header nav a")]
    seen["developerNavigation"] = navigation
    check("Money" not in navigation and "Team" not in navigation and "Sandbox" in navigation,
          "a Developer's navigation shows what their role may read")
    driver.get(base + "/console/money")
    check(driver.title.startswith("Not allowed") and "Finance" in text(driver, "main"),
          "Money is closed to a Developer, with who may open it")

    # Eight hours later on the store's clock the session has ended; signing in again comes back to the same page.
    urllib.request.urlopen(urllib.request.Request(args.clock + "?seconds=28801", method="POST"))
    driver.get(base + "/console/sandbox")
    check("/console/sign-in" in driver.current_url, "an expired session leads to sign-in")
    fill(driver, {"email": "dee@example.com", "password": "a-long-secret"})
    submit(driver, "sign-in-user")
    check(driver.current_url.endswith("/console/sandbox"), "signing in again returns to the page asked for")


if __name__ == "__main__":
    main()
