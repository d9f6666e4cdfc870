/// The locales App Store Connect offers for in-app purchase names and descriptions.
///
/// Identifiers are written with an underscore (`zh_CN`); `normalized(_:)` also accepts a hyphen (`zh-CN`) and any
/// letter case, and maps App Store Connect's script spellings (`zh-Hans`, `zh-Hant`) to their storefront locale.
public enum AppStoreLocale {
    /// Every accepted locale identifier, in canonical `language_REGION` form.
    public static let all: [String] = [
        "ar_SA", "ca_ES", "cs_CZ", "da_DK", "de_DE", "el_GR", "en_AU", "en_CA", "en_GB", "en_US", "es_ES", "es_MX",
        "fi_FI", "fr_CA", "fr_FR", "he_IL", "hi_IN", "hr_HR", "hu_HU", "id_ID", "it_IT", "ja_JP", "ko_KR", "ms_MY",
        "nl_NL", "no_NO", "pl_PL", "pt_BR", "pt_PT", "ro_RO", "ru_RU", "sk_SK", "sv_SE", "th_TH", "tr_TR", "uk_UA",
        "vi_VN", "zh_CN", "zh_HK", "zh_TW",
    ]

    /// Script spellings App Store Connect uses for Chinese, and the locale Kiosk stores for each.
    private static let aliases: [String: String] = ["zh_hans": "zh_CN", "zh_hant": "zh_TW"]

    /// The canonical identifier for `text` (`en-us` → `en_US`, `zh-Hans` → `zh_CN`), or nil if it is not one of
    /// `all`.
    public static func normalized(_ text: String) -> String? {
        let underscored = String(text.map { $0 == "-" ? "_" : $0 })
        if let alias = aliases[underscored.lowercased()] { return alias }
        let parts = underscored.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let candidate = parts[0].lowercased() + "_" + parts[1].uppercased()
        return all.contains(candidate) ? candidate : nil
    }

    /// The locale App Store Connect uses for a bare language (`de` → `de_DE`, `fr` → `fr_FR`, `pt` → `pt_BR`), as
    /// Xcode writes them; nil when the text is not a language App Store Connect offers.
    public static func forLanguage(_ text: String) -> String? {
        let language = text.lowercased()
        guard language.count == 2 || language.count == 3, language.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return nil
        }
        if let preferred = preferredRegions[language] { return preferred }
        return all.first { $0.hasPrefix("\(language)_") }
    }

    /// Where a language has several App Store Connect locales, the one a bare language means.
    private static let preferredRegions = [
        "en": "en_US", "es": "es_ES", "fr": "fr_FR", "pt": "pt_BR", "zh": "zh_CN",
    ]
}
