//go:build 386 || amd64 || arm64 || ppc64 || ppc64le || s390x

package opencl

import "unsafe"

// load64 and the others move words of bytes that need not be aligned,
// which the caller knows to be inside a string (loads) or a buffer
// (stores): on these architectures, one instruction each.

func load64(p unsafe.Pointer) uint64     { return *(*uint64)(p) }
func store64(p unsafe.Pointer, x uint64) { *(*uint64)(p) = x }
func load32(p unsafe.Pointer) uint32     { return *(*uint32)(p) }
func store32(p unsafe.Pointer, x uint32) { *(*uint32)(p) = x }
func load16(p unsafe.Pointer) uint16     { return *(*uint16)(p) }
func store16(p unsafe.Pointer, x uint16) { *(*uint16)(p) = x }
