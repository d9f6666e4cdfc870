extension Storefront {
    /// Every storefront Kiosk knows, ordered by code.
    ///
    /// The main storefronts' alpha-3 codes and ids (`storefront` / `storefrontId` in Apple's signed transactions)
    /// are all here; the others are Apple's
    /// long-published iTunes storefront ids (the `X-Apple-Store-Front` values). Currencies are the ones the App Store
    /// charges in, with ISO 4217 minor-unit exponents, except IDR (see `Currency.idr`). Euro countries share EUR.
    public static let all: [Storefront] = [
        Storefront(code: "ARE", appleId: 143481, name: "United Arab Emirates", currency: .aed, defaultLocale: "ar_AE"),
        Storefront(code: "AUS", appleId: 143460, name: "Australia", currency: .aud, defaultLocale: "en_AU"),
        Storefront(code: "AUT", appleId: 143445, name: "Austria", currency: .eur, defaultLocale: "de_AT"),
        Storefront(code: "BEL", appleId: 143446, name: "Belgium", currency: .eur, defaultLocale: "nl_BE"),
        Storefront(code: "BRA", appleId: 143503, name: "Brazil", currency: .brl, defaultLocale: "pt_BR"),
        Storefront(code: "CAN", appleId: 143455, name: "Canada", currency: .cad, defaultLocale: "en_CA"),
        Storefront(code: "CHE", appleId: 143459, name: "Switzerland", currency: .chf, defaultLocale: "de_CH"),
        Storefront(code: "CHL", appleId: 143483, name: "Chile", currency: .clp, defaultLocale: "es_CL"),
        Storefront(code: "CHN", appleId: 143465, name: "China mainland", currency: .cny, defaultLocale: "zh_CN"),
        Storefront(code: "COL", appleId: 143501, name: "Colombia", currency: .cop, defaultLocale: "es_CO"),
        Storefront(code: "CYP", appleId: 143557, name: "Cyprus", currency: .eur, defaultLocale: "el_CY"),
        Storefront(code: "CZE", appleId: 143489, name: "Czechia", currency: .czk, defaultLocale: "cs_CZ"),
        Storefront(code: "DEU", appleId: 143443, name: "Germany", currency: .eur, defaultLocale: "de_DE"),
        Storefront(code: "DNK", appleId: 143458, name: "Denmark", currency: .dkk, defaultLocale: "da_DK"),
        Storefront(code: "EGY", appleId: 143516, name: "Egypt", currency: .egp, defaultLocale: "ar_EG"),
        Storefront(code: "ESP", appleId: 143454, name: "Spain", currency: .eur, defaultLocale: "es_ES"),
        Storefront(code: "EST", appleId: 143518, name: "Estonia", currency: .eur, defaultLocale: "et_EE"),
        Storefront(code: "FIN", appleId: 143447, name: "Finland", currency: .eur, defaultLocale: "fi_FI"),
        Storefront(code: "FRA", appleId: 143442, name: "France", currency: .eur, defaultLocale: "fr_FR"),
        Storefront(code: "GBR", appleId: 143444, name: "United Kingdom", currency: .gbp, defaultLocale: "en_GB"),
        Storefront(code: "GRC", appleId: 143448, name: "Greece", currency: .eur, defaultLocale: "el_GR"),
        Storefront(code: "HKG", appleId: 143463, name: "Hong Kong", currency: .hkd, defaultLocale: "zh_HK"),
        Storefront(code: "HRV", appleId: 143494, name: "Croatia", currency: .eur, defaultLocale: "hr_HR"),
        Storefront(code: "HUN", appleId: 143482, name: "Hungary", currency: .huf, defaultLocale: "hu_HU"),
        Storefront(code: "IDN", appleId: 143476, name: "Indonesia", currency: .idr, defaultLocale: "id_ID"),
        Storefront(code: "IND", appleId: 143467, name: "India", currency: .inr, defaultLocale: "en_IN"),
        Storefront(code: "IRL", appleId: 143449, name: "Ireland", currency: .eur, defaultLocale: "en_IE"),
        Storefront(code: "ISR", appleId: 143491, name: "Israel", currency: .ils, defaultLocale: "he_IL"),
        Storefront(code: "ITA", appleId: 143450, name: "Italy", currency: .eur, defaultLocale: "it_IT"),
        Storefront(code: "JPN", appleId: 143462, name: "Japan", currency: .jpy, defaultLocale: "ja_JP"),
        Storefront(code: "KAZ", appleId: 143517, name: "Kazakhstan", currency: .kzt, defaultLocale: "ru_KZ"),
        Storefront(code: "KOR", appleId: 143466, name: "Republic of Korea", currency: .krw, defaultLocale: "ko_KR"),
        Storefront(code: "LTU", appleId: 143520, name: "Lithuania", currency: .eur, defaultLocale: "lt_LT"),
        Storefront(code: "LUX", appleId: 143451, name: "Luxembourg", currency: .eur, defaultLocale: "fr_LU"),
        Storefront(code: "LVA", appleId: 143519, name: "Latvia", currency: .eur, defaultLocale: "lv_LV"),
        Storefront(code: "MEX", appleId: 143468, name: "Mexico", currency: .mxn, defaultLocale: "es_MX"),
        Storefront(code: "MLT", appleId: 143521, name: "Malta", currency: .eur, defaultLocale: "en_MT"),
        Storefront(code: "MYS", appleId: 143473, name: "Malaysia", currency: .myr, defaultLocale: "ms_MY"),
        Storefront(code: "NGA", appleId: 143561, name: "Nigeria", currency: .ngn, defaultLocale: "en_NG"),
        Storefront(code: "NLD", appleId: 143452, name: "Netherlands", currency: .eur, defaultLocale: "nl_NL"),
        Storefront(code: "NOR", appleId: 143457, name: "Norway", currency: .nok, defaultLocale: "nb_NO"),
        Storefront(code: "NZL", appleId: 143461, name: "New Zealand", currency: .nzd, defaultLocale: "en_NZ"),
        Storefront(code: "PAK", appleId: 143477, name: "Pakistan", currency: .pkr, defaultLocale: "en_PK"),
        Storefront(code: "PER", appleId: 143507, name: "Peru", currency: .pen, defaultLocale: "es_PE"),
        Storefront(code: "PHL", appleId: 143474, name: "Philippines", currency: .php, defaultLocale: "en_PH"),
        Storefront(code: "POL", appleId: 143478, name: "Poland", currency: .pln, defaultLocale: "pl_PL"),
        Storefront(code: "PRT", appleId: 143453, name: "Portugal", currency: .eur, defaultLocale: "pt_PT"),
        Storefront(code: "QAT", appleId: 143498, name: "Qatar", currency: .qar, defaultLocale: "ar_QA"),
        Storefront(code: "ROU", appleId: 143487, name: "Romania", currency: .ron, defaultLocale: "ro_RO"),
        Storefront(code: "RUS", appleId: 143469, name: "Russia", currency: .rub, defaultLocale: "ru_RU"),
        Storefront(code: "SAU", appleId: 143479, name: "Saudi Arabia", currency: .sar, defaultLocale: "ar_SA"),
        Storefront(code: "SGP", appleId: 143464, name: "Singapore", currency: .sgd, defaultLocale: "en_SG"),
        Storefront(code: "SVK", appleId: 143496, name: "Slovakia", currency: .eur, defaultLocale: "sk_SK"),
        Storefront(code: "SVN", appleId: 143499, name: "Slovenia", currency: .eur, defaultLocale: "sl_SI"),
        Storefront(code: "SWE", appleId: 143456, name: "Sweden", currency: .sek, defaultLocale: "sv_SE"),
        Storefront(code: "THA", appleId: 143475, name: "Thailand", currency: .thb, defaultLocale: "th_TH"),
        Storefront(code: "TUR", appleId: 143480, name: "Türkiye", currency: .try, defaultLocale: "tr_TR"),
        Storefront(code: "TWN", appleId: 143470, name: "Taiwan", currency: .twd, defaultLocale: "zh_TW"),
        Storefront(code: "USA", appleId: 143441, name: "United States", currency: .usd, defaultLocale: "en_US"),
        Storefront(code: "VNM", appleId: 143471, name: "Vietnam", currency: .vnd, defaultLocale: "vi_VN"),
        Storefront(code: "ZAF", appleId: 143472, name: "South Africa", currency: .zar, defaultLocale: "en_ZA"),
    ]

    /// The storefront with this alpha-3 code (case-insensitive, surrounding spaces ignored), or nil.
    public static func named(_ code: String) -> Storefront? {
        let upper = code.trimmingSpaces().uppercased()
        return all.first { $0.code == upper }
    }

    /// The storefront with this Apple storefront id (`143441` is the United States), or nil.
    public static func named(appleId: Int) -> Storefront? {
        all.first { $0.appleId == appleId }
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines; Foundation-free.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
