/// Every error code Kiosk answers with, in one place, with the kind of failure it is (which decides the HTTP
/// status). The raw value is what goes on the wire (`{"error": {"code": …}}`) and never changes once published.
public enum ErrorCode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    // MARK: The catalog, its files and its rules

    case duplicateIntroductoryOffer = "duplicate_introductory_offer"
    case duplicateLocale = "duplicate_locale"
    case duplicateOfferIdentifier = "duplicate_offer_identifier"
    case familySharingNotSupported = "family_sharing_not_supported"
    case invalidAccountNumber = "invalid_account_number"
    case invalidAppName = "invalid_app_name"
    case invalidBundleId = "invalid_bundle_id"
    case invalidCatalogFile = "invalid_catalog_file"
    case invalidDescription = "invalid_description"
    case invalidDisplayName = "invalid_display_name"
    case invalidEmail = "invalid_email"
    case invalidIban = "invalid_iban"
    case invalidLocale = "invalid_locale"
    case invalidName = "invalid_name"
    case invalidNotificationUrl = "invalid_notification_url"
    case invalidOfferDates = "invalid_offer_dates"
    case invalidOfferPeriod = "invalid_offer_period"
    case invalidOfferPeriods = "invalid_offer_periods"
    case invalidPriceAmount = "invalid_price_amount"
    case invalidPriceTier = "invalid_price_tier"
    case invalidProductId = "invalid_product_id"
    case invalidReferenceName = "invalid_reference_name"
    case invalidReviewTransition = "invalid_review_transition"
    case invalidStorekitFile = "invalid_storekit_file"
    case invalidSubscriptionLevel = "invalid_subscription_level"
    case invalidTaxId = "invalid_tax_id"
    case invalidWinBackMonths = "invalid_win_back_months"
    case missingDuration = "missing_duration"
    case missingLocalization = "missing_localization"
    case missingOfferPrice = "missing_offer_price"
    case missingSubscriptionGroup = "missing_subscription_group"
    case offersRequireAutoRenewable = "offers_require_auto_renewable"
    case passwordTooLong = "password_too_long"
    case passwordTooCommon = "password_too_common"
    case passwordContainsEmail = "password_contains_email"
    case passwordTooShort = "password_too_short"
    case storekitExportFailed = "storekit_export_failed"
    case taxFormMismatch = "tax_form_mismatch"
    case unexpectedDuration = "unexpected_duration"
    case unexpectedSubscriptionGroup = "unexpected_subscription_group"
    case unknownCountry = "unknown_country"
    case unknownCurrency = "unknown_currency"
    case unknownStorefront = "unknown_storefront"
    case unknownSubscriptionGroup = "unknown_subscription_group"
    case unknownTaxForm = "unknown_tax_form"
    case winBackNothingEnded = "win_back_nothing_ended"
    case winBackOfferInactive = "win_back_offer_inactive"
    case winBackPaidTooLittle = "win_back_paid_too_little"
    case winBackStillSubscribed = "win_back_still_subscribed"
    case winBackTooLate = "win_back_too_late"
    case winBackTooSoon = "win_back_too_soon"
    case winBackWaitBetweenOffers = "win_back_wait_between_offers"

    // MARK: Signatures, certificates and receipts

    case appAppleIdRequired = "app_apple_id_required"
    case identityKeyInvalid = "identity_key_invalid"
    case identityKeyPermissions = "identity_key_permissions"
    case identityKeyUnreadable = "identity_key_unreadable"
    case identitySealFailed = "identity_seal_failed"
    case invalidHost = "invalid_host"
    case passwordHashParameters = "password_hash_parameters"
    case signingCertificateInvalid = "signing_certificate_invalid"
    case signingChainIncomplete = "signing_chain_incomplete"
    case signingChainInvalid = "signing_chain_invalid"
    case signingDirectoryNotDirectory = "signing_directory_not_directory"
    case signingFileUnreadable = "signing_file_unreadable"
    case signingIdentityCorrupt = "signing_identity_corrupt"
    case signingIdentityKeyWrong = "signing_identity_key_wrong"
    case signingKeyInvalid = "signing_key_invalid"
    case signingKeyMismatch = "signing_key_mismatch"
    case signingKeyPermissions = "signing_key_permissions"
    case signingLeafNotP256 = "signing_leaf_not_p256"
    case signingMarkerMissing = "signing_marker_missing"
    case signingRootNotSelfSigned = "signing_root_not_self_signed"
    case signingStoreWriteFailed = "signing_store_write_failed"
    case tlsRootMismatch = "tls_root_mismatch"
    case tlsRootUnreadable = "tls_root_unreadable"
    case tlsRootUnwritable = "tls_root_unwritable"

    // MARK: Storage

    case alreadyExists = "already_exists"

    // MARK: Requests and their bodies

    case badRequest = "bad_request"
    case bodyTooLarge = "body_too_large"
    case incompleteBody = "incomplete_body"
    case invalidCharacter = "invalid_character"
    case invalidJson = "invalid_json"
    case invalidType = "invalid_type"
    case invalidValue = "invalid_value"
    case malformedBody = "malformed_body"
    case missingBody = "missing_body"
    case missingField = "missing_field"
    case textTooLong = "text_too_long"
    case tlsCertificateUnreadable = "tls_certificate_unreadable"
    case tlsKeyMismatch = "tls_key_mismatch"
    case tlsKeyUnreadable = "tls_key_unreadable"
    case unknownField = "unknown_field"

    // MARK: The store: purchases, subscriptions, the console, the test controls and the admin API

    case accountNotFound = "account_not_found"
    case accountStorefrontUnknown = "account_storefront_unknown"
    case accountWrongEnvironment = "account_wrong_environment"
    case alreadyRevoked = "already_revoked"
    case alreadySubscribed = "already_subscribed"
    case appNotFound = "app_not_found"
    case applicationUsernameTooLong = "application_username_too_long"
    case askToBuyDeclined = "ask_to_buy_declined"
    case billingPlanNotOffered = "billing_plan_not_offered"
    case billingPlanNotSupported = "billing_plan_not_supported"
    case bundleIdMismatch = "bundle_id_mismatch"
    case checkRunNotFound = "check_run_not_found"
    case clockMovesBack = "clock_moves_back"
    case clockOutOfRange = "clock_out_of_range"
    case consoleMissing = "console_missing"
    case consoleUserNotFound = "console_user_not_found"
    case crossSiteForm = "cross_site_form"
    case csrfTokenInvalid = "csrf_token_invalid"
    case dataDirectoryUnusable = "data_directory_unusable"
    case duplicateAccountEmail = "duplicate_account_email"
    case duplicateBundleId = "duplicate_bundle_id"
    case duplicateConsoleUser = "duplicate_console_user"
    case duplicateGroup = "duplicate_group"
    case duplicateProductId = "duplicate_product_id"
    case duplicateTesterEmail = "duplicate_tester_email"
    case emailImmutable = "email_immutable"
    case groupNotEmpty = "group_not_empty"
    case groupNotFound = "group_not_found"
    case ineligibleForOffer = "ineligible_for_offer"
    case injectedFailure = "injected_failure"
    case insufficientFunds = "insufficient_funds"
    case invalidAction = "invalid_action"
    case invalidAdminToken = "invalid_admin_token"
    case invalidAutoRenewProduct = "invalid_auto_renew_product"
    case invalidBillingPlan = "invalid_billing_plan"
    case invalidCount = "invalid_count"
    case invalidCredentials = "invalid_credentials"
    case invalidCursor = "invalid_cursor"
    case invalidDate = "invalid_date"
    case invalidDecision = "invalid_decision"
    case invalidDeviceId = "invalid_device_id"
    case invalidDuration = "invalid_duration"
    case invalidEnvironment = "invalid_environment"
    case invalidExchangeRate = "invalid_exchange_rate"
    case invalidForm = "invalid_form"
    case invalidFormat = "invalid_format"
    case invalidFrequency = "invalid_frequency"
    case invalidGracePeriod = "invalid_grace_period"
    case invalidGrouping = "invalid_grouping"
    case invalidIdempotencyKey = "invalid_idempotency_key"
    case invalidNumber = "invalid_number"
    case invalidOfferSignature = "invalid_offer_signature"
    case invalidOutcome = "invalid_outcome"
    case invalidPaymentMode = "invalid_payment_mode"
    case invalidPercentage = "invalid_percentage"
    case invalidPeriod = "invalid_period"
    case invalidQuantity = "invalid_quantity"
    case invalidRate = "invalid_rate"
    case invalidReason = "invalid_reason"
    case invalidRegion = "invalid_region"
    case invalidReportDate = "invalid_report_date"
    case invalidRole = "invalid_role"
    case invalidSpan = "invalid_span"
    case invalidState = "invalid_state"
    case invalidSubscription = "invalid_subscription"
    case invalidTaxRate = "invalid_tax_rate"
    case invalidTier = "invalid_tier"
    case keyNotFound = "key_not_found"
    case localizationNotFound = "localization_not_found"
    case missingAdminToken = "missing_admin_token"
    case missingDate = "missing_date"
    case missingFile = "missing_file"
    case missingGroupName = "missing_group_name"
    case missingOfferParams = "missing_offer_params"
    case missingProduct = "missing_product"
    case missingProductId = "missing_product_id"
    case missingRoles = "missing_roles"
    case missingSession = "missing_session"
    case missingTester = "missing_tester"
    case noConsumptionReport = "no_consumption_report"
    case noConsumptionRequest = "no_consumption_request"
    case noNotificationUrl = "no_notification_url"
    case noOfferPrice = "no_offer_price"
    case noPriceInStorefront = "no_price_in_storefront"
    case noPriceIncreasePending = "no_price_increase_pending"
    case notASubscription = "not_a_subscription"
    case notAutoRenewable = "not_auto_renewable"
    case notFound = "not_found"
    case notRefunded = "not_refunded"
    case notShareable = "not_shareable"
    case notificationNotFound = "notification_not_found"
    case offerCodeIneligible = "offer_code_ineligible"
    case offerCodeInactive = "offer_code_inactive"
    case offerCodeRedeemed = "offer_code_redeemed"
    case offerCodeUnknown = "offer_code_unknown"
    case offerCodeWrongProduct = "offer_code_wrong_product"
    case offerConflict = "offer_conflict"
    case offerNonceReused = "offer_nonce_reused"
    case offerNotApplicable = "offer_not_applicable"
    case offerNotFound = "offer_not_found"
    case offerSignatureExpired = "offer_signature_expired"
    case offerSignatureMismatch = "offer_signature_mismatch"
    case offerTransactionNotCustomers = "offer_transaction_not_customers"
    case ownAdminAccess = "own_admin_access"
    /// Too many wrong passwords for the account, or one being checked at this moment.
    case tooManyAttempts = "too_many_attempts"
    case tooManyProducts = "too_many_products"
    case passwordUnchanged = "password_unchanged"
    case passwordsDiffer = "passwords_differ"
    case paymentDeclined = "payment_declined"
    case paymentNotFound = "payment_not_found"
    case paymentNotWaiting = "payment_not_waiting"
    case productDeleted = "product_deleted"
    case productIdDeleted = "product_id_deleted"
    case productIdImmutable = "product_id_immutable"
    case productNotAvailable = "product_not_available"
    case productNotFound = "product_not_found"
    case productWithoutGroup = "product_without_group"
    case purchaseInterrupted = "purchase_interrupted"
    case quantityNotAllowed = "quantity_not_allowed"
    case sessionInvalid = "session_invalid"
    case signingChainDiffers = "signing_chain_differs"
    case signingIdentityContended = "signing_identity_contended"
    case signingIdentityMissing = "signing_identity_missing"
    case signingIdentitySealed = "signing_identity_sealed"
    case subscriptionNotFound = "subscription_not_found"
    case subscriptionProductWithoutDuration = "subscription_product_without_duration"
    case subscriptionRecordMissing = "subscription_record_missing"
    case subscriptionState = "subscription_state"
    case testerNotFound = "tester_not_found"
    case tooManyIdentifiers = "too_many_identifiers"
    case tooManyStories = "too_many_stories"
    case transactionNotFound = "transaction_not_found"
    case typeImmutable = "type_immutable"
    case unknownAction = "unknown_action"
    case unknownApi = "unknown_api"
    case unknownApp = "unknown_app"
    case unknownClockAction = "unknown_clock_action"
    case unknownDecision = "unknown_decision"
    case unknownEnvironment = "unknown_environment"
    case unknownError = "unknown_error"
    case unknownLocale = "unknown_locale"
    case unknownOffer = "unknown_offer"
    case unknownOfferKey = "unknown_offer_key"
    case unknownProduct = "unknown_product"
    case unknownQueueEntry = "unknown_queue_entry"
    case unknownSubscriptionAction = "unknown_subscription_action"
    case unsupportedMediaType = "unsupported_media_type"
    case weakAdminToken = "weak_admin_token"
    case wrongPassword = "wrong_password"

    // MARK: The merchant server

    case configurationInvalid = "configuration_invalid"
    case configurationUnreadable = "configuration_unreadable"
    case degraded = "degraded"
    case idempotencyKeyReused = "idempotency_key_reused"
    case insufficientBalance = "insufficient_balance"
    case invalidAmount = "invalid_amount"
    case invalidDownloadUrl = "invalid_download_url"
    case invalidLifetime = "invalid_lifetime"
    case invalidNow = "invalid_now"
    case invalidSignature = "invalid_signature"
    case invalidSince = "invalid_since"
    case invalidToken = "invalid_token"
    case invalidUntil = "invalid_until"
    case invalidUserId = "invalid_user_id"
    case malformedSignedData = "malformed_signed_data"
    case missingUserToken = "missing_user_token"
    case noContent = "no_content"
    case notEntitled = "not_entitled"
    case orderOfAnotherUser = "order_of_another_user"
    case productNotConfigured = "product_not_configured"
    case receiptRefused = "receipt_refused"
    case serverApiNotConfigured = "server_api_not_configured"
    case storeNotConfigured = "store_not_configured"
    case storeRefused = "store_refused"
    case storeUnavailable = "store_unavailable"
    case storeUnreachable = "store_unreachable"
    case storeUntrusted = "store_untrusted"
    case tokenExpired = "token_expired"
    case transactionOfAnotherUser = "transaction_of_another_user"
    case unexpectedStoreAnswer = "unexpected_store_answer"
    case unknownFile = "unknown_file"
    case unknownOrder = "unknown_order"
    case unknownProductList = "unknown_product_list"
    case unknownTransaction = "unknown_transaction"
    case verificationUnavailable = "verification_unavailable"
    case wrongApp = "wrong_app"
    case wrongEnvironment = "wrong_environment"

    // MARK: kiosk check

    case invalidAnswerWithin = "invalid_answer_within"
    case invalidCheckFile = "invalid_check_file"
    case invalidGrant = "invalid_grant"
    case invalidUrl = "invalid_url"
    case missingEnvironmentVariable = "missing_environment_variable"
    case noProducts = "no_products"

    // MARK: Test support

    /// The class of failure, which decides the HTTP status.
    public var kind: KioskError.Kind {
        switch self {
        case .appAppleIdRequired, .applicationUsernameTooLong, .billingPlanNotOffered, .billingPlanNotSupported,
            .bundleIdMismatch, .invalidBillingPlan,
            .clockOutOfRange, .configurationInvalid, .configurationUnreadable, .dataDirectoryUnusable,
            .duplicateIntroductoryOffer, .duplicateLocale, .duplicateOfferIdentifier, .emailImmutable,
            .familySharingNotSupported, .identityKeyInvalid, .identityKeyPermissions, .identityKeyUnreadable,
            .identitySealFailed, .incompleteBody, .invalidAccountNumber, .invalidAction, .invalidAmount,
            .invalidAnswerWithin, .invalidAutoRenewProduct, .invalidBundleId, .invalidCharacter, .invalidCount,
            .invalidCursor, .invalidDate, .invalidDecision, .invalidDeviceId, .invalidDuration, .invalidEmail,
            .invalidEnvironment, .invalidExchangeRate, .invalidForm, .invalidFormat, .invalidFrequency,
            .invalidGracePeriod, .invalidGrant, .invalidGrouping, .invalidHost, .invalidIban, .invalidIdempotencyKey,
            .invalidJson, .invalidLifetime, .invalidLocale, .invalidName, .invalidNotificationUrl, .invalidNow,
            .invalidNumber, .invalidOfferDates, .invalidOfferPeriod, .invalidOfferPeriods, .invalidOutcome,
            .invalidPaymentMode, .invalidPercentage, .invalidPeriod, .invalidPriceAmount, .invalidPriceTier,
            .invalidProductId, .invalidQuantity, .invalidRate, .invalidReason, .invalidReferenceName, .invalidRegion,
            .invalidReportDate, .invalidRole, .invalidSince, .invalidSpan, .invalidState, .invalidSubscription,
            .invalidSubscriptionLevel, .invalidTaxId, .invalidTaxRate, .invalidTier, .invalidType, .invalidUntil,
            .invalidUrl, .invalidUserId, .invalidValue, .invalidWinBackMonths, .malformedBody, .malformedSignedData,
            .missingBody, .missingDate, .missingDuration, .missingEnvironmentVariable, .missingField, .missingFile,
            .missingGroupName, .missingLocalization, .missingOfferPrice, .missingProduct, .missingRoles,
            .missingSubscriptionGroup, .missingTester, .noProducts, .notASubscription, .notAutoRenewable,
            .offersRequireAutoRenewable, .ownAdminAccess, .passwordHashParameters, .passwordTooLong, .passwordTooShort,
            .passwordTooCommon, .passwordContainsEmail,
            .passwordUnchanged, .passwordsDiffer, .productIdImmutable, .receiptRefused, .signingCertificateInvalid,
            .signingChainDiffers, .signingChainIncomplete, .signingChainInvalid, .signingDirectoryNotDirectory,
            .signingFileUnreadable, .signingIdentityCorrupt, .signingIdentityKeyWrong, .signingIdentityMissing,
            .signingIdentitySealed, .signingKeyInvalid, .signingKeyMismatch, .signingKeyPermissions,
            .signingLeafNotP256, .signingMarkerMissing, .signingRootNotSelfSigned, .signingStoreWriteFailed,
            .storekitExportFailed, .taxFormMismatch, .textTooLong, .tlsCertificateUnreadable, .tlsKeyMismatch,
            .tlsKeyUnreadable, .tlsRootMismatch, .tlsRootUnreadable, .tlsRootUnwritable, .tooManyIdentifiers,
            .tooManyStories, .typeImmutable, .unexpectedDuration, .unexpectedSubscriptionGroup, .unknownApi,
            .unknownClockAction, .unknownCountry, .unknownCurrency, .unknownError, .unknownField, .unknownLocale,
            .unknownStorefront, .unknownSubscriptionAction, .unknownSubscriptionGroup, .unknownTaxForm,
            .unknownTransaction, .unsupportedMediaType, .weakAdminToken, .wrongApp, .wrongEnvironment, .wrongPassword,
            .invalidStorekitFile, .invalidCatalogFile, .invalidAppName, .invalidDescription, .invalidDisplayName,
            .winBackNothingEnded, .winBackOfferInactive, .winBackPaidTooLittle, .winBackStillSubscribed,
            .winBackTooLate, .winBackTooSoon, .winBackWaitBetweenOffers, .badRequest, .storeRefused, .invalidSignature,
            .ineligibleForOffer, .invalidOfferSignature, .missingOfferParams, .noOfferPrice, .offerCodeRedeemed,
            .offerCodeIneligible, .offerCodeInactive,
            .offerCodeUnknown, .offerCodeWrongProduct, .offerConflict, .offerNonceReused, .offerNotApplicable,
            .offerSignatureExpired, .offerSignatureMismatch, .offerTransactionNotCustomers, .unknownOffer,
            .unknownOfferKey, .missingProductId, .quantityNotAllowed,
            .invalidCheckFile:
            .invalidInput
        case .accountStorefrontUnknown, .alreadyExists, .alreadyRevoked, .alreadySubscribed, .clockMovesBack,
            .duplicateBundleId, .duplicateConsoleUser, .duplicateGroup, .duplicateProductId, .groupNotEmpty,
            .tooManyProducts,
            .idempotencyKeyReused, .insufficientBalance, .insufficientFunds, .invalidReviewTransition,
            .noConsumptionRequest, .noNotificationUrl, .noPriceInStorefront, .noPriceIncreasePending, .notRefunded,
            .notShareable, .paymentDeclined, .paymentNotWaiting, .productIdDeleted, .productNotAvailable,
            .productNotConfigured, .productWithoutGroup, .signingIdentityContended, .subscriptionProductWithoutDuration,
            .subscriptionRecordMissing, .subscriptionState, .duplicateTesterEmail, .duplicateAccountEmail,
            .purchaseInterrupted, .askToBuyDeclined:
            .conflict
        case .accountNotFound, .appNotFound, .checkRunNotFound, .consoleUserNotFound, .groupNotFound, .keyNotFound,
            .localizationNotFound, .noConsumptionReport, .noContent, .notFound, .notificationNotFound, .offerNotFound,
            .paymentNotFound, .productDeleted, .productNotFound, .subscriptionNotFound, .testerNotFound,
            .transactionNotFound, .unknownAction, .unknownApp, .unknownDecision, .unknownEnvironment, .unknownFile,
            .unknownOrder, .unknownProduct, .unknownProductList, .unknownQueueEntry:
            .notFound
        case .consoleMissing, .degraded, .injectedFailure, .serverApiNotConfigured, .storeNotConfigured,
            .storeUnavailable, .storeUnreachable, .storeUntrusted, .unexpectedStoreAnswer, .verificationUnavailable:
            .unavailable
        case .accountWrongEnvironment, .crossSiteForm, .csrfTokenInvalid, .invalidDownloadUrl, .notEntitled,
            .orderOfAnotherUser, .transactionOfAnotherUser, .tooManyAttempts:
            .forbidden
        case .invalidAdminToken, .invalidCredentials, .missingAdminToken, .missingSession, .missingUserToken,
            .sessionInvalid, .invalidToken, .tokenExpired:
            .unauthorized
        case .bodyTooLarge:
            .tooLarge
        }
    }

    /// The code as on the wire.
    public var description: String { rawValue }
}
