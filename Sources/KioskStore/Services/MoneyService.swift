import Foundation
import KioskCore
import KioskStorage

/// The store's money: tax rules, exchange rates, the Small Business Program, proceeds, and the reports of App Store
/// Connect (sales, financial, subscription events) made from the money events every sale and refund records.
public struct MoneyService: Sendable {
    let database: any KioskDatabase
    let clock: any KioskClock

    public init(database: any KioskDatabase, clock: any KioskClock) {
        self.database = database
        self.clock = clock
    }
}

extension MoneyService {
    /// Every storefront's tax rule in force now (the operator's, else the built-in default), and the operator's
    /// rules with their effective dates, past and future.
    public func taxRules() async throws -> (inForce: [TaxRule], configured: [TaxRule]) {
        let now = clock.now()
        let configured = try await database.transaction { tx in try await tx.taxRules() }
        let inForce = Storefront.all.map { TaxRule.inForce(for: $0.code, at: now, among: configured) }
        return (inForce, configured)
    }

    /// Sets `storefront`'s tax from `effectiveFrom` (now when nil) on; sales already recorded keep their amounts.
    public func setTaxRule(storefront code: String, pricesIncludeTax: Bool, rateBasisPoints: Int, effectiveFrom: Date?)
        async throws -> TaxRule
    {
        guard let storefront = Storefront.named(code) else {
            throw KioskError(
                .unknownStorefront, "'\(code.prefix(16))' is not a storefront Kiosk knows.", field: "storefront",
                fix: "Use a three-letter code such as GBR; `kiosk tax list` shows them all.")
        }
        guard TaxRule.rateRange.contains(rateBasisPoints) else {
            throw KioskError(
                .invalidTaxRate, "A tax rate is from 0 to 10000 basis points (0–100%); it was \(rateBasisPoints).",
                field: "rateBasisPoints", fix: "Give 2000 for 20%, 810 for 8.1%.")
        }
        let rule = TaxRule(
            storefront: storefront.code, effectiveFrom: effectiveFrom ?? clock.now(),
            pricesIncludeTax: pricesIncludeTax,
            rateBasisPoints: rateBasisPoints)
        try await database.transaction { tx in try await tx.setTaxRule(rule) }
        return rule
    }

    /// Enrols the developer in the Small Business Program from `since` on (15% commission on sales from then), or
    /// ends the enrolment when `since` is nil.
    public func setSmallBusinessProgram(since: Date?) async throws -> (
        agreement: PaidAppsAgreement, vendorNumber: String
    ) {
        try await database.transaction { tx in
            var agreement = try await CatalogService.agreement(in: tx)
            agreement.smallBusinessProgramSince = since
            try await CatalogService.save(agreement, in: tx)
            return (agreement, try await TeamService.vendorNumber(in: tx))
        }
    }

    /// What a sale of `product` at each of its prices is worth today: the tax in force in the storefront and the
    /// commission a first sale pays (30%, or 15% under the Small Business Program).
    public func proceeds(of product: Product) async throws -> [String: Proceeds] {
        let now = clock.now()
        let (rules, agreement) = try await database.transaction { tx in
            (try await tx.taxRules(), try await CatalogService.agreement(in: tx))
        }
        let commission = Commission.rate(
            at: now, smallBusinessSince: agreement.smallBusinessProgramSince, paidPeriods: nil)
        var proceeds: [String: Proceeds] = [:]
        for storefront in Storefront.all {
            guard let price = product.pricing.price(in: storefront) else { continue }
            proceeds[storefront.code] = Proceeds.of(
                priceMinorUnits: price, tax: TaxRule.inForce(for: storefront.code, at: now, among: rules),
                commissionBasisPoints: commission.basisPoints)
        }
        return proceeds
    }
}

extension MoneyService {
    /// The environment's money events in `from..<to`, by time.
    public func moneyEvents(environment: StoreEnvironment, from: Date, to: Date) async throws -> [MoneyEvent] {
        try await database.transaction { tx in try await tx.moneyEvents(environment: environment, from: from, to: to) }
    }
}

extension MoneyService {
    /// The Developer column of reports.
    static let developerName = "Kiosk"

    /// App Store Connect's Sales Summary report of the period `date` names at `frequency` (production sales only;
    /// a period not over yet gives the sales so far).
    public func salesReport(frequency: ReportFrequency, date: String) async throws -> String {
        guard let span = frequency.span(named: date) else {
            throw KioskError(
                .invalidReportDate, "'\(date.prefix(20))' is not a \(frequency.rawValue.lowercased()) report date.",
                field: "date", fix: "Give it as \(frequency.example).")
        }
        return try await salesReport(span: span).text
    }

