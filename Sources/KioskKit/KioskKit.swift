// TEMPORARY placeholder; KioskKit is written in its own branch.
