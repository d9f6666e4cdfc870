import KioskKit

// KioskCore and KioskKit both have a `Product`; KioskKit's enum `KioskKit` hides the module's name. These
// names, made where only KioskKit is imported, say which is meant.
typealias KitProduct = Product
typealias KitTransaction = Transaction
