/// SplitMix64: a small generator whose whole state is one number, so a seed replays the same choices.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// The generator of one `stream` (a trial's number, a block's number) of the campaign seeded `seed`; `salt`
    /// keeps the kinds of streams apart.
    public init(seed: UInt64, stream: Int, salt: UInt64) {
        state = seed ^ (UInt64(truncatingIfNeeded: stream) &* 0xD1B5_4A32_D192_ED03) ^ salt
        _ = next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
