package numeric

// Wrap truncates x to its low bits bits and sign-extends the result: the
// two's-complement wrap-around of the signless integer types i8, i16, i32 and
// i64 (bits ≥ 64 returns x unchanged).
func Wrap(x int64, bits int) int64 {
	if bits >= 64 {
		return x
	}
	s := 64 - uint(bits)
	return x << s >> s
}

// MinInt and MaxInt return the smallest and largest value of the signed
// integer type of the given width.
func MinInt(bits int) int64 { return -1 << (uint(bits) - 1) }

// MaxInt returns the largest value of the signed integer type of the given width.
func MaxInt(bits int) int64 { return 1<<(uint(bits)-1) - 1 }
