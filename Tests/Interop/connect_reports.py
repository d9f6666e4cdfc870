"""Downloads a Sales Summary and a Financial Report from a running Kiosk with PyPI's `appstoreconnect` (an App
Store Connect API client nobody here wrote), pointed at Kiosk by its BASE_API constant, and prints what the files
hold as one JSON object.

Run by ConnectReportsTests with the .venv-connect Python .ci/run builds.
"""
import argparse
import csv
import io
import json
from decimal import Decimal

import appstoreconnect.api
from appstoreconnect import Api
from appstoreconnect.api import APIError


def table(text):
    """The rows of a tab-separated report (header first), up to the first blank line."""
    body = text.split("\n\n")[0]
    return list(csv.reader(io.StringIO(body), delimiter="\t"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--issuer-id", required=True)
    parser.add_argument("--vendor-number", required=True)
    parser.add_argument("--sales-date", required=True)
    parser.add_argument("--finance-month", required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--refused", action="store_true", help="expect the key to be refused; print Apple's error")
    arguments = parser.parse_args()
    appstoreconnect.api.BASE_API = arguments.base_url

    api = Api(arguments.key_id, arguments.key_file, arguments.issuer_id, submit_stats=False)
    result = {}
    if arguments.refused:
        try:
            api.download_sales_and_trends_reports(
                filters={"vendorNumber": arguments.vendor_number, "frequency": "DAILY",
                         "reportDate": arguments.sales_date})
            result["refused"] = "no error"
        except APIError as error:
            result["refused"] = {"status": getattr(error, "status_code", None), "detail": str(error)}
        print(json.dumps(result, indent=2, sort_keys=True))
        return

    sales = api.download_sales_and_trends_reports(
        filters={"vendorNumber": arguments.vendor_number, "frequency": "DAILY", "reportDate": arguments.sales_date})
    rows = table(sales)
    header, lines = rows[0], rows[1:]
    units = header.index("Units")
    proceeds = header.index("Developer Proceeds")
    result["sales"] = {
        "columns": header,
        "rows": len(lines),
        "units": sum(int(line[units]) for line in lines),
        "proceeds": str(sum(int(line[units]) * Decimal(line[proceeds]) for line in lines)),
        "countries": sorted(line[header.index("Country Code")] for line in lines),
    }

    finance = api.download_finance_reports(
        filters={"vendorNumber": arguments.vendor_number, "reportDate": arguments.finance_month,
                 "regionCode": arguments.region})
    rows = table(finance)
    header, lines = rows[0], rows[1:]
    trailer = dict(line.split("\t", 1) for line in finance.split("\n\n", 1)[1].strip().split("\n"))
    extended = header.index("Extended Partner Share")
    result["finance"] = {
        "columns": header,
        "rows": len(lines),
        "extendedPartnerShare": str(sum(Decimal(line[extended]) for line in lines)),
        "trailer": trailer,
    }

    # A day without sales is Apple's 404, and the client raises it as Apple's error detail.
    try:
        api.download_sales_and_trends_reports(
            filters={"vendorNumber": arguments.vendor_number, "frequency": "DAILY", "reportDate": "2020-01-01"})
        result["noSales"] = "no error"
    except APIError as error:
        result["noSales"] = {"status": getattr(error, "status_code", None), "detail": str(error)}

    # The Subscription Event report, asked for by its report type and version: that day had no subscription events.
    try:
        api.download_sales_and_trends_reports(
            filters={"vendorNumber": arguments.vendor_number, "frequency": "DAILY", "reportDate": arguments.sales_date,
                     "reportType": "SUBSCRIPTION_EVENT", "reportSubType": "SUMMARY", "version": "1_3"})
        result["noSubscriptionEvents"] = "no error"
    except APIError as error:
        result["noSubscriptionEvents"] = {"status": getattr(error, "status_code", None), "detail": str(error)}

    print(json.dumps(result, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