    /// The Sales Summary report of `span`, and how many rows it has.
    func salesReport(span: DateInterval) async throws -> (text: String, rows: Int) {
        let (events, products) = try await reportInputs(span)
        let text = SalesSummaryReport.make(
            events: events, span: span, developer: Self.developerName, products: products)
        return (text, text.split(separator: "\n").count - 1)
    }

    /// App Store Connect's Financial Report of `month` (`2026-11`) and `region` (`ZZ` for all).
    public func financialReport(month: String, region: String) async throws -> String {
        guard let span = ReportFrequency.monthly.span(named: month) else {
            throw KioskError(
                .invalidReportDate, "'\(month.prefix(20))' is not a month.", field: "month",
                fix: "Give it as 2026-11.")
        }
        guard FinancialReport.regionCodes.contains(region) else {
            throw KioskError(
                .invalidRegion, "'\(region.prefix(8))' is not a region code.", field: "region",
                fix: "Use ZZ for all, or one of \(FinancialReport.regionCodes.sorted().joined(separator: ", ")).")
        }
        return try await financialReport(span: span, region: region).text
    }

    /// The Financial Report of `span` and `region`, and how many rows it has.
    func financialReport(span: DateInterval, region: String) async throws -> (text: String, rows: Int) {
        let (events, products) = try await reportInputs(span)
        let text = FinancialReport.make(
            events: events, month: span, regionCode: region, developer: Self.developerName, products: products)
        let rows = text.split(separator: "\n").first { $0.hasPrefix("Total_Rows\t") }.flatMap { Int($0.dropFirst(11)) }
        return (text, rows ?? 0)
    }

    /// The production money events of `span`, and what reports show of every product.
    private func reportInputs(_ span: DateInterval) async throws
        -> ([MoneyEvent], [String: SalesSummaryReport.ProductInfo])
    {
        try await database.transaction { tx in
            let events = try await tx.moneyEvents(environment: .production, from: span.start, to: span.end)
            var products: [String: SalesSummaryReport.ProductInfo] = [:]
            for app in try await tx.apps() {
                for product in try await tx.products(appId: app.id) {
                    products["\(app.id)/\(product.productId)"] = SalesSummaryReport.ProductInfo(
                        referenceName: product.referenceName, bundleId: app.bundleId,
                        appleIdentifier: StoreLedger.itemId(appId: app.id, productId: product.productId),
                        duration: product.duration)
                }
            }
            return (events, products)
        }
    }
}

extension MoneyService {
    /// The configured exchange rates, by currency and effective date.
    public func exchangeRates() async throws -> [ExchangeRate] {
        try await database.transaction { tx in try await tx.exchangeRates() }
    }

    /// Sets what one unit of `currency` is worth in US dollars (`usdPerUnit`, a decimal with at most six places)
    /// from `effectiveFrom` (now when nil) on.
    public func setExchangeRate(currency code: String, usdPerUnit: String, effectiveFrom: Date?) async throws
        -> ExchangeRate
    {
        let currency = code.uppercased()
        guard Storefront.all.contains(where: { $0.currency.code == currency }),
            currency != ExchangeRate.reportingCurrency
        else {
            throw KioskError(
                .unknownCurrency, "'\(code.prefix(8))' is not a currency of a storefront (USD needs no rate).",
                field: "currency", fix: "Use an ISO 4217 code such as GBP or EUR.")
        }
        guard let micros = ExchangeRate.micros(decimal: usdPerUnit) else {
            throw KioskError(
                .invalidExchangeRate,
                "'\(usdPerUnit.prefix(20))' is not a rate: give US dollars per unit as a decimal with at most six "
                    + "places, above 0.", field: "usdPerUnit", fix: "Such as 1.27 for GBP or 0.0064 for JPY.")
        }
        let rate = ExchangeRate(currency: currency, effectiveFrom: effectiveFrom ?? clock.now(), usdMicros: micros)
        try await database.transaction { tx in try await tx.setExchangeRate(rate) }
        return rate
    }

    /// The environment's sales in `from..<to` for the console's charts.
    public func moneySeries(environment: StoreEnvironment, from: Date, to: Date, by grouping: MoneySeries.Grouping)
        async throws -> MoneySeries
    {
        let (events, rates) = try await database.transaction { tx in
            (try await tx.moneyEvents(environment: environment, from: from, to: to), try await tx.exchangeRates())
        }
        return MoneySeries.make(events, by: grouping, rates: rates)
    }
}
