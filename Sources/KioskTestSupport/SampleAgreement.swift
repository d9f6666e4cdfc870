/// Business details that complete the Paid Apps agreement in tests, benchmarks and campaigns: a company in the United
/// Kingdom with a valid example IBAN and a W-8BEN-E. One place, so every suite accepts the agreement the same way.
public enum SampleAgreement {
    /// The body of `POST /admin/v1/agreements/paid-apps/accept`.
    public static var json: [String: Any] {
        [
            "legalEntity": ["name": "Coin Shop Ltd", "country": "GBR"],
            "bankAccount": [
                "holderName": "Coin Shop Ltd", "accountNumber": "GB29 NWBK 6016 1331 9268 19", "currency": "GBP",
            ],
            "taxInformation": ["form": "W-8BEN-E", "taxId": "98-7654321"],
        ]
    }

    /// `kiosk agreements accept` with the same details.
    public static let commandLine: [String] = [
        "agreements", "accept", "--legal-name", "Coin Shop Ltd", "--country", "GBR",
        "--bank-account", "GB29 NWBK 6016 1331 9268 19", "--bank-currency", "GBP",
        "--tax-form", "W-8BEN-E", "--tax-id", "98-7654321",
    ]
}
