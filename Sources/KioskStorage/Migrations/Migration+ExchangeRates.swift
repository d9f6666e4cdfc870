import KioskSQL

extension Migration {
    /// Migration 12: the operator's exchange rates, each from its effective date: US dollars per unit of a currency
    /// in millionths, for adding sales in many currencies up in the console's charts.
    static let exchangeRates = Migration(
        version: 12,
        name: "exchange_rates",
        statements: [
            """
            CREATE TABLE exchange_rates (
                currency TEXT NOT NULL,
                effective_from BIGINT NOT NULL,
                usd_micros BIGINT NOT NULL,
                CONSTRAINT exchange_rates_pkey PRIMARY KEY (currency, effective_from)
            )
            """
        ]
    )
}
