//go:build !(386 || amd64 || arm64 || ppc64 || ppc64le || s390x)

package opencl

import (
	"encoding/binary"
	"unsafe"
)

// load64 and the others move words of bytes that need not be aligned,
// which the caller knows to be inside a string (loads) or a buffer
// (stores): on architectures that fault on unaligned words, byte by byte
// (the byte order is the same both ways, so any one does).

func load64(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8))
}

func store64(p unsafe.Pointer, x uint64) {
	binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(p), 8), x)
}

func load32(p unsafe.Pointer) uint32 {
	return binary.LittleEndian.Uint32(unsafe.Slice((*byte)(p), 4))
}

func store32(p unsafe.Pointer, x uint32) {
	binary.LittleEndian.PutUint32(unsafe.Slice((*byte)(p), 4), x)
}

func load16(p unsafe.Pointer) uint16 {
	return binary.LittleEndian.Uint16(unsafe.Slice((*byte)(p), 2))
}

func store16(p unsafe.Pointer, x uint16) {
	binary.LittleEndian.PutUint16(unsafe.Slice((*byte)(p), 2), x)
}
